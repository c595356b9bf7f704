package mysqlsink

import (
	"math/rand/v2"
	"testing"
)

// TestKeySet holds keySet to a map through adds, lookups, growth and
// resets, with clustered hashes (consecutive values: linear probing's
// worst case without mix) and the hash 0.
func TestKeySet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ks keySet
	want := map[uint64]bool{}
	if ks.has(0) || ks.has(1) || ks.len() != 0 {
		t.Fatalf("the empty set has something")
	}
	for round := 0; round < 4; round++ {
		for i := 0; i < 50000; i++ {
			var h uint64
			switch r.IntN(4) {
			case 0:
				h = uint64(r.IntN(100000)) // clustered
			case 1:
				h = uint64(r.IntN(3)) // 0, 1, 2: 0 is kept as 1
			default:
				h = r.Uint64()
			}
			ks.add(h)
			if h == 0 {
				h = 1
			}
			want[h] = true
			if q := r.Uint64N(200000); ks.has(q) != (want[q] || q == 0 && want[1]) {
				t.Fatalf("round %d: has(%d) = %v", round, q, ks.has(q))
			}
		}
		if ks.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, ks.len(), len(want))
		}
		for h := range want {
			if !ks.has(h) {
				t.Fatalf("round %d: %d missing", round, h)
			}
		}
		ks.reset()
		clear(want)
		if ks.len() != 0 || ks.has(1) {
			t.Fatalf("round %d: not empty after reset", round)
		}
	}
}
