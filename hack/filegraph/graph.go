package main

import "sort"

// graph is a directed graph of file names; edges[a][b] means a uses b.
type graph struct {
	nodes []string
	edges map[string]map[string]bool
}

func (g *graph) add(from, to string) {
	if g.edges == nil {
		g.edges = map[string]map[string]bool{}
	}
	if g.edges[from] == nil {
		g.edges[from] = map[string]bool{}
	}
	g.edges[from][to] = true
}

func (g graph) count() int {
	n := 0
	for _, tos := range g.edges {
		n += len(tos)
	}
	return n
}

// targets returns the sorted successors of n.
func (g graph) targets(n string) []string {
	var out []string
	for t := range g.edges[n] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// sccs returns the strongly connected components (Tarjan), each sorted,
// in reverse topological order: a component comes after those it uses.
func (g graph) sccs() [][]string {
	t := tarjan{g: g, index: map[string]int{}, low: map[string]int{}, on: map[string]bool{}}
	nodes := append([]string(nil), g.nodes...)
	sort.Strings(nodes)
	for _, n := range nodes {
		if _, seen := t.index[n]; !seen {
			t.visit(n)
		}
	}
	return t.out
}

type tarjan struct {
	g     graph
	next  int
	index map[string]int
	low   map[string]int
	on    map[string]bool
	stack []string
	out   [][]string
}

func (t *tarjan) visit(n string) {
	t.index[n], t.low[n] = t.next, t.next
	t.next++
	t.stack = append(t.stack, n)
	t.on[n] = true
	for _, m := range t.g.targets(n) {
		if _, seen := t.index[m]; !seen {
			t.visit(m)
			t.low[n] = min(t.low[n], t.low[m])
		} else if t.on[m] {
			t.low[n] = min(t.low[n], t.index[m])
		}
	}
	if t.low[n] != t.index[n] {
		return
	}
	var comp []string
	for {
		m := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.on[m] = false
		comp = append(comp, m)
		if m == n {
			break
		}
	}
	sort.Strings(comp)
	t.out = append(t.out, comp)
}

// componentOf maps each node to the index of its component.
func componentOf(comps [][]string) map[string]int {
	of := map[string]int{}
	for i, c := range comps {
		for _, n := range c {
			of[n] = i
		}
	}
	return of
}

// backRefs lists the edges whose ends share a component, sorted.
func (g graph) backRefs(comps [][]string) [][2]string {
	of := componentOf(comps)
	var out [][2]string
	for from := range g.edges {
		for _, to := range g.targets(from) {
			if of[from] == of[to] {
				out = append(out, [2]string{from, to})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

// layers is the number of nodes on the longest path of the component
// DAG; comps must be in reverse topological order (as sccs returns them).
func (g graph) layers(comps [][]string) int {
	of := componentOf(comps)
	layer := make([]int, len(comps))
	most := 0
	for i, c := range comps {
		layer[i] = 1
		for _, n := range c {
			for _, m := range g.targets(n) {
				if j := of[m]; j != i {
					layer[i] = max(layer[i], layer[j]+1)
				}
			}
		}
		most = max(most, layer[i])
	}
	return most
}
