package mysqlsink

import (
	"math"

	"github.com/binlogcdc/binlogcdc/change"
)

// rowCopier copies rows out of the decoder's buffers, cutting them from
// blocks (slabs) of values and of bytes: two allocations per block
// instead of two per row, which with a million rows is much of the
// garbage collector's work. A block lives as long as a row cut from it;
// the rows of a group are cut one after the other, so what a block holds
// beyond pendingBytes is at most a block's worth per buffer.
type rowCopier struct {
	vals  []change.Value
	bytes []byte

	// Recycling (Background): the blocks filled since the last group was
	// handed over (retired), given back with that group once it is
	// applied (copierBlocks), to be cut from again (free).
	recycle bool
	retired copierBlocks
	free    copierBlocks
}

// copierBlocks are blocks of a rowCopier.
type copierBlocks struct {
	vals  [][]change.Value
	bytes [][]byte
}

// copierFree bounds the blocks of each kind kept free: 2.5 MiB of values
// and 4 MiB of bytes at most.
const copierFree = 64

const (
	copierVals  = 1024     // values per block
	copierBytes = 64 << 10 // bytes per block; a row's bytes beyond a quarter of it get their own
)

// clone returns a copy of r and its size as rowSize counts it, in one
// pass over r: each value's bytes are cut from the block where they fit
// (a value's bytes beyond a quarter of a block get their own).
func (rc *rowCopier) clone(r change.Row) (change.Row, int) {
	out, n, _ := rc.cloneUpTo(r, math.MaxInt)
	return out, n
}

// cloneUpTo is clone for a row whose size is below limit. For a larger
// one it returns ok false, its size so far at least limit, having
// copied none of the value that took it there (the few it copied before
// are left in the blocks).
func (rc *rowCopier) cloneUpTo(r change.Row, limit int) (_ change.Row, size int, ok bool) {
	if r == nil {
		return nil, 0, true
	}
	total := 8 * len(r)
	if total >= limit {
		return nil, total, false
	}
	out := rc.cutVals(len(r))
	// The values at once (one memmove: half the time of copying them one
	// by one, BenchmarkRowCopier), then each value's bytes.
	copy(out, r)
	for i := range out {
		if k, num, b := out[i].Parts(); b != nil {
			if total += len(b); total >= limit {
				clear(out) // no reference to the decoder's buffers stays
				return nil, total, false
			}
			out[i].PutRaw(k, num, rc.copyBytes(b))
		}
	}
	return out, total, true
}

// cutVals returns room for n values: cut from the block of values, or,
// for more than a quarter of a block, an allocation of their own.
func (rc *rowCopier) cutVals(n int) change.Row {
	if n > copierVals/4 {
		return make(change.Row, n)
	}
	if cap(rc.vals)-len(rc.vals) < n {
		rc.newVals()
	}
	m := len(rc.vals)
	rc.vals = rc.vals[:m+n]
	return rc.vals[m : m+n : m+n]
}

// cloneRows copies o's rows and sets its size when it is below
// pendingBytes (measured as they are copied); otherwise it reports false.
func (s *Sink) cloneRows(o *op) bool {
	before, n1, ok := s.copier.cloneUpTo(o.c.Before, pendingBytes)
	if !ok {
		return false
	}
	after, n2, ok := s.copier.cloneUpTo(o.c.After, pendingBytes-n1)
	if !ok {
		return false
	}
	o.c.Before, o.c.After, o.size = before, after, n1+n2
	return true
}

// copyBytes returns a copy of b, cut from the block of bytes when it fits
// in a quarter of one.
func (rc *rowCopier) copyBytes(b []byte) []byte {
	if len(b) > copierBytes/4 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(rc.bytes)-len(rc.bytes) < len(b) {
		rc.newBytes()
	}
	n := len(rc.bytes)
	rc.bytes = append(rc.bytes, b...)
	return rc.bytes[n:len(rc.bytes):len(rc.bytes)]
}

// newVals starts a block of values: a free one if there is one.
func (rc *rowCopier) newVals() {
	if !rc.recycle {
		rc.vals = make([]change.Value, 0, copierVals)
		return
	}
	if rc.vals != nil {
		rc.retired.vals = append(rc.retired.vals, rc.vals)
	}
	if n := len(rc.free.vals); n > 0 {
		// Its old values are overwritten as rows are cut from it.
		rc.vals, rc.free.vals = rc.free.vals[n-1][:0], rc.free.vals[:n-1]
		return
	}
	rc.vals = make([]change.Value, 0, copierVals)
}

// newBytes starts a block of bytes: a free one if there is one.
func (rc *rowCopier) newBytes() {
	if !rc.recycle {
		rc.bytes = make([]byte, 0, copierBytes)
		return
	}
	if rc.bytes != nil {
		rc.retired.bytes = append(rc.retired.bytes, rc.bytes)
	}
	if n := len(rc.free.bytes); n > 0 {
		rc.bytes, rc.free.bytes = rc.free.bytes[n-1][:0], rc.free.bytes[:n-1]
		return
	}
	rc.bytes = make([]byte, 0, copierBytes)
}

// slab returns an empty block of at least need bytes for encodeRow's
// encodings (encoded.go), which live as long as the rows of their
// group: with recycling, old (the full one) is retired, and a free block
// of bytes taken when need fits in one.
func (rc *rowCopier) slab(old []byte, need int) []byte {
	if !rc.recycle || need > copierBytes {
		return make([]byte, 0, max(copierBytes, need))
	}
	if old != nil && cap(old) == copierBytes {
		rc.retired.bytes = append(rc.retired.bytes, old)
	}
	if n := len(rc.free.bytes); n > 0 {
		b := rc.free.bytes[n-1][:0]
		rc.free.bytes = rc.free.bytes[:n-1]
		return b
	}
	return make([]byte, 0, copierBytes)
}

// handOver returns the blocks filled since the last call: every row cut
// from them belongs to the group being handed over or to one before it.
// (The blocks being filled hold rows of the next group too: they are
// retired with it.)
func (rc *rowCopier) handOver() copierBlocks {
	b := rc.retired
	rc.retired = copierBlocks{}
	return b
}

// reuse takes back blocks of handOver once no row cut from them is in
// use any more; beyond copierFree of a kind they are left to the garbage
// collector.
func (rc *rowCopier) reuse(b copierBlocks) {
	for _, v := range b.vals {
		if len(rc.free.vals) < copierFree {
			rc.free.vals = append(rc.free.vals, v)
		}
	}
	for _, v := range b.bytes {
		if len(rc.free.bytes) < copierFree {
			rc.free.bytes = append(rc.free.bytes, v)
		}
	}
}

// rowSize is what cloneRow counts for r.
func rowSize(r change.Row) int {
	n := 0
	for i := range r { // indexed: ranging over the values copies each
		n += len(r[i].Bytes()) + 8
	}
	return n
}
