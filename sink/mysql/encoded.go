package mysqlsink

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
)

// Inserts encoded as they are queued. Long insert runs go to the target
// as prepared multi-row INSERTs of up to bulkInsertRows rows, pipelined
// (apply.go, pipeline.go). Binding a group's values takes binlogcdc a few
// milliseconds, and the goroutine that feeds the target would do it while
// the target waits: measured, the target was idle for 0.83-1.0 s of a
// 5.5 s replay with the values bound when the statement was built, and
// for 0.61-0.71 s with them encoded as queued (README, "Performance").
// So each insert's values are encoded as COM_STMT_EXECUTE binds them
// (their types, then their values: appendExecute's bytes for that row)
// when the change is queued, by the decoding goroutine, which with
// Background works while the target applies the group before; the
// statement's packet is then these rows' bytes put together
// (appendExecuteEncoded). A row with a value that goes another way (a
// large value, sent from where it lies: large.go) or that cannot be bound
// is not encoded, and its statement is built from its values as before.
// The encodings are cut from blocks of the row copier's (copier.go
// slab), reused as its blocks are.
const encMaxRow = largeValue // a larger row is not encoded (large.go)

// encodeRow sets the queued insert o's enc: the types, then the values, of
// its columns o.cols, as appendExecute binds them. A row of more than
// encMaxRow bytes is not encoded, so neither is any large value
// (isLarge: largeValue bytes or more).
func (s *Sink) encodeRow(o *op) {
	row, n := o.c.After, len(o.cols)
	if o.plan.versioned() || o.size > encMaxRow || n == 0 {
		return
	}
	// Room for the whole encoding: 2 bytes of type and at most 9 of
	// length (or 8 of number) a value, and its bytes (size counts 8 more
	// a value; a geometry's SRID takes 4 of them).
	if need := o.size + 11*n; cap(s.encSlab)-len(s.encSlab) < need {
		s.encSlab = s.copier.slab(s.encSlab, need)
	}
	// One pass: the types are filled in as the values are appended.
	start := len(s.encSlab)
	b := append(s.encSlab, make([]byte, 2*n)...)
	for k, i := range o.cols {
		if i >= len(row) {
			return
		}
		t, f := byte(mysql.MYSQL_TYPE_NULL), byte(0)
		if row[i].Kind() != change.Null {
			var ok bool
			if b, t, f, ok = appendTyped(b, &row[i]); !ok {
				return
			}
		}
		b[start+2*k], b[start+2*k+1] = t, f
	}
	s.encSlab = b
	o.enc = b[start:len(b):len(b)]
}

// encodeCloned is cloneRows and encodeRow in one, for an insert queued
// with clone and encInserts: the values are encoded from the decoder's
// buffers, and the row's copy points into the encoding for the values
// whose bytes it holds as they are (text, decimals, temporals, binary
// strings, JSON), which are then copied once instead of twice; the others'
// bytes are copied as cloneRows does. It reports false, having neither
// copied nor encoded anything, for a row encodeRow would not encode, or a
// wide one (its values not cut from a block); when a value cannot be
// bound, the row is copied whole and not encoded. o.cols must be
// ascending (sqltext.Columns).
func (s *Sink) encodeCloned(o *op) bool {
	row, n := o.c.After, len(o.cols)
	if o.c.Before != nil || row == nil || o.plan.versioned() || n == 0 || len(row) > copierVals/4 || o.cols[n-1] >= len(row) {
		return false
	}
	size := rowSize(row)
	if size > encMaxRow {
		return false
	}
	if need := size + 11*n; cap(s.encSlab)-len(s.encSlab) < need {
		s.encSlab = s.copier.slab(s.encSlab, need)
	}
	rc := &s.copier
	out := rc.cutVals(len(row))
	copy(out, row)
	o.c.After, o.size = out, size

	start := len(s.encSlab)
	b := append(s.encSlab, make([]byte, 2*n)...)
	k := 0
	for i := range out {
		kind, num, vb := out[i].Parts()
		if k == n || o.cols[k] != i {
			if vb != nil { // not inserted: copied
				out[i].PutRaw(kind, num, rc.copyBytes(vb))
			}
			continue
		}
		t, f := byte(mysql.MYSQL_TYPE_NULL), byte(0)
		switch kind {
		case change.Null:
		case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time, change.String, change.JSON,
			change.Bytes, change.Vector:
			t = mysql.MYSQL_TYPE_STRING
			if kind == change.Bytes || kind == change.Vector {
				t = mysql.MYSQL_TYPE_BLOB
			}
			b = appendLenEnc(b, uint64(len(vb)))
			p := len(b)
			b = append(b, vb...)
			if vb != nil {
				out[i].PutRaw(kind, num, b[p:len(b):len(b)])
			}
		default:
			var ok bool
			if b, t, f, ok = appendTyped(b, &out[i]); !ok {
				rc.copyInto(out, row)
				return true
			}
			if vb != nil {
				out[i].PutRaw(kind, num, rc.copyBytes(vb))
			}
		}
		b[start+2*k], b[start+2*k+1] = t, f
		k++
	}
	if k != n { // o.cols not ascending
		rc.copyInto(out, row)
		return true
	}
	s.encSlab = b
	o.enc = b[start:len(b):len(b)]
	return true
}

