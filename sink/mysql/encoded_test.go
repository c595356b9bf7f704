package mysqlsink

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/cputime"
)

// TestAppendExecuteEncoded: the packet put together from the inserts'
// encodings (encodeRow when queued) is byte for byte the one
// appendExecute writes from their values, with and without query
// attributes; a row that cannot be encoded is not, and the statement is
// then built from its values.
func TestAppendExecuteEncoded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := []change.Value{
		change.IntValue(-42), change.UintValue(18446744073709551615), change.NullValue(),
		change.TextValue(change.String, []byte("héllo\t\\N")), change.TextValue(change.String, nil),
		change.Float64Value(-2.5), change.Float32Value(1.25), change.TextValue(change.Decimal, []byte("-24632.39")),
		change.TextValue(change.Datetime, []byte("2024-01-01 00:00:00.000001")), change.EnumValue(2, []byte("paid")),
		change.EnumValue(0, nil), change.SetValue(5, []byte("a,c")), change.SetValue(3, []byte("x")),
		change.TextValue(change.JSON, []byte(`{"a":1}`)), change.TextValue(change.Bytes, []byte{0, 1, 0xff}),
		change.TextValue(change.Bytes, nil), change.GeometryValue(4326, []byte{1, 1, 0, 0, 0}),
		change.TextValue(change.Vector, []byte{0, 0, 128, 63}), change.TextValue(change.String, bytes.Repeat([]byte("y"), 300)),
		change.TextValue(change.Date, []byte("2024-02-29")), change.TimestampValue(1700000000, []byte("2023-11-14 22:13:20.5")),
		change.TextValue(change.Time, []byte("-838:59:59")), change.IntValue(0),
	}
	s := &Sink{}
	p := &plan{rowStart: -1, rowEnd: -1}
	for round := range 200 {
		width, rows := 1+r.IntN(9), 1+r.IntN(40)
		cols := make([]int, width)
		for i := range cols {
			cols[i] = i
		}
		ops := make([]op, rows)
		var args []change.Value
		for i := range ops {
			row := make(change.Row, width)
			for c := range row {
				row[c] = pool[r.IntN(len(pool))]
			}
			ops[i] = op{c: opChange{Op: change.Insert, After: row}, plan: p, cols: cols, size: rowSize(row)}
			s.encodeRow(&ops[i])
			if ops[i].enc == nil {
				t.Fatalf("round %d: row %d not encoded: %v", round, i, row)
			}
			args = append(args, row...)
		}
		st := &client.Stmt{}
		st.ID, st.Params = uint32(round)+0x01020304, width*rows
		for _, attrs := range []bool{false, true} {
			want, ok := appendExecute([]byte("x"), st, args, attrs)
			if !ok {
				t.Fatalf("round %d: appendExecute refused", round)
			}
			if !encoded(ops) {
				// Every value NULL: appendExecute sends no types, and the
				// statement is built from the values.
				continue
			}
			got, ok := appendExecuteEncoded([]byte("x"), st, ops, attrs)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("round %d (attributes %v):\n got %x\nwant %x", round, attrs, got, want)
			}
		}
		st.Params++
		if _, ok := appendExecuteEncoded(nil, st, ops, false); ok {
			t.Fatalf("round %d: a wrong parameter count was encoded", round)
		}
	}

	// Not encoded: a large value (sent from where it lies), a value
	// bindValue refuses, a system-versioned table's row.
	for _, row := range []change.Row{
		{change.IntValue(1), change.TextValue(change.Bytes, make([]byte, largeValue))},
		{change.IntValue(1), {}},
	} {
		o := op{c: opChange{Op: change.Insert, After: row}, plan: p, cols: []int{0, 1}, size: rowSize(row)}
		s.encodeRow(&o)
		if o.enc != nil || encoded([]op{o}) {
			t.Errorf("row %v was encoded", row)
		}
	}
	v := op{c: opChange{Op: change.Insert, After: change.Row{change.IntValue(1)}}, plan: &plan{rowStart: 0, rowEnd: 0}, cols: []int{0}, size: 16}
	if s.encodeRow(&v); v.enc != nil {
		t.Error("a system-versioned table's row was encoded")
	}
	// A run with one row not encoded is built from its values.
	a := op{c: opChange{Op: change.Insert, After: change.Row{change.IntValue(1)}}, plan: p, cols: []int{0}, size: 16}
	s.encodeRow(&a)
	if !encoded([]op{a}) || encoded([]op{a, {cols: []int{0}}}) {
		t.Error("encoded() does not say whether every row was encoded")
	}
}

