package mysqlsink

// keySet is a set of 64-bit row hashes (the coordinator's record of what
// a worker was given, parallel.go): open addressing, linear probing, in
// one array. Lookups and inserts of a million keys a second are much of
// the coordinator's work; Go's map spends about twice as long on them.
// The hash 0 is stored as 1: two rows whose hashes differ only so wait
// for each other needlessly, as any two rows with one hash do.
type keySet struct {
	slots []uint64 // 0: empty
	n     int
}

// has reports whether h is in the set.
func (ks *keySet) has(h uint64) bool {
	if ks.n == 0 {
		return false
	}
	if h == 0 {
		h = 1
	}
	mask := uint64(len(ks.slots) - 1)
	for i := mix(h) & mask; ; i = (i + 1) & mask {
		switch ks.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// add puts h in the set.
func (ks *keySet) add(h uint64) {
	if h == 0 {
		h = 1
	}
	if (ks.n+1)*4 > len(ks.slots)*3 {
		ks.grow()
	}
	mask := uint64(len(ks.slots) - 1)
	for i := mix(h) & mask; ; i = (i + 1) & mask {
		switch ks.slots[i] {
		case h:
			return
		case 0:
			ks.slots[i] = h
			ks.n++
			return
		}
	}
}

func (ks *keySet) grow() {
	old := ks.slots
	ks.slots = make([]uint64, max(1024, 2*len(old)))
	ks.n = 0
	for _, h := range old {
		if h != 0 {
			ks.add(h)
		}
	}
}

// len is the number of hashes in the set.
func (ks *keySet) len() int { return ks.n }

// reset empties the set, keeping its room.
func (ks *keySet) reset() {
	if ks.n > 0 {
		clear(ks.slots)
		ks.n = 0
	}
}

// mix spreads h's bits (FNV's low bits follow the last bytes hashed
// closely; linear probing needs them spread).
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
