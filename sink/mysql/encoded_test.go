package mysqlsink

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
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