// TestEncodeCloned: encodeCloned gives what cloneRows then encodeRow
// give (the same encoding, a row equal to the decoder's, the same size),
// for rows with columns not inserted too; the copies stay as they were
// when the decoder's buffer is overwritten and more rows are encoded; a
// row encodeRow refuses is copied whole and not encoded, or left to
// cloneRows.
func TestEncodeCloned(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := []change.Value{
		change.IntValue(-42), change.UintValue(7), change.NullValue(), change.TextValue(change.String, nil),
		change.TextValue(change.String, []byte("héllo")), change.TextValue(change.String, []byte{}),
		change.Float64Value(-2.5), change.TextValue(change.Decimal, []byte("-24632.39")),
		change.TextValue(change.Datetime, []byte("2024-01-01 00:00:00.000001")), change.EnumValue(2, []byte("paid")),
		change.EnumValue(0, nil), change.SetValue(5, []byte("a,c")), change.TextValue(change.JSON, []byte(`{"a":1}`)),
		change.TextValue(change.Bytes, []byte{0, 1, 0xff}), change.GeometryValue(4326, []byte{1, 1, 0, 0, 0}),
		change.TextValue(change.Vector, []byte{0, 0, 128, 63}), change.TextValue(change.String, bytes.Repeat([]byte("y"), 300)),
		change.TextValue(change.Date, []byte("2024-02-29")), change.TimestampValue(1700000000, []byte("2023-11-14 22:13:20.5")),
		change.TextValue(change.Time, []byte("-838:59:59")),
	}
	same := func(a, b change.Value) bool {
		ka, na, ba := a.Parts()
		kb, nb, bb := b.Parts()
		return ka == kb && na == nb && bytes.Equal(ba, bb)
	}
	for _, recycle := range []bool{false, true} {
		s, ref := &Sink{}, &Sink{}
		s.copier.recycle = recycle
		p := &plan{rowStart: -1, rowEnd: -1}
		var kept []change.Row
		var got []*op
		for round := range 3000 {
			width := 1 + r.IntN(9)
			var cols []int
			for i := range width {
				if r.IntN(4) > 0 || (i == width-1 && cols == nil) {
					cols = append(cols, i)
				}
			}
			// The decoder's row: its bytes in a buffer overwritten below.
			want := make(change.Row, width)
			buf := make([]byte, 0, 64)
			for c := range want {
				want[c] = pool[r.IntN(len(pool))]
				if round%97 == 0 && c == cols[0] {
					want[c] = change.Value{} // not bound: the row is copied, not encoded
				}
				if b := want[c].Bytes(); b != nil {
					buf = append(buf, b...)
				}
			}
			dec := make(change.Row, width)
			off := 0
			for c := range want {
				k, num, b := want[c].Parts()
				if b != nil {
					b = buf[off : off+len(b) : off+len(b)]
					off += len(b)
				}
				dec[c] = change.RawValue(k, num, b)
			}
			o := &op{c: opChange{Op: change.Insert, After: dec}, plan: p, cols: cols}
			if !s.encodeCloned(o) {
				t.Fatalf("round %d: row %v not taken", round, want)
			}
			w := op{c: opChange{Op: change.Insert, After: want}, plan: p, cols: cols}
			if !ref.cloneRows(&w) {
				t.Fatal("cloneRows refused")
			}
			ref.encodeRow(&w)
			if !bytes.Equal(o.enc, w.enc) || (o.enc == nil) != (w.enc == nil) || o.size != w.size {
				t.Fatalf("round %d: row %v cols %v:\n got %x (size %d)\nwant %x (size %d)", round, want, cols, o.enc, o.size, w.enc, w.size)
			}
			for i := range buf {
				buf[i] = 0xaa
			}
			kept = append(kept, want)
			got = append(got, o)
			if recycle && round%500 == 499 {
				// What Background does with a group applied: its
				// blocks come back only after the next hand-over.
				s.copier.reuse(s.copier.handOver())
				kept, got = kept[:0], got[:0]
			}
		}
		for j, o := range got {
			for c := range kept[j] {
				if !same(o.c.After[c], kept[j][c]) {
					t.Fatalf("recycle %v: row %d column %d is %v, want %v", recycle, j, c, o.c.After[c], kept[j][c])
				}
			}
		}
	}

	// Left to cloneRows: an update, a wide row, a large one, a versioned
	// table's.
	s := &Sink{}
	p := &plan{rowStart: -1, rowEnd: -1}
	wide := make(change.Row, copierVals/4+1)
	for _, o := range []op{
		{c: opChange{Op: change.Update, Before: change.Row{change.IntValue(1)}, After: change.Row{change.IntValue(2)}}, plan: p, cols: []int{0}},
		{c: opChange{Op: change.Insert, After: wide}, plan: p, cols: []int{0}},
		{c: opChange{Op: change.Insert, After: change.Row{change.TextValue(change.Bytes, make([]byte, largeValue))}}, plan: p, cols: []int{0}},
		{c: opChange{Op: change.Insert, After: change.Row{change.IntValue(1)}}, plan: &plan{rowStart: 0, rowEnd: 0}, cols: []int{0}},
	} {
		if s.encodeCloned(&o) || o.enc != nil {
			t.Errorf("%v of %d columns was taken", o.c.Op, len(o.c.After))
		}
	}
}

// BenchmarkQueueInsert: copying and encoding a queued insert of the
// replay benchmark's table, in two passes (cloneRows, encodeRow) and in
// one (encodeCloned).
func BenchmarkQueueInsert(b *testing.B) {
	r := replayRow()
	p := &plan{rowStart: -1, rowEnd: -1}
	cols := []int{0, 1, 2, 3, 4, 5}
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprintf("fused=%v", fused), func(b *testing.B) {
			s := &Sink{}
			s.copier.recycle = true
			var inFlight copierBlocks
			n := 0
			b.ReportAllocs()
			defer cputime.Start(b)()
			for b.Loop() {
				o := op{c: opChange{Op: change.Insert, After: r}, plan: p, cols: cols}
				if !fused || !s.encodeCloned(&o) {
					s.cloneRows(&o)
					s.encodeRow(&o)
				}
				if n++; n%10000 == 0 {
					s.copier.reuse(inFlight)
					inFlight = s.copier.handOver()
				}
			}
		})
	}
}
