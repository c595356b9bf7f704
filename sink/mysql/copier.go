package mysqlsink

import "github.com/binlogcdc/binlogcdc/change"

// rowCopier copies rows out of the decoder's buffers, cutting them from
// blocks (slabs) of values and of bytes: two allocations per block
// instead of two per row, which with a million rows is much of the
// garbage collector's work. A block lives as long as a row cut from it;
// the rows of a group are cut one after the other, so what a block holds
// beyond pendingBytes is at most a block's worth per buffer.
type rowCopier struct {
	vals  []change.Value
	bytes []byte
}

const (
	copierVals  = 1024     // values per block
	copierBytes = 64 << 10 // bytes per block; a row's bytes beyond a quarter of it get their own
)

// clone returns a copy of r and its size as rowSize counts it, in one
// pass over r: each value's bytes are cut from the block where they fit
// (a value's bytes beyond a quarter of a block get their own).
func (rc *rowCopier) clone(r change.Row) (change.Row, int) {
	if r == nil {
		return nil, 0
	}
	var out change.Row
	if len(r) > copierVals/4 {
		out = make(change.Row, len(r))
	} else {
		if cap(rc.vals)-len(rc.vals) < len(r) {
			rc.vals = make([]change.Value, 0, copierVals)
		}
		n := len(rc.vals)
		rc.vals = rc.vals[:n+len(r)]
		out = rc.vals[n : n+len(r) : n+len(r)]
	}
	total := 8 * len(r)
	for i, v := range r {
		if b := v.Bytes(); b != nil {
			total += len(b)
			v = change.RawValue(v.Kind(), v.Uint(), rc.copyBytes(b))
		}
		out[i] = v
	}
	return out, total
}

// copyBytes returns a copy of b, cut from the block of bytes when it fits
// in a quarter of one.
func (rc *rowCopier) copyBytes(b []byte) []byte {
	if len(b) > copierBytes/4 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(rc.bytes)-len(rc.bytes) < len(b) {
		rc.bytes = make([]byte, 0, copierBytes)
	}
	n := len(rc.bytes)
	rc.bytes = append(rc.bytes, b...)
	return rc.bytes[n:len(rc.bytes):len(rc.bytes)]
}

// rowSize is what cloneRow counts for r.
func rowSize(r change.Row) int {
	n := 0
	for _, v := range r {
		n += len(v.Bytes()) + 8
	}
	return n
}