// copyInto makes out a copy of row (of its length) whose bytes are the
// copier's.
func (rc *rowCopier) copyInto(out, row change.Row) {
	for j := range out {
		kind, num, vb := row[j].Parts()
		if vb != nil {
			vb = rc.copyBytes(vb)
		}
		out[j].PutRaw(kind, num, vb)
	}
}

// appendTyped appends the value v (not NULL) as appendParam does and
// returns its type and flag as paramType does, in one switch for the
// common kinds.
func appendTyped(b []byte, v *change.Value) (_ []byte, typ, flag byte, ok bool) {
	k, num, vb := v.Parts()
	switch k {
	case change.Int:
		return binary.LittleEndian.AppendUint64(b, num), mysql.MYSQL_TYPE_LONGLONG, 0, true
	case change.Uint:
		return binary.LittleEndian.AppendUint64(b, num), mysql.MYSQL_TYPE_LONGLONG, mysql.PARAM_UNSIGNED, true
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time, change.String, change.JSON:
		return append(appendLenEnc(b, uint64(len(vb))), vb...), mysql.MYSQL_TYPE_STRING, 0, true
	case change.Bytes, change.Vector:
		return append(appendLenEnc(b, uint64(len(vb))), vb...), mysql.MYSQL_TYPE_BLOB, 0, true
	}
	if typ, flag, ok = paramType(*v); !ok {
		return b, 0, 0, false
	}
	return appendParam(b, *v), typ, flag, true
}

// encoded reports whether every insert of ops was encoded (encodeRow) and
// one of their values is not NULL (appendExecute sends no types then).
func encoded(ops []op) bool {
	some := false
	for i := range ops {
		e := ops[i].enc
		if e == nil {
			return false
		}
		for t := 0; !some && t < 2*len(ops[i].cols); t += 2 {
			some = e[t] != mysql.MYSQL_TYPE_NULL
		}
	}
	return some
}

// appendExecuteEncoded appends the COM_STMT_EXECUTE of the multi-row
// INSERT st for the encoded inserts ops (encoded), each binding the same
// columns: the bytes appendExecute writes for their values in order.
func appendExecuteEncoded(b []byte, st *client.Stmt, ops []op, queryAttrs bool) ([]byte, bool) {
	width := len(ops[0].cols)
	n := st.ParamNum()
	if n != width*len(ops) {
		return b, false
	}
	start := len(b)
	b = append(b, 0, 0, 0, 0, mysql.COM_STMT_EXECUTE)
	b = binary.LittleEndian.AppendUint32(b, st.ID)
	b = append(b, mysql.CURSOR_TYPE_NO_CURSOR|mysql.PARAMETER_COUNT_AVAILABLE, 1, 0, 0, 0)
	if queryAttrs {
		b = appendLenEnc(b, uint64(n))
	}
	nulls := len(b)
	b = append(b, make([]byte, (n+7)/8)...)
	b = append(b, 1) // types follow
	p := 0
	for i := range ops {
		e := ops[i].enc
		if len(ops[i].cols) != width {
			return b[:start], false
		}
		for t := 0; t < 2*width; t, p = t+2, p+1 {
			if e[t] == mysql.MYSQL_TYPE_NULL {
				b[nulls+p/8] |= 1 << (p % 8)
			}
			b = append(b, e[t], e[t+1])
			if queryAttrs {
				b = append(b, 0) // no name
			}
		}
	}
	for i := range ops {
		b = append(b, ops[i].enc[2*width:]...)
	}
	l := len(b) - start - 4
	b[start], b[start+1], b[start+2] = byte(l), byte(l>>8), byte(l>>16)
	return b, true
}
