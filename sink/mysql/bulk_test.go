package mysqlsink

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestBulkLoadRefusedLater: a target that allowed LOAD DATA LOCAL when
// the sink connected and refuses it later (SET GLOBAL local_infile = 0)
// gets the rows as INSERTs, with a note, and no error.
func TestBulkLoadRefusedLater(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE bk", "CREATE TABLE bk.t (id INT PRIMARY KEY, s VARCHAR(10))")
	ctx := context.Background()
	var notes []string
	s, err := Open(ctx, Config{Addr: srv.Addr(), User: "root"}, Options{Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if !s.bulkOK {
		t.Fatal("the test server does not allow LOAD DATA LOCAL")
	}
	srv.Exec(t, "SET GLOBAL local_infile = 0")
	defer srv.Exec(t, "SET GLOBAL local_infile = 1")
	tb := &tablemap.Table{DB: "bk", Name: "t", PrimaryKey: []int{0}, PKNames: []string{"id"}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONG, Visible: true},
		{Name: "s", Type: mysql.MYSQL_TYPE_VARCHAR, Nullable: true, Visible: true, Collation: 45},
	}}
	for i := range 300 {
		c := change.Change{Op: change.Insert, Table: tb, Pos: change.Position{File: "binlog.000001", Offset: 100},
			RowIndex: i, After: change.Row{change.IntValue(int64(i)), change.TextValue(change.String, []byte("r\t\\"))}}
		if err := s.Write(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: 200}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := *srv.QueryStrings(t, "SELECT CONCAT(COUNT(*), ' ', SUM(s = 'r\\t\\\\')) FROM bk.t")[0][0]; got != "300 300" {
		t.Errorf("rows, rows with the exact text: %s, want 300 300", got)
	}
	if s.bulkOK || !strings.Contains(strings.Join(notes, "\n"), "refuses LOAD DATA LOCAL") {
		t.Errorf("no note about LOAD DATA LOCAL: %q", notes)
	}
}
