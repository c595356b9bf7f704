package mysqlsink

import (
	"context"
	"fmt"
	"math"
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
	s, err := Open(ctx, Config{Addr: srv.Addr(), User: "root"}, Options{LoadData: true, Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
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

// TestFormatLine: the line queued with an insert is what loadRun would
// format from its values when it is loadable, and there is none when it
// is not (an ENUM error value, NaN, a BIT wider than 64, a one-column
// empty text, a row over bulkMaxRowLen, a versioned table).
func TestFormatLine(t *testing.T) {
	tb := &tablemap.Table{DB: "d", Name: "t", Columns: []tablemap.Column{
		{Name: "i", Type: mysql.MYSQL_TYPE_LONG}, {Name: "y", Type: mysql.MYSQL_TYPE_YEAR},
		{Name: "b", Type: mysql.MYSQL_TYPE_BIT, Bits: 12}, {Name: "f", Type: mysql.MYSQL_TYPE_DOUBLE},
		{Name: "e", Type: mysql.MYSQL_TYPE_ENUM}, {Name: "s", Type: mysql.MYSQL_TYPE_VARCHAR},
	}}
	wide := &tablemap.Table{DB: "d", Name: "w", Columns: []tablemap.Column{{Name: "b", Type: mysql.MYSQL_TYPE_BIT, Bits: 72}}}
	plain, versioned := &plan{rowStart: -1, rowEnd: -1}, &plan{rowStart: 0, rowEnd: 1}
	row := func(f float64, e uint64, s string) change.Row {
		return change.Row{change.IntValue(-7), change.IntValue(0), change.UintValue(0xabc), change.Float64Value(f),
			change.RawValue(change.Enum, e, []byte("x")), change.TextValue(change.String, []byte(s))}
	}
	all := []int{0, 1, 2, 3, 4, 5}
	for _, c := range []struct {
		name string
		o    op
		ok   bool
	}{
		{"plain", op{c: opChange{Table: tb, After: row(1.5, 1, "a\tb\\c\n\x00")}, plan: plain, cols: all, size: 100}, true},
		{"NULL and no columns left out", op{c: opChange{Table: tb, After: change.Row{change.NullValue(), change.IntValue(2024)}}, plan: plain, cols: []int{0, 1}, size: 16}, true},
		{"ENUM error value", op{c: opChange{Table: tb, After: row(1.5, 0, "a")}, plan: plain, cols: all, size: 100}, false},
		{"NaN", op{c: opChange{Table: tb, After: row(math.NaN(), 1, "a")}, plan: plain, cols: all, size: 100}, false},
		{"one empty text column", op{c: opChange{Table: tb, After: row(1, 1, "")}, plan: plain, cols: []int{5}, size: 8}, false},
		{"too large", op{c: opChange{Table: tb, After: row(1, 1, "a")}, plan: plain, cols: all, size: bulkMaxRowLen + 1}, false},
		{"BIT wider than 64", op{c: opChange{Table: wide, After: change.Row{change.UintValue(1)}}, plan: plain, cols: []int{0}, size: 8}, false},
		{"versioned", op{c: opChange{Table: tb, After: row(1, 1, "a")}, plan: versioned, cols: all, size: 100}, false},
	} {
		var s Sink
		o := c.o
		s.formatLine(&o)
		if ok := o.line != nil; ok != c.ok {
			t.Errorf("%s: line %q, want one: %v", c.name, o.line, c.ok)
			continue
		}
		if c.ok && loadable(&o) {
			if want := appendLoadLine(nil, &o); string(o.line) != string(want) {
				t.Errorf("%s: line %q, loadRun formats %q", c.name, o.line, want)
			}
		} else if c.ok {
			t.Errorf("%s: a line, but loadable says no", c.name)
		}
	}
}
