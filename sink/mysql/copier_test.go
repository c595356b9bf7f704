package mysqlsink

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/cputime"
)

// TestRowCopier: rows cut from shared blocks are independent copies: the
// source buffer may be reused, and appending to one row (or to one
// value's bytes) leaves the next row as it was.
func TestRowCopier(t *testing.T) {
	var rc rowCopier
	src := make([]byte, 0, 1<<20)
	var rows, copies []change.Row
	for i := 0; i < 3000; i++ {
		src = src[:0]
		n := 1 + i%7
		if i%500 == 0 {
			n = copierVals/4 + 1 // more values than a block quarter: a slice of its own
		}
		r := make(change.Row, n)
		for j := range r {
			switch {
			case j%3 == 0:
				r[j] = change.IntValue(int64(i*10 + j))
			case i%700 == 0 && j == 1:
				big := bytes.Repeat([]byte{byte(i)}, copierBytes) // bytes of their own
				r[j] = change.TextValue(change.Bytes, big)
			default:
				start := len(src)
				src = fmt.Appendf(src, "row %d value %d", i, j)
				r[j] = change.TextValue(change.String, src[start:len(src):len(src)])
			}
		}
		want := make(change.Row, len(r))
		for j, v := range r {
			want[j] = change.RawValue(v.Kind(), v.Uint(), bytes.Clone(v.Bytes()))
		}
		c, size := rc.clone(r)
		if size != rowSize(r) {
			t.Fatalf("row %d: size %d, rowSize %d", i, size, rowSize(r))
		}
		clear(src[:cap(src)]) // the decoder reuses its buffer
		rows, copies = append(rows, want), append(copies, c)
	}
	// Appending to a copy, once the next ones were cut after it.
	for i, c := range copies {
		if i%3 == 0 {
			_ = append(c, change.IntValue(-1))
			for _, v := range c {
				if v.Bytes() != nil {
					_ = append(v.Bytes(), "clobber"...)
				}
			}
		}
	}
	for i := range rows {
		if len(rows[i]) != len(copies[i]) {
			t.Fatalf("row %d: %d values, want %d", i, len(copies[i]), len(rows[i]))
		}
		for j := range rows[i] {
			w, g := rows[i][j], copies[i][j]
			if w.Kind() != g.Kind() || w.Uint() != g.Uint() || !bytes.Equal(w.Bytes(), g.Bytes()) {
				t.Fatalf("row %d value %d: %v %d %q, want %v %d %q", i, j, g.Kind(), g.Uint(), g.Bytes(), w.Kind(), w.Uint(), w.Bytes())
			}
		}
	}
	if c, n := rc.clone(nil); c != nil || n != 0 {
		t.Errorf("clone(nil) = %v, %d", c, n)
	}
}

// TestCloneUpTo: a row is copied when its size (rowSize) is below the
// limit, and refused at the limit and above, whatever value takes it
// there; its size is then at least the limit.
func TestCloneUpTo(t *testing.T) {
	var rc rowCopier
	r := change.Row{change.IntValue(7), change.TextValue(change.String, []byte("abcdef")), change.NullValue(),
		change.TextValue(change.Bytes, bytes.Repeat([]byte{1}, 40000))}
	size := rowSize(r)
	for _, limit := range []int{0, 8, 31, 32, 38, 39, size - 1, size, size + 1, 1 << 30} {
		c, n, ok := rc.cloneUpTo(r, limit)
		if ok != (size < limit) {
			t.Fatalf("limit %d, size %d: ok %v", limit, size, ok)
		}
		if !ok {
			if c != nil || n < limit {
				t.Fatalf("limit %d: refused with %v, %d", limit, c, n)
			}
			if len(rc.vals) >= len(r) && limit > 8*len(r) {
				// The slots it took hold nothing of the caller's.
				for j, v := range rc.vals[len(rc.vals)-len(r):] {
					if v.Bytes() != nil || v.Kind() != change.Absent {
						t.Fatalf("limit %d: slot %d after a refusal holds %v", limit, j, v)
					}
				}
			}
			continue
		}
		if n != size || len(c) != len(r) {
			t.Fatalf("limit %d: size %d, %d values", limit, n, len(c))
		}
		for j := range r {
			if c[j].Kind() != r[j].Kind() || c[j].Uint() != r[j].Uint() || !bytes.Equal(c[j].Bytes(), r[j].Bytes()) {
				t.Fatalf("limit %d value %d differs", limit, j)
			}
		}
	}
	if c, n, ok := rc.cloneUpTo(nil, 0); c != nil || n != 0 || !ok {
		t.Errorf("cloneUpTo(nil) = %v, %d, %v", c, n, ok)
	}
}

