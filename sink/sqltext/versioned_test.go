package sqltext

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestVersioned(t *testing.T) {
	ts := func(sec uint64, text string) change.Value { return change.TimestampValue(sec, []byte(text)) }
	tbl := &tablemap.Table{DB: "d", Name: "v", PrimaryKey: []int{0, 3}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONG}, {Name: "x", Type: mysql.MYSQL_TYPE_LONG},
		{Name: "row_start", Type: mysql.MYSQL_TYPE_TIMESTAMP2, FSP: 6}, {Name: "row_end", Type: mysql.MYSQL_TYPE_TIMESTAMP2, FSP: 6}}}
	rs, re, ok := ImplicitPeriod(tbl)
	if !ok || rs != 2 || re != 3 {
		t.Fatalf("ImplicitPeriod = %d, %d, %v", rs, re, ok)
	}
	plain := *tbl
	plain.PrimaryKey = []int{0}
	if _, _, ok := ImplicitPeriod(&plain); ok {
		t.Errorf("a table whose primary key lacks row_end is taken for system-versioned")
	}
	const max = "2038-01-19 03:14:07.999999"
	t0, t1, end := ts(100, "1970-01-01 00:01:40.5"), ts(200, "1970-01-01 00:03:20.000250"), ts(2147483647, max)
	row := func(x int64, start, stop change.Value) change.Row {
		return change.Row{change.IntValue(1), change.IntValue(x), start, stop}
	}
	upd := &change.Change{Op: change.Update, Table: tbl, Before: row(1, t0, end), After: row(2, t1, end)}
	a, at, err := Versioned(upd, rs, re)
	if err != nil || a != VersionedUpdate || !SameRow(change.Row{at}, change.Row{t1}) {
		t.Errorf("update of the current row: %v %v %v", a, at, err)
	}
	if h := History(upd, rs, re); !SameRow(h, row(1, t0, t1)) {
		t.Errorf("history row %v", h)
	}
	if q, _ := SetTimestamp(at); q != "SET timestamp = 200.000250" {
		t.Errorf("SetTimestamp: %s", q)
	}
	del := &change.Change{Op: change.Update, Table: tbl, Before: row(1, t0, end), After: row(1, t0, t1)}
	if a, at, err := Versioned(del, rs, re); err != nil || a != VersionedEnd || !SameRow(change.Row{at}, change.Row{t1}) {
		t.Errorf("end of period: %v %v %v", a, at, err)
	}
	odd := &change.Change{Op: change.Update, Table: tbl, Before: row(1, t0, end), After: row(5, t0, t1)}
	if _, _, err := Versioned(odd, rs, re); err == nil || !strings.Contains(err.Error(), "`x`") {
		t.Errorf("an update ending the period and changing x: %v", err)
	}
	hist := &change.Change{Op: change.Delete, Table: tbl, Before: row(1, t0, t1)}
	if _, _, err := Versioned(hist, rs, re); err == nil || !strings.Contains(err.Error(), "DELETE HISTORY") {
		t.Errorf("a history row's delete: %v", err)
	}
	minimal := &change.Change{Op: change.Update, Table: tbl, Before: change.Row{change.IntValue(1), {}, {}, end}, After: row(2, t1, end)}
	if _, _, err := Versioned(minimal, rs, re); err == nil || !strings.Contains(err.Error(), "FULL") {
		t.Errorf("a MINIMAL image: %v", err)
	}
}
