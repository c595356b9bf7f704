package recovery

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// txChanges makes n changes of two tables, with every field a replayer
// passes on set, values of every length (large ones among them) and nil,
// empty and absent values.
func txChanges(n int) []change.Change {
	t1 := &tablemap.Table{DB: "d", Name: "a"}
	t2 := &tablemap.Table{DB: "d", Name: "b"}
	r := rand.New(rand.NewSource(3))
	val := func() change.Value {
		switch r.Intn(6) {
		case 0:
			return change.NullValue()
		case 1:
			return change.Value{}
		case 2:
			return change.IntValue(r.Int63() - r.Int63())
		case 3:
			return change.TextValue(change.Bytes, nil)
		}
		return change.TextValue(change.Bytes, bytes.Repeat([]byte{byte('a' + r.Intn(26))}, r.Intn(12)))
	}
	row := func() change.Row {
		out := make(change.Row, 1+r.Intn(4))
		for i := range out {
			out[i] = val()
		}
		return out
	}
	var out []change.Change
	for i := 0; i < n; i++ {
		c := change.Change{Table: t1, Pos: change.Position{File: "binlog.000001", Offset: uint64(1000 + i)}, RowIndex: i % 7,
			Time: time.Unix(1700000000+int64(i), int64(i)*1000).UTC(), TimeMicro: i%2 == 0, ServerID: uint32(i % 3),
			Flags: uint16(i % 4), GTID: fmt.Sprintf("0-1-%d", i/50)}
		if i%5 == 0 {
			c.Table, c.CommitPos = t2, change.Position{File: "binlog.000002", Offset: 44}
		}
		if i%11 == 0 {
			c.Time, c.TimeMicro = time.Time{}, false
		}
		switch r.Intn(3) {
		case 0:
			c.Op, c.After = change.Insert, row()
		case 1:
			c.Op, c.Before, c.After = change.Update, row(), row()
		case 2:
			c.Op, c.Before = change.Delete, row()
		}
		out = append(out, c)
	}
	return out
}

func showChange(c *change.Change) string {
	return fmt.Sprintf("%d %p %v %d %v %v %v %d %d %q %s / %s", c.Op, c.Table, c.Pos, c.RowIndex, c.CommitPos, c.Time, c.TimeMicro,
		c.ServerID, c.Flags, c.GTID, show([]change.Row{c.Before}), show([]change.Row{c.After}))
}

// TestTxSpill: the changes read back from the spill file are those
// written, in order, field for field, large values among them; a reset
// empties it.
func TestTxSpill(t *testing.T) {
	old := largeValue
	largeValue = 8
	defer func() { largeValue = old }()
	s := &txSpill{dir: t.TempDir()}
	defer s.close()
	for round := 0; round < 3; round++ {
		cs := txChanges(500 + round)
		for i := range cs {
			if err := s.add(&cs[i]); err != nil {
				t.Fatal(err)
			}
		}
		var got []change.Change
		if err := s.each(func(c *change.Change) error { got = append(got, *c); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(cs) {
			t.Fatalf("round %d: %d changes read back, %d written", round, len(got), len(cs))
		}
		for i := range cs {
			if g, w := showChange(&got[i]), showChange(&cs[i]); g != w {
				t.Fatalf("round %d, change %d:\n read back %s\n   written %s", round, i, g, w)
			}
			if !got[i].Time.Equal(cs[i].Time) || (got[i].Before == nil) != (cs[i].Before == nil) || (got[i].After == nil) != (cs[i].After == nil) {
				t.Fatalf("round %d, change %d: time or images differ", round, i)
			}
		}
		// What was read back stays as it was after the next round.
		keep := showChange(&got[len(got)-1])
		if err := s.reset(); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.f.Stat(); st.Size() != 0 {
			t.Fatalf("the spill file holds %d bytes after a reset", st.Size())
		}
		defer func() {
			if g := showChange(&got[len(got)-1]); g != keep {
				t.Errorf("a change read back was overwritten: %s, was %s", g, keep)
			}
		}()
	}
}

// TestReplayerSpill: a replayer that holds a few changes in memory
// passes a transaction's changes at its commit in order, whether they
// stayed in memory or went to the spill file, and none of a
// transaction rolled back.
func TestReplayerSpill(t *testing.T) {
	ctx := context.Background()
	cs := txChanges(400)
	for _, limit := range []int64{1, 2000, 1 << 30} {
		var got []string
		res := &Result{}
		r := replayer{raw: true, limit: limit, res: res, spill: txSpill{dir: t.TempDir()}, each: func(c *change.Change) error {
			got = append(got, showChange(c))
			return nil
		}}
		var want []string
		write := func(cs []change.Change) {
			for i := range cs {
				if err := r.hold(&cs[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		write(cs[:150])
		if err := r.Commit(ctx, change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
		for i := range cs[:150] {
			want = append(want, showChange(&cs[i]))
		}
		write(cs[150:300]) // never committed
		if err := r.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		write(cs[300:])
		if err := r.Commit(ctx, change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
		for i := range cs[300:] {
			want = append(want, showChange(&cs[300+i]))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d: %d changes passed on, want %d", limit, len(got), len(want))
		}
		if spilled := r.spill.f != nil; spilled != (limit < 1<<30) {
			t.Errorf("limit %d: spilled %v", limit, spilled)
		}
		if n := res.Inserts + res.Updates + res.Deletes; n != uint64(len(want)) {
			t.Errorf("limit %d: %d changes counted, want %d", limit, n, len(want))
		}
		r.Close(ctx)
	}
}