// replayRow is a row of the replay workload (bench/gen.sh replay: INT,
// BIGINT, DECIMAL, DATETIME(6), VARCHAR, TEXT).
func replayRow() change.Row {
	return change.Row{
		change.IntValue(123456),
		change.IntValue(977668),
		change.TextValue(change.Decimal, []byte("234.56")),
		change.TextValue(change.Datetime, []byte("2028-09-09 10:21:12.000000")),
		change.TextValue(change.String, []byte("user23456@example.com")),
		change.TextValue(change.String, bytes.Repeat([]byte("lorem ipsum "), 7)),
	}
}

// BenchmarkRowCopier copies a row of the replay workload, as Write does
// each queued insert.
func BenchmarkRowCopier(b *testing.B) {
	r := replayRow()
	for _, recycle := range []bool{false, true} {
		b.Run(fmt.Sprintf("recycle=%v", recycle), func(b *testing.B) {
			// Groups of 10,000 rows, given back one group later, as
			// Background does.
			rc := rowCopier{recycle: recycle}
			var inFlight copierBlocks
			n := 0
			b.ReportAllocs()
			defer cputime.Start(b)()
			for b.Loop() {
				rc.clone(r)
				if n++; n%10000 == 0 && recycle {
					rc.reuse(inFlight)
					inFlight = rc.handOver()
				}
			}
		})
	}
}

// TestRowCopierRecycle: with recycling on, the blocks handed over with a
// group come back into use only after reuse, and the rows of the group
// after it, cut while the first was in flight, stay as they were.
func TestRowCopierRecycle(t *testing.T) {
	rc := rowCopier{recycle: true}
	row := func(i int) change.Row {
		return change.Row{change.IntValue(int64(i)), change.TextValue(change.String, fmt.Appendf(nil, "value %d %s", i, bytes.Repeat([]byte("x"), i%300)))}
	}
	cut := func(from, to int) []change.Row {
		var rows []change.Row
		for i := from; i < to; i++ {
			c, _ := rc.clone(row(i))
			rows = append(rows, c)
		}
		return rows
	}
	check := func(rows []change.Row, from int) {
		t.Helper()
		for k, c := range rows {
			if want := row(from + k); c[0].Int() != want[0].Int() || !bytes.Equal(c[1].Bytes(), want[1].Bytes()) {
				t.Fatalf("row %d: %v, want %v", from+k, c, want)
			}
		}
	}
	first := cut(0, 5000)
	b1 := rc.handOver()
	if len(b1.vals) == 0 || len(b1.bytes) == 0 {
		t.Fatalf("no blocks retired after 5000 rows: %d, %d", len(b1.vals), len(b1.bytes))
	}
	check(first, 0)
	second := cut(5000, 10000) // while the first group is in flight
	check(first, 0)
	rc.reuse(b1) // the first group applied
	b2 := rc.handOver()
	third := cut(10000, 15000) // from the first group's blocks
	check(second, 5000)
	check(third, 10000)
	if len(rc.free.vals) == len(b1.vals) && len(rc.free.bytes) == len(b1.bytes) {
		t.Fatal("no free block was taken")
	}
	// encodeRow's slabs come from the same blocks of bytes.
	e := rc.slab(nil, 100)
	e = append(e, "encoded"...)
	if e2 := rc.slab(e, copierBytes); &e2[:1][0] == &e[0] {
		t.Fatal("a slab in use was handed out again")
	}
	if e3 := rc.slab(nil, copierBytes+1); cap(e3) < copierBytes+1 {
		t.Fatalf("slab of %d bytes for %d", cap(e3), copierBytes+1)
	}
	rc.reuse(b2)
	if len(rc.free.vals) > copierFree || len(rc.free.bytes) > copierFree {
		t.Fatalf("%d and %d free blocks, more than %d", len(rc.free.vals), len(rc.free.bytes), copierFree)
	}
}
