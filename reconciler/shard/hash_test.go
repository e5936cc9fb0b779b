package shard

import (
	"fmt"
	"testing"
)

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func moved(a, b map[string]string) int {
	n := 0
	for k, v := range a {
		if b[k] != v {
			n++
		}
	}
	return n
}

func TestOwnerIsStableAndSpread(t *testing.T) {
	keys := names("cluster", 3000)
	members := []string{"regatta-0", "regatta-1", "regatta-2"}
	a := plain(keys, members)
	b := plain(keys, []string{"regatta-2", "regatta-0", "regatta-1"})
	if moved(a, b) != 0 {
		t.Fatal("the order of members changed owners")
	}
	count := map[string]int{}
	for _, o := range a {
		count[o]++
	}
	for _, m := range members {
		if count[m] < 850 || count[m] > 1150 {
			t.Errorf("%s owns %d of 3000 keys, want about 1000", m, count[m])
		}
	}
	if Owner("x", nil) != "" {
		t.Error("no members must give no owner")
	}
}

func TestJoinAndLeaveMoveOnlyTheirShare(t *testing.T) {
	keys := names("cluster", 3000)
	for _, n := range []int{2, 3, 5, 10} {
		members := names("regatta", n)
		before := plain(keys, members)
		after := plain(keys, append(members[:n:n], "newcomer"))
		for k, o := range after {
			if o != "newcomer" && o != before[k] {
				t.Fatalf("n=%d: join moved %s from %s to %s", n, k, before[k], o)
			}
		}
		share := len(keys) / (n + 1)
		if m := moved(before, after); m < share*8/10 || m > share*12/10 {
			t.Errorf("n=%d: join moved %d keys, want about %d", n, m, share)
		}
		left := plain(keys, members[1:])
		for k, o := range before {
			if o != members[0] && left[k] != o {
				t.Fatalf("n=%d: leave moved %s, which %s owned", n, k, o)
			}
		}
	}
}

// plain is rendezvous hashing alone: the owner of every key by Owner.
func plain(keys, members []string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = Owner(k, members)
	}
	return out
}
