package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func covPos(file string, off uint64) change.Position {
	return change.Position{File: file, Offset: off}
}

func ik(vs ...int64) []change.Value {
	out := make([]change.Value, len(vs))
	for i, v := range vs {
		out[i] = change.IntValue(v)
	}
	return out
}

func row(id int64, v string) change.Row {
	return change.Row{change.IntValue(id), change.TextValue(change.String, []byte(v))}
}

func covTableDef() *tablemap.Table {
	return &tablemap.Table{DB: "Shop", Name: "Orders", Columns: []tablemap.Column{{Name: "id"}, {Name: "v"}},
		PrimaryKey: []int{0}, PrimaryKeyPrefix: []int{0}, PKNames: []string{"id"}}
}

// Chunks (-inf,10] at binlog.000002:100, (10,20] at binlog.000010:4,
// (20,30] at binlog.000002:500; keys above 30 not held yet.
func testCoverage(t *testing.T) *Coverage {
	t.Helper()
	c := NewCoverage()
	c.SetTable("shop", "orders", []string{"ID"})
	for _, ch := range []Chunk{
		{Lo: ik(10), Hi: ik(20), Pos: covPos("binlog.000010", 4)},
		{Hi: ik(10), Pos: covPos("binlog.000002", 100)},
		{Lo: ik(20), Hi: ik(30), Pos: covPos("binlog.000002", 500)},
	} {
		if err := c.AddChunk("SHOP", "orders", ch); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestCoverageVisibility(t *testing.T) {
	tbl := covTableDef()
	at := covPos("binlog.000002", 300) // after chunk 1, before chunks 2 and 3
	cases := []struct {
		name          string
		op            change.Op
		before, after int64 // 0: no image
		pos           change.Position
		want          change.Op // 0: dropped
	}{
		{"insert in a chunk read before", change.Insert, 0, 5, at, change.Insert},
		{"insert in a chunk read after", change.Insert, 0, 15, at, 0},
		{"insert in no chunk", change.Insert, 0, 31, at, 0},
		{"delete in a chunk read before", change.Delete, 5, 0, at, change.Delete},
		{"delete in a chunk read after", change.Delete, 25, 0, at, 0},
		{"update both visible", change.Update, 5, 6, at, change.Update},
		{"update neither visible", change.Update, 15, 25, at, 0},
		{"update into a chunk read later: delete", change.Update, 5, 15, at, change.Delete},
		{"update out of a chunk read later: insert", change.Update, 15, 5, at, change.Insert},
		{"update into no chunk: delete", change.Update, 5, 40, at, change.Delete},
		{"update from no chunk: insert", change.Update, 40, 5, at, change.Insert},
		// Boundaries: Lo exclusive, Hi inclusive.
		{"key 10 is in the first chunk", change.Insert, 0, 10, at, change.Insert},
		{"key 11 is in the second", change.Insert, 0, 11, at, 0},
		{"key 20 is in the second", change.Insert, 0, 20, at, 0},
		{"key 30 is in the third", change.Insert, 0, 30, covPos("binlog.000002", 500), change.Insert},
		{"key 31 is in none", change.Insert, 0, 31, covPos("binlog.000099", 4), 0},
		// Positions: a chunk's own position is visible, across files.
		{"at the chunk's position", change.Insert, 0, 5, covPos("binlog.000002", 100), change.Insert},
		{"just before it", change.Insert, 0, 5, covPos("binlog.000002", 99), 0},
		{"an earlier file with a larger offset", change.Insert, 0, 15, covPos("binlog.000009", 1<<40), 0},
		{"a later file with a smaller offset", change.Insert, 0, 5, covPos("binlog.000003", 4), change.Insert},
		{"binlog.000010 after binlog.000002", change.Update, 5, 15, covPos("binlog.000010", 4), change.Update},
		{"negative keys in the unbounded chunk", change.Delete, -1 << 62, 0, at, change.Delete},
	}
	for _, tc := range cases {
		c := testCoverage(t)
		ch := &change.Change{Op: tc.op, Table: tbl, Pos: tc.pos}
		if tc.before != 0 {
			ch.Before = row(tc.before, "b")
		}
		if tc.after != 0 {
			ch.After = row(tc.after, "a")
		}
		keep, err := c.Reconcile(ch)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := change.Op(0)
		if keep {
			got = ch.Op
		}
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			continue
		}
		switch got {
		case change.Insert:
			if ch.Before != nil || ch.After[0].Int() != tc.after {
				t.Errorf("%s: insert images %v %v", tc.name, ch.Before, ch.After)
			}
		case change.Delete:
			if ch.After != nil || ch.Before[0].Int() != tc.before {
				t.Errorf("%s: delete images %v %v", tc.name, ch.Before, ch.After)
			}
		}
	}
}

func TestCoverageUncoveredAndWhole(t *testing.T) {
	c := testCoverage(t)
	other := &tablemap.Table{DB: "shop", Name: "items", Columns: []tablemap.Column{{Name: "id"}}}
	ch := &change.Change{Op: change.Insert, Table: other, After: change.Row{change.IntValue(1)}, Pos: covPos("binlog.000001", 4)}
	if keep, err := c.Reconcile(ch); !keep || err != nil || ch.Op != change.Insert {
		t.Fatalf("uncovered table: %v %v", keep, err)
	}
	// A keyless table held as a whole: nothing before its chunk, all after.
	c.SetTable("shop", "items", nil)
	if keep, _ := c.Reconcile(ch); keep {
		t.Fatal("a table with no chunk yet holds nothing: its changes come with its chunk")
	}
	if err := c.AddChunk("shop", "items", Chunk{Pos: covPos("binlog.000003", 4)}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddChunk("shop", "items", Chunk{Pos: covPos("binlog.000004", 4)}); err == nil {
		t.Fatal("a second chunk of a table held as a whole")
	}
	for _, tc := range []struct {
		pos  change.Position
		keep bool
	}{{covPos("binlog.000002", 900), false}, {covPos("binlog.000003", 4), true}, {covPos("binlog.000003", 5), true}} {
		ch := &change.Change{Op: change.Update, Table: other, Before: change.Row{change.IntValue(1)}, After: change.Row{change.IntValue(2)}, Pos: tc.pos}
		keep, err := c.Reconcile(ch)
		if err != nil || keep != tc.keep || (keep && ch.Op != change.Update) {
			t.Errorf("whole table at %v: keep %v (%v), op %v", tc.pos, keep, err, ch.Op)
		}
	}
	if !c.Table("shop", "items").Complete() {
		t.Error("a table held as a whole with its chunk is complete")
	}
}

func TestCoverageMinimalImages(t *testing.T) {
	tbl := covTableDef()
	at := covPos("binlog.000002", 300)
	// MINIMAL: the after image of an update leaves out the unchanged key.
	c := testCoverage(t)
	ch := &change.Change{Op: change.Update, Table: tbl, Before: change.Row{change.IntValue(5), {}},
		After: change.Row{{}, change.TextValue(change.String, []byte("x"))}, Pos: at}
	if keep, err := c.Reconcile(ch); !keep || err != nil || ch.Op != change.Update {
		t.Fatalf("minimal update within a visible chunk: %v %v %v", keep, err, ch.Op)
	}
	// Moving a row into view with a partial after image: an error, never a partial insert.
	ch = &change.Change{Op: change.Update, Table: tbl, Before: change.Row{change.IntValue(15), {}},
		After: change.Row{change.IntValue(5), {}}, Pos: at}
	keep, err := c.Reconcile(ch)
	if err == nil || keep || !strings.Contains(err.Error(), "binlog.000002:300") || !strings.Contains(err.Error(), "`v`") {
		t.Fatalf("partial after image: keep %v, err %v", keep, err)
	}
	// NULL is not absent.
	ch = &change.Change{Op: change.Update, Table: tbl, Before: change.Row{change.IntValue(15), {}},
		After: change.Row{change.IntValue(5), change.NullValue()}, Pos: at}
	if keep, err := c.Reconcile(ch); !keep || err != nil || ch.Op != change.Insert || !ch.After[1].IsNull() {
		t.Fatalf("NULL column: %v %v", keep, err)
	}
}

func TestCoverageKeyChanged(t *testing.T) {
	c := testCoverage(t)
	tbl := covTableDef()
	tbl.Columns[1].Name = "id2"
	tbl.PrimaryKey, tbl.PKNames, tbl.PrimaryKeyPrefix = []int{1}, []string{"id2"}, []int{0}
	ch := &change.Change{Op: change.Insert, Table: tbl, After: row(1, "x"), Pos: covPos("binlog.000002", 300)}
	if _, err := c.Reconcile(ch); err == nil || !strings.Contains(err.Error(), "primary key") {
		t.Fatalf("a changed key: %v", err)
	}
}

func TestCoverageForgetAndComplete(t *testing.T) {
	c := testCoverage(t)
	tc := c.Table("shop", "orders")
	if tc.Complete() {
		t.Fatal("keys above 30 are not held: not complete")
	}
	if c.Forget(covPos("binlog.999999", 4)) {
		t.Fatal("an incomplete table is never forgotten")
	}
	if err := c.AddChunk("shop", "orders", Chunk{Lo: ik(25), Pos: covPos("binlog.000011", 4)}); err == nil {
		t.Fatal("an overlapping chunk")
	}
	if err := c.AddChunk("shop", "orders", Chunk{Lo: ik(5), Hi: ik(8), Pos: covPos("binlog.000011", 4)}); err == nil {
		t.Fatal("a chunk inside another")
	}
	if err := c.AddChunk("shop", "orders", Chunk{Lo: ik(30), Pos: covPos("binlog.000011", 4)}); err != nil {
		t.Fatal(err)
	}
	if !tc.Complete() {
		t.Fatal("complete")
	}
	if min, ok := c.MinPos(); !ok || min != covPos("binlog.000002", 100) {
		t.Fatalf("MinPos %v", min)
	}
	if tc.MaxPos() != covPos("binlog.000011", 4) {
		t.Fatalf("MaxPos %v", tc.MaxPos())
	}
	if c.Forget(covPos("binlog.000010", 999)) {
		t.Fatal("forgotten before its last chunk's position")
	}
	if !c.Forget(covPos("binlog.000011", 4)) || !c.Empty() {
		t.Fatal("not forgotten at its last chunk's position")
	}
	// Empty: everything passes.
	ch := &change.Change{Op: change.Insert, Table: covTableDef(), After: row(50, "x"), Pos: covPos("binlog.000001", 4)}
	if keep, err := c.Reconcile(ch); !keep || err != nil {
		t.Fatal("an empty coverage drops nothing")
	}
	var nilc *Coverage
	if keep, err := nilc.Reconcile(ch); !keep || err != nil || !nilc.Empty() {
		t.Fatal("a nil coverage drops nothing")
	}
}

func TestCoverageJSON(t *testing.T) {
	c := testCoverage(t)
	c.SetTable("shop", "k", []string{"a", "b", "c", "d", "e", "f"})
	lo := []change.Value{change.UintValue(1 << 63), change.TextValue(change.Decimal, []byte("-1.50")),
		change.TextValue(change.Datetime, []byte("2020-01-02 03:04:05.000001")), change.TextValue(change.Time, []byte("-838:59:59")),
		change.TextValue(change.Bytes, []byte{0, 0xff, 'a'}), change.EnumValue(2, []byte("b"))}
	if err := c.AddChunk("shop", "k", Chunk{Lo: lo, Pos: covPos("binlog.000003", 9)}); err != nil {
		t.Fatal(err)
	}
	c.SetTable("shop", "whole", nil)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Coverage
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if string(again) != string(data) {
		t.Fatalf("round trip:\n%s\n%s", data, again)
	}
	k := back.Table("shop", "k")
	if d, err := CompareKeys(k.Chunks[0].Lo, lo); err != nil || d != 0 {
		t.Fatalf("key back: %v %v", d, err)
	}
	if back.Table("shop", "whole") == nil || back.Table("shop", "whole").Key != nil {
		t.Fatal("a table held as a whole, with no chunk yet")
	}
	if err := json.Unmarshal([]byte(`{"tables":[{"db":"a","table":"b","key":["x"],"chunks":[{"hi":[{"kind":"string","hex":"61"}],"file":"f.000001","offset":4}]}]}`), &back); err == nil {
		t.Fatal("a string key in a chunk bound")
	}
}

func TestCompareKeys(t *testing.T) {
	txt := func(k change.Kind, s string) change.Value { return change.TextValue(k, []byte(s)) }
	ordered := [][]change.Value{
		// Each list in ascending order.
		{change.IntValue(-1 << 63), change.IntValue(-1), change.IntValue(0), change.IntValue(1 << 62)},
		{change.UintValue(0), change.UintValue(1 << 62), change.UintValue(1 << 63), change.UintValue(^uint64(0))},
		{txt(change.Decimal, "-100.00"), txt(change.Decimal, "-99.99"), txt(change.Decimal, "-0.01"), txt(change.Decimal, "0.00"),
			txt(change.Decimal, "0.01"), txt(change.Decimal, "9.99"), txt(change.Decimal, "10.00"), txt(change.Decimal, "100.00")},
		{txt(change.Date, "0000-00-00"), txt(change.Date, "2020-00-00"), txt(change.Date, "2020-01-01"), txt(change.Date, "9999-12-31")},
		{txt(change.Datetime, "0000-00-00 00:00:00.000"), txt(change.Datetime, "2020-01-01 00:00:00.000"), txt(change.Datetime, "2020-01-01 00:00:00.001")},
		{txt(change.Time, "-838:59:59.000000"), txt(change.Time, "-01:00:00.000000"), txt(change.Time, "-00:00:00.500000"), txt(change.Time, "00:00:00.000000"),
			txt(change.Time, "09:00:00.000000"), txt(change.Time, "10:00:00.000000"), txt(change.Time, "100:00:00.000000"), txt(change.Time, "838:59:59.000000")},
		{txt(change.Bytes, ""), txt(change.Bytes, "\x00"), txt(change.Bytes, "\x00\x00"), txt(change.Bytes, "a"), txt(change.Bytes, "a\x00"), txt(change.Bytes, "b"), txt(change.Bytes, "\xff")},
		{change.EnumValue(1, []byte("z")), change.EnumValue(2, []byte("a"))},
	}
	for _, list := range ordered {
		for i := range list {
			for j := range list {
				want := cmp3(i < j, i > j)
				got, err := CompareKeys(list[i:i+1], list[j:j+1])
				if err != nil || got != want {
					t.Errorf("%s %q vs %q: %d (%v), want %d", list[i].Kind(), list[i].Bytes(), list[j].Bytes(), got, err, want)
				}
			}
		}
	}
	// Composite keys: by the first column, then the next.
	if d, _ := CompareKeys(ik(1, 9), ik(2, 0)); d != -1 {
		t.Error("composite")
	}
	if d, _ := CompareKeys(ik(2, 0), ik(2, 1)); d != -1 {
		t.Error("composite, second column")
	}
	for _, bad := range [][2]change.Value{
		{txt(change.String, "a"), txt(change.String, "b")},
		{change.Float64Value(1), change.Float64Value(2)},
		{change.IntValue(1), change.UintValue(1)},
	} {
		if _, err := CompareKeys(bad[:1], bad[1:]); err == nil {
			t.Errorf("%s vs %s compared", bad[0].Kind(), bad[1].Kind())
		}
	}
}

func TestCoverageCheckDDL(t *testing.T) {
	c := testCoverage(t)
	ddl := func(kind, sql string, tables ...change.TableName) *change.Change {
		return &change.Change{Op: change.DDL, SQL: sql, Pos: covPos("binlog.000003", 4),
			Touches: &change.Touches{Kind: kind, Tables: tables, DBs: []string{"shop"}}}
	}
	if err := c.CheckDDL(ddl("table", "ALTER TABLE orders ADD c INT", change.TableName{DB: "SHOP", Table: "orders"})); err == nil {
		t.Error("ALTER of a covered table in its window")
	}
	if err := c.CheckDDL(ddl("table", "ALTER TABLE items ADD c INT", change.TableName{DB: "shop", Table: "items"})); err != nil {
		t.Error(err)
	}
	if err := c.CheckDDL(ddl("database", "DROP DATABASE shop")); err == nil {
		t.Error("DROP DATABASE of a covered table's database")
	}
	if err := c.CheckDDL(ddl("database", "CREATE DATABASE shop")); err != nil {
		t.Error(err)
	}
	if err := c.CheckDDL(ddl("unknown", "FROB shop")); err == nil {
		t.Error("an unattributed statement in the window")
	}
	// Past the window: complete and every chunk's position passed.
	if err := c.AddChunk("shop", "orders", Chunk{Lo: ik(30), Pos: covPos("binlog.000002", 600)}); err != nil {
		t.Fatal(err)
	}
	late := ddl("table", "ALTER TABLE orders ADD c INT", change.TableName{DB: "shop", Table: "orders"})
	late.Pos = covPos("binlog.000010", 4)
	if err := c.CheckDDL(late); err != nil {
		t.Errorf("at the last chunk's position: %v", err)
	}
}

func TestCoverageMergesOneRunsChunks(t *testing.T) {
	c := NewCoverage()
	c.SetTable("d", "t", []string{"id"})
	p0, p1 := covPos("binlog.000001", 4), covPos("binlog.000002", 4)
	for _, ch := range []Chunk{{Hi: ik(10), Pos: p0}, {Lo: ik(10), Hi: ik(20), Pos: p0}, {Lo: ik(20), Hi: ik(30), Pos: p1}, {Lo: ik(30), Pos: p1}} {
		if err := c.AddChunk("d", "t", ch); err != nil {
			t.Fatal(err)
		}
	}
	tc := c.Table("d", "t")
	if len(tc.Chunks) != 2 || !tc.Complete() || tc.Chunks[0].Hi[0].Int() != 20 || tc.Chunks[1].Lo[0].Int() != 20 {
		t.Fatalf("chunks %+v", tc.Chunks)
	}
}

// An XA transaction's change takes effect at its XA COMMIT (CommitPos),
// not where its rows were logged before XA PREPARE: a chunk read in
// between does not hold it.
func TestCoverageXACommitPos(t *testing.T) {
	c := testCoverage(t)
	tbl := covTableDef()
	prepared, committed := covPos("binlog.000002", 450), covPos("binlog.000002", 600)
	// Key 25's chunk was read at binlog.000002:500, between the two.
	ch := change.Change{Op: change.Insert, Table: tbl, After: row(25, "xa"), Pos: prepared}
	if keep, err := c.Reconcile(&ch); err != nil || keep {
		t.Fatalf("without a commit position: keep %v, %v; want dropped", keep, err)
	}
	ch = change.Change{Op: change.Insert, Table: tbl, After: row(25, "xa"), Pos: prepared, CommitPos: committed}
	if keep, err := c.Reconcile(&ch); err != nil || !keep || ch.Op != change.Insert {
		t.Fatalf("committed after the chunk: keep %v op %v, %v; want the insert", keep, ch.Op, err)
	}
	// An update from a key read before into one read after the commit.
	ch = change.Change{Op: change.Update, Table: tbl, Before: row(5, "a"), After: row(35, "b"), Pos: prepared, CommitPos: committed}
	if keep, err := c.Reconcile(&ch); err != nil || !keep || ch.Op != change.Delete {
		t.Fatalf("update into no chunk: keep %v op %v, %v; want a delete", keep, ch.Op, err)
	}
}

// One coverage holds an initial snapshot's window and incremental
// snapshots' tables: each kind is saved on its own, and only the
// initial snapshot's window stops DDL.
func TestCoverageKinds(t *testing.T) {
	c := NewCoverage()
	at := func(off uint64) change.Position { return change.Position{File: "binlog.000002", Offset: off} }
	c.SetTable("shop", "orders", nil)
	if err := c.AddChunk("shop", "orders", Chunk{Pos: at(500)}); err != nil {
		t.Fatal(err)
	}
	c.SetTable("shop", "items", nil).Incremental = true
	if !c.HasInitial() {
		t.Fatal("HasInitial: false with an initial snapshot's table")
	}
	if got := c.Only(true).Tables(); len(got) != 1 || got[0].Table != "items" {
		t.Fatalf("Only(true): %+v", got)
	}
	if got := c.Only(false).Tables(); len(got) != 1 || got[0].Table != "orders" {
		t.Fatalf("Only(false): %+v", got)
	}
	ddl := func(table string) error {
		return c.CheckDDL(&change.Change{Op: change.DDL, Pos: at(100), SQL: "ALTER TABLE " + table + " ADD c INT",
			Touches: &change.Touches{Kind: "table", Tables: []change.TableName{{DB: "shop", Table: table}}}})
	}
	if ddl("orders") == nil {
		t.Error("DDL inside the initial snapshot's window was not stopped")
	}
	if err := ddl("items"); err != nil {
		t.Errorf("DDL on an incremental snapshot's table was stopped: %v", err)
	}

	// Saved and read back: the kind comes back with each table.
	data, err := c.Only(true).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back := NewCoverage()
	if err := back.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	joined := NewCoverage()
	joined.Adopt(c.Only(false), false)
	joined.Adopt(back, true)
	if tc := joined.Table("shop", "items"); tc == nil || !tc.Incremental {
		t.Errorf("items after a round trip: %+v", tc)
	}
	if tc := joined.Table("shop", "orders"); tc == nil || tc.Incremental {
		t.Errorf("orders after Adopt: %+v", tc)
	}
	// Once the window is passed only the incremental table is left.
	joined.Forget(at(600))
	if joined.HasInitial() || joined.Table("shop", "items") == nil {
		t.Errorf("after Forget: initial %v, items %+v", joined.HasInitial(), joined.Table("shop", "items"))
	}
}
