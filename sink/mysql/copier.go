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

// clone returns a copy of r and its size as rowSize counts it.
func (rc *rowCopier) clone(r change.Row) (change.Row, int) {
	if r == nil {
		return nil, 0
	}
	total := 0
	for _, v := range r {
		total += len(v.Bytes())
	}
	var buf []byte
	if total > copierBytes/4 {
		buf = make([]byte, 0, total)
	} else {
		if cap(rc.bytes)-len(rc.bytes) < total {
			rc.bytes = make([]byte, 0, copierBytes)
		}
		buf = rc.bytes[len(rc.bytes):len(rc.bytes)]
		rc.bytes = rc.bytes[:len(rc.bytes)+total]
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
	for i, v := range r {
		if b := v.Bytes(); b != nil {
			start := len(buf)
			buf = append(buf, b...)
			v = change.RawValue(v.Kind(), v.Uint(), buf[start:len(buf):len(buf)])
		}
		out[i] = v
	}
	return out, total + 8*len(r)
}

// rowSize is what cloneRow counts for r.
func rowSize(r change.Row) int {
	n := 0
	for _, v := range r {
		n += len(v.Bytes()) + 8
	}
	return n
}
