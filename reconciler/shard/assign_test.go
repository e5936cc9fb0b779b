package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomNames(r *rand.Rand, prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%x", prefix, r.Uint32())
	}
	return out
}

// checkBalanced fails unless every key has one of members and the loads
// differ by at most one.
func checkBalanced(t *testing.T, what string, keys, members []string, a map[string]string) {
	t.Helper()
	load := map[string]int{}
	for _, k := range keys {
		if !slices.Contains(members, a[k]) {
			t.Fatalf("%s: key %s owned by %q, not a member", what, k, a[k])
		}
		load[a[k]]++
	}
	lo, hi := len(keys), 0
	for _, m := range members {
		lo, hi = min(lo, load[m]), max(hi, load[m])
	}
	if hi-lo > 1 || len(a) != len(keys) {
		t.Fatalf("%s: loads %v are not balanced", what, load)
	}
}

// movedOnlyTo fails when a key moved to another member than to.
func movedOnlyTo(t *testing.T, what string, before, after map[string]string, to string) int {
	t.Helper()
	n := 0
	for k, o := range after {
		if before[k] != o {
			n++
			if o != to && to != "" {
				t.Fatalf("%s: %s moved from %s to %s", what, k, before[k], o)
			}
		}
	}
	return n
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestAssignBalancedAndMovesOnlyItsShare: over many random fleets and
// member sets, the assignment is balanced, is a fixed point of itself
// (members that hold what they were assigned keep it), and a member that
// joins moves only what it takes (at most ceil(n/(N+1)) keys, only to
// it), a member that leaves only its own keys (at most ceil(n/N)).
func TestAssignBalancedAndMovesOnlyItsShare(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 9))
	worstJoin, worstLeave := map[[2]int]int{}, map[[2]int]int{}
	for trial := range 3000 {
		n, nm := 1+r.IntN(60), 1+r.IntN(8)
		if trial%3 == 0 {
			n, nm = 9, 3
		}
		keys, members := randomNames(r, "c", n), randomNames(r, "regatta", nm)
		what := fmt.Sprintf("trial %d (%d keys, %d members)", trial, n, nm)
		a := Assign(keys, members, nil)
		checkBalanced(t, what, keys, members, a)
		if movedOnlyTo(t, what+" again", a, Assign(keys, members, a), "-") != 0 {
			t.Fatalf("%s: an assignment held is not kept", what)
		}
		newcomer := fmt.Sprintf("new-%d", trial)
		joined := Assign(keys, append(slices.Clone(members), newcomer), a)
		checkBalanced(t, what+" join", keys, append(slices.Clone(members), newcomer), joined)
		j := movedOnlyTo(t, what+" join", a, joined, newcomer)
		if j > ceilDiv(n, nm+1) {
			t.Fatalf("%s: join moved %d keys, want <= %d", what, j, ceilDiv(n, nm+1))
		}
		worstJoin[[2]int{n, nm + 1}] = max(worstJoin[[2]int{n, nm + 1}], j)
		if nm == 1 {
			continue
		}
		gone := members[r.IntN(nm)]
		rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == gone })
		left := Assign(keys, rest, a)
		checkBalanced(t, what+" leave", keys, rest, left)
		l := moved(a, left)
		if l != count(a, gone) || l > ceilDiv(n, nm) {
			t.Fatalf("%s: leave of %s moved %d keys, it owned %d", what, gone, l, count(a, gone))
		}
		for k, o := range a {
			if o != gone && left[k] != o {
				t.Fatalf("%s: leave moved %s, which %s owned", what, k, o)
			}
		}
		worstLeave[[2]int{n, nm}] = max(worstLeave[[2]int{n, nm}], l)
	}
	t.Logf("9 keys: worst join of a 4th member moved %d, worst leave of one of 3 moved %d", worstJoin[[2]int{9, 4}], worstLeave[[2]int{9, 3}])
}

func count(a map[string]string, m string) int {
	n := 0
	for _, o := range a {
		if o == m {
			n++
		}
	}
	return n
}

// TestAssignRestartOfOneOfThree is the acceptance's case: 9 clusters, 3
// replicas, one dies (the two others take its clusters) and comes back:
// it takes 3 clusters back and nothing else moves, on any fleet.
func TestAssignRestartOfOneOfThree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for trial := range 2000 {
		keys, ids := randomNames(r, "cluster", 9), randomNames(r, "regatta", 3)
		three := Assign(keys, ids, nil)
		victim := ids[r.IntN(3)]
		two := Assign(keys, slices.DeleteFunc(slices.Clone(ids), func(m string) bool { return m == victim }), three)
		back := Assign(keys, ids, two)
		if m := movedOnlyTo(t, "restart", two, back, victim); m != 3 {
			t.Fatalf("trial %d: restart moved %d of 9 clusters, want 3", trial, m)
		}
	}
}

// TestAssignKeyChangesMoveLittle: adding or removing one key moves at
// most one other key (balance may need one to change hands).
func TestAssignKeyChangesMoveLittle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for trial := range 2000 {
		keys, members := randomNames(r, "c", 2+r.IntN(40)), randomNames(r, "regatta", 1+r.IntN(6))
		a := Assign(keys, members, nil)
		added := Assign(append(slices.Clone(keys), "added"), members, a)
		delete(added, "added")
		if m := moved(a, added); m > 1 {
			t.Fatalf("trial %d: adding a key moved %d others", trial, m)
		}
		removed := Assign(keys[1:], members, a)
		checkBalanced(t, "remove", keys[1:], members, removed)
		if m := moved(removed, a); m > 1 {
			t.Fatalf("trial %d: removing a key moved %d others", trial, m)
		}
	}
}

// TestAssignWithoutHoldersIsNamesOnly: with nothing held, the order of
// members and keys does not matter; a key whose holder is no member is
// placed as if unheld.
func TestAssignWithoutHoldersIsNamesOnly(t *testing.T) {
	keys, ids := names("cluster", 50), names("regatta", 4)
	a := Assign(keys, ids, nil)
	rk, ri := slices.Clone(keys), slices.Clone(ids)
	slices.Reverse(rk)
	slices.Reverse(ri)
	if moved(a, Assign(rk, ri, map[string]string{keys[0]: "gone"})) != 0 {
		t.Fatal("the order of names or a departed holder changed owners")
	}
	if len(Assign(keys, nil, nil)) != 0 {
		t.Fatal("no members must give no owners")
	}
}
