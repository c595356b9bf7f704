package mysqlsink

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestTargetColumnsOutliveResults: the target's column names, looked up
// once per table, stay right while later queries run. go-mysql's
// GetString returns strings that share the memory of a pooled result,
// which the next query reuses: kept as they were, the names of t turned
// into those of u ("xd", "y"), and the next event-time table of t (after
// a source restart or reconnect, a new TABLE_MAP) failed with "column
// `id`, `k` does not exist on the target".
func TestTargetColumnsOutliveResults(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE tc",
		"CREATE TABLE tc.t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE tc.u (x INT PRIMARY KEY, y INT)")
	s, err := Open(context.Background(), Config{Addr: srv.Addr(), User: "root"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	table := func(name string, cols ...string) *tablemap.Table {
		tb := &tablemap.Table{DB: "tc", Name: name, PrimaryKey: []int{0}, PKNames: cols[:1]}
		for _, c := range cols {
			tb.Columns = append(tb.Columns, tablemap.Column{Name: c, Type: mysql.MYSQL_TYPE_LONG, Visible: true})
		}
		return tb
	}
	id := int64(0)
	insert := func(tb *tablemap.Table) {
		t.Helper()
		id++
		c := &change.Change{Op: change.Insert, Table: tb, After: change.Row{change.IntValue(id), change.IntValue(id)},
			Pos: change.Position{File: "binlog.000001", Offset: uint64(100 + id)}}
		if err := s.Write(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(context.Background(), change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: uint64(200 + id)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Each round is what a reconnect does: new event-time tables, whose
	// plans are made again from the cached column names.
	for round := 0; round < 20; round++ {
		for _, tb := range []*tablemap.Table{table("t", "id", "k"), table("u", "x", "y")} {
			insert(tb)
		}
		for k, ti := range s.target.tables {
			cols := ti.cols
			for c := range cols {
				if c != "id" && c != "k" && c != "x" && c != "y" {
					t.Fatalf("round %d: the cached columns of %s.%s changed: %q", round, k[0], k[1], fmt.Sprint(cols))
				}
			}
		}
	}
}
