package recovery

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestStoreLargeValues is TestStoreOnDisk with values that go to the
// side file: the same rows in the same order as in memory.
func TestStoreLargeValues(t *testing.T) {
	old := largeValue
	largeValue = 4
	defer func() { largeValue = old }()
	for _, pk := range []bool{true, false} {
		tbl := &tablemap.Table{Columns: []tablemap.Column{intCol("id", false), {Name: "b", Nullable: true, Visible: true}, {Name: "c", Nullable: true, Visible: true}}}
		if pk {
			tbl.PrimaryKey = []int{0}
		}
		mem, disk := newStore(tbl, false), newStore(tbl, false)
		disk.memBudget, disk.dir = 1, t.TempDir()
		r := rand.New(rand.NewSource(2))
		val := func() change.Value {
			if r.Intn(10) == 0 {
				return change.NullValue()
			}
			return change.TextValue(change.Bytes, bytes.Repeat([]byte{byte('a' + r.Intn(3))}, r.Intn(8)))
		}
		for i := 0; i < 3000; i++ {
			c := change.Change{Table: tbl}
			a := change.Row{change.IntValue(int64(r.Intn(100))), val(), val()}
			b := change.Row{change.IntValue(int64(r.Intn(100))), val(), val()}
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
		if !disk.largeOnDisk() {
			t.Fatal("no value went to the side file")
		}
		if got, want := show(disk.sorted()), show(mem.sorted()); got != want {
			t.Errorf("pk %v: on disk:\n%s\nin memory:\n%s", pk, got, want)
		}
		if disk.c != mem.c || disk.size() != mem.size() {
			t.Errorf("pk %v: on disk %+v %d rows, in memory %+v %d rows", pk, disk.c, disk.size(), mem.c, mem.size())
		}
		// Without loading, the large values hold their kind only.
		disk.eachRow(false, func(row change.Row) error {
			if v := row[1]; v.Kind() == change.Bytes && len(v.Bytes()) >= largeValue {
				t.Errorf("a large value read back without load")
			}
			return nil
		})
		if err := disk.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteSQLLarge: the SQL of rows with values of a megabyte or more,
// whose tuples WriteSQL writes a piece at a time, is the SQL built whole,
// from memory and from disk.
func TestWriteSQLLarge(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0},
		Columns: []tablemap.Column{intCol("id", false), {Name: "b", Nullable: true, Visible: true}, {Name: "s", Nullable: true, Visible: true}}}
	big := bytes.Repeat([]byte("it's\x00"), 1<<18)
	text := []byte(strings.Repeat("it's ☃ ", 1<<17))
	rows := []change.Row{
		{change.IntValue(1), change.TextValue(change.Bytes, []byte{1}), change.NullValue()},
		{change.IntValue(2), change.TextValue(change.Bytes, big), change.NullValue()},
		{change.IntValue(3), change.NullValue(), change.TextValue(change.String, []byte("x"))},
		{change.IntValue(4), change.NullValue(), change.TextValue(change.String, text)},
		{change.IntValue(5), change.TextValue(change.Bytes, big), change.TextValue(change.String, text)},
		{change.IntValue(6), change.NullValue(), change.NullValue()},
	}
	s := &Schema{CreateSQL: "CREATE TABLE `d`.`t` (...)", Final: tbl}
	for _, budget := range []int64{1 << 30, 1} {
		st := &stagedStore{store: newStore(tbl, false)}
		st.store.memBudget, st.store.dir = budget, t.TempDir()
		for _, r := range rows {
			if err := st.store.apply(&change.Change{Op: change.Insert, Table: tbl, After: r}); err != nil {
				t.Fatal(err)
			}
		}
		if onDisk := st.store.largeOnDisk(); onDisk != (budget == 1) {
			t.Fatalf("budget %d: large values on disk: %v", budget, onDisk)
		}
		var got, want bytes.Buffer
		if err := WriteSQL(&got, []string{"h"}, s, "d", &Rows{st: st}); err != nil {
			t.Fatal(err)
		}
		streamLarge = false
		err := WriteSQL(&want, []string{"h"}, s, "d", &Rows{st: st})
		streamLarge = true
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("budget %d: the SQL differs (%d bytes, built whole %d)", budget, got.Len(), want.Len())
		}
		if n := bytes.Count(got.Bytes(), []byte("INSERT INTO")); n != 4 {
			t.Errorf("budget %d: %d INSERTs, want 4", budget, n)
		}
		st.close()
	}
}
