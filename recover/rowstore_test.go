package recovery

import (
	"math/rand"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestStoreOnDisk replays the same random changes into a store in memory
// and one on disk from its first row: the same rows in the same order,
// the same conflicts.
func TestStoreOnDisk(t *testing.T) {
	for _, pk := range []bool{true, false} {
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
		for i := 0; i < 5000; i++ {
			c := change.Change{Table: tbl}
			a := change.Row{change.IntValue(int64(r.Intn(300))), val()}
			b := change.Row{change.IntValue(int64(r.Intn(300))), val()}
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
			t.Errorf("pk %v: on disk:\n%s\nin memory:\n%s", pk, got, want)
		}
		if disk.c != mem.c || disk.size() != mem.size() {
			t.Errorf("pk %v: on disk %+v %d rows, in memory %+v %d rows", pk, disk.c, disk.size(), mem.c, mem.size())
		}
		if err := disk.close(); err != nil {
			t.Fatal(err)
		}
	}
}
