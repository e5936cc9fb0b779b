package main

import (
	"reflect"
	"testing"
)

func TestGraphFigures(t *testing.T) {
	tests := []struct {
		name   string
		nodes  []string
		edges  [][2]string
		back   [][2]string
		layers int
		cycles [][]string
	}{
		{name: "no edges", nodes: []string{"a", "b"}, layers: 1},
		{name: "chain", nodes: []string{"a", "b", "c"},
			edges: [][2]string{{"a", "b"}, {"b", "c"}}, layers: 3},
		{name: "diamond", nodes: []string{"a", "b", "c", "d"},
			edges: [][2]string{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}, {"a", "d"}}, layers: 3},
		{name: "pair cycle above a leaf", nodes: []string{"a", "b", "c"},
			edges:  [][2]string{{"a", "b"}, {"b", "a"}, {"b", "c"}},
			back:   [][2]string{{"a", "b"}, {"b", "a"}},
			layers: 2, cycles: [][]string{{"a", "b"}}},
		{name: "three-file cycle counts only its edges", nodes: []string{"a", "b", "c", "d"},
			edges:  [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}, {"d", "a"}},
			back:   [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}},
			layers: 2, cycles: [][]string{{"a", "b", "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graph{nodes: tt.nodes}
			for _, e := range tt.edges {
				g.add(e[0], e[1])
			}
			comps := g.sccs()
			if got := g.backRefs(comps); !reflect.DeepEqual(got, tt.back) {
				t.Errorf("backRefs = %v, want %v", got, tt.back)
			}
			if got := g.layers(comps); got != tt.layers {
				t.Errorf("layers = %d, want %d", got, tt.layers)
			}
			var cycles [][]string
			for _, c := range comps {
				if len(c) > 1 {
					cycles = append(cycles, c)
				}
			}
			if !reflect.DeepEqual(cycles, tt.cycles) {
				t.Errorf("cycles = %v, want %v", cycles, tt.cycles)
			}
		})
	}
}
