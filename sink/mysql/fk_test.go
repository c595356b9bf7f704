package mysqlsink

import (
	"context"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestSQLForeignKeyFlag: MySQL 9.6+ handles foreign keys in the SQL layer
// and logs the cascaded child rows itself, before the parent's, every rows
// event flagged USE_SQL_FOREIGN_KEY_F (as mysqlbinlog prints a real 9.6
// Write_rows: "flags: STMT_END_F USE_SQL_FOREIGN_KEY_F", 0x11). An ON
// UPDATE CASCADE then arrives as the child's update to the new key, then
// the parent's: applied with foreign_key_checks=1, the child's update
// would refer to a parent not there yet, and the parent's would cascade a
// second time. Without the flag (InnoDB cascades, MariaDB), only the
// parent's update is logged and the target must cascade.
func TestSQLForeignKeyFlag(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE fk",
		"CREATE TABLE fk.p (id INT PRIMARY KEY)",
		"CREATE TABLE fk.c (id INT PRIMARY KEY, p_id INT, FOREIGN KEY (p_id) REFERENCES fk.p (id) ON UPDATE CASCADE ON DELETE CASCADE)",
		"INSERT INTO fk.p VALUES (1), (2)", "INSERT INTO fk.c VALUES (10, 1), (20, 2)")
	ctx := context.Background()
	s, err := Open(ctx, Config{Addr: srv.Addr(), User: "root"}, Options{ForeignKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	col := func(n string) tablemap.Column {
		return tablemap.Column{Name: n, Type: mysql.MYSQL_TYPE_LONG, Nullable: true, Visible: true}
	}
	p := &tablemap.Table{DB: "fk", Name: "p", Columns: []tablemap.Column{col("id")}, PrimaryKey: []int{0}, PKNames: []string{"id"}}
	c := &tablemap.Table{DB: "fk", Name: "c", Columns: []tablemap.Column{col("id"), col("p_id")}, PrimaryKey: []int{0}, PKNames: []string{"id"}}
	i := change.IntValue
	off := uint64(100)
	apply := func(changes ...change.Change) {
		t.Helper()
		for k := range changes {
			off++
			changes[k].Pos = change.Position{File: "binlog.000001", Offset: off}
			if err := s.Write(ctx, &changes[k]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(ctx, change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: off + 1}}); err != nil {
			t.Fatal(err)
		}
	}
	const sqlFK = change.RowsSQLForeignKey | 1
	// MySQL 9.6, SQL-layer foreign keys: UPDATE p SET id = 3 WHERE id = 1.
	apply(change.Change{Op: change.Update, Table: c, Before: change.Row{i(10), i(1)}, After: change.Row{i(10), i(3)}, Flags: sqlFK},
		change.Change{Op: change.Update, Table: p, Before: change.Row{i(1)}, After: change.Row{i(3)}, Flags: sqlFK})
	// InnoDB foreign keys: UPDATE p SET id = 4 WHERE id = 2 logs only the parent.
	apply(change.Change{Op: change.Update, Table: p, Before: change.Row{i(2)}, After: change.Row{i(4)}, Flags: 1})
	// A session with foreign_key_checks=0: DELETE FROM p WHERE id = 4 cascades nothing.
	apply(change.Change{Op: change.Delete, Table: p, Before: change.Row{i(4)}, Flags: change.RowsNoForeignKeyChecks | 1})
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range srv.QueryStrings(t, "SELECT CONCAT(c.id, ':', COALESCE(c.p_id, 'NULL')) FROM fk.c ORDER BY c.id") {
		got += *r[0] + " "
	}
	if want := "10:3 20:4 "; got != want {
		t.Errorf("child rows %q, want %q", got, want)
	}
	if n := *srv.QueryStrings(t, "SELECT GROUP_CONCAT(id ORDER BY id) FROM fk.p")[0][0]; n != "3" {
		t.Errorf("parent rows %s, want 3", n)
	}
}
