package recovery

import (
	"math/rand"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestStoreOnDisk replays the same random changes into a store in memory
// and one on disk from its first row: the same rows in the same order,
// the same conflicts. Keys are random in a small range, or mostly
// ascending (as AUTO_INCREMENT's: the on-disk store skips the lookup of
// a key above every key it stored) with older, equal and negative ones
// among them.
func TestStoreOnDisk(t *testing.T) {
	for _, tc := range []struct{ pk, ascending bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		pk := tc.pk
		tbl := &tablemap.Table{Columns: []tablemap.Column{intCol("id", false), intCol("v", true)}}
		if pk {
			tbl.PrimaryKey = []int{0}
		}
		mem, disk := newStore(tbl, false), newStore(tbl, false)
		disk.memBudget, disk.dir = 1, t.TempDir()
		r := rand.New(rand.NewSource(1))
		val := func() change.Value {
			if r.Intn(10) == 0 {
				return change.NullValue()
			}
			return change.IntValue(int64(r.Intn(20)))
		}
		next := int64(0)
		id := func() int64 {
			if !tc.ascending {
				return int64(r.Intn(300))
			}
			switch r.Intn(8) {
			case 0:
				return next - int64(r.Intn(20)) // an older key, or the last one
			case 1:
				return -int64(r.Intn(5)) // below zero: above every positive key as bytes
			}
			next += int64(1 + r.Intn(2))
			return next
		}
		for i := 0; i < 5000; i++ {
			c := change.Change{Table: tbl}
			a := change.Row{change.IntValue(id()), val()}
			b := change.Row{change.IntValue(id()), val()}
			switch r.Intn(3) {
			case 0:
				c.Op, c.After = change.Insert, a
			case 1:
				c.Op, c.Before, c.After = change.Update, a, b
			case 2:
				c.Op, c.Before = change.Delete, a
			}
			if err := mem.apply(&c); err != nil {
				t.Fatal(err)
			}
			if err := disk.apply(&c); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := disk.rows.(*diskTable); !ok {
			t.Fatal("the store did not move to disk")
		}
		if got, want := show(disk.sorted()), show(mem.sorted()); got != want {
			t.Errorf("pk %v, ascending %v: on disk:\n%s\nin memory:\n%s", pk, tc.ascending, got, want)
		}
		if disk.c != mem.c || disk.size() != mem.size() {
			t.Errorf("pk %v, ascending %v: on disk %+v %d rows, in memory %+v %d rows", pk, tc.ascending, disk.c, disk.size(), mem.c, mem.size())
		}
		if err := disk.close(); err != nil {
			t.Fatal(err)
		}
	}
}
