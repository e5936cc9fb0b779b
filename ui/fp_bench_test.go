package ui

import "testing"

// BenchmarkLive is what Live costs the daemon's status commit at 2,000
// clusters of 10 profiles (its fingerprint).
func BenchmarkLive(b *testing.B) {
	s := New(Options{History: &memHistory{}})
	snap := largeFleet(2000)
	for b.Loop() {
		s.Live(snap)
	}
}
