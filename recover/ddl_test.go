package recovery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// The catalog follows names across DDL: daily re-creation, renames both
// ways, truncates, DROP DATABASE, and tables older than the binlogs.
func TestCatalog(t *testing.T) {
	c := newCatalog()
	pos := 100
	ddl := func(db, sql string) {
		pos += 100
		c.ddl(&Event{Pos: change.Position{File: "binlog.000001", Offset: uint64(pos)}, DB: db, SQL: sql})
	}
	seen := func(db, name string) change.Position {
		pos += 100
		p := change.Position{File: "binlog.000001", Offset: uint64(pos)}
		c.seen(db, name, p)
		return p
	}
	at := func(db, name string, p change.Position) int {
		o := c.objectAt(db, name, change.Position{File: p.File, Offset: p.Offset + 1})
		if o == nil {
			return 0
		}
		return o.id
	}
	p1 := seen("s", "old")                   // 1: before the binlogs
	ddl("s", "CREATE TABLE t (a INT)")       // 2
	p2 := seen("s", "t")                     //
	ddl("s", "RENAME TABLE t TO t_old")      // 2 is t_old
	ddl("", "CREATE TABLE `s`.`t` (a INT)")  // 3
	p3 := seen("s", "t")                     //
	p2b := seen("s", "t_old")                //
	ddl("s", "DROP TABLE t_old")             // 2 ends
	ddl("s", "TRUNCATE t")                   // 3 ends, 4 begins
	p4 := seen("S", "T")                     // case folded
	ddl("s", "ALTER TABLE t RENAME TO s2.u") // 4 is s2.u
	ddl("x", "CREATE TABLE s.t LIKE s2.u")   // 5
	ddl("x", "DROP DATABASE s2")             // 4 ends
	ddl("s", "DROP TABLE IF EXISTS nothing") // nothing
	ddl("s", "DROP TABLE gone")              // 6: before the binlogs, dropped
	ddl("s", "CREATE TABLE IF NOT EXISTS t (a INT)")
	ddl("s", "CREATE OR REPLACE TABLE t (b INT)") // 5 ends, 7 begins

	for _, c := range []struct {
		DB, Name string
		p        change.Position
		want     int
	}{{"s", "old", p1, 1}, {"s", "t", p2, 2}, {"s", "t", p3, 3}, {"s", "t_old", p2b, 2}, {"s", "t", p4, 4}, {"s", "t_old", p3, 2}, {"s", "t", p1, 0}} {
		if got := at(c.DB, c.Name, c.p); got != c.want {
			t.Errorf("%s.%s at %d: object %d, want %d", c.DB, c.Name, c.p.Offset, got, c.want)
		}
	}
	var got []string
	for _, o := range c.objects {
		var names []string
		for _, s := range o.spans {
			names = append(names, s.DB+"."+s.Name)
		}
		created := "before"
		if o.Created != nil {
			created = o.CreatedBy
		}
		got = append(got, fmt.Sprintf("%d %s %s %s", o.id, created, o.End, strings.Join(names, ">")))
	}
	want := []string{
		"1 before still exists s.old",
		"2 CREATE TABLE DROP TABLE s.t>s.t_old",
		"3 CREATE TABLE TRUNCATE s.t",
		"4 TRUNCATE DROP DATABASE s.t>s2.u",
		"5 CREATE TABLE … LIKE s2.u CREATE OR REPLACE s.t",
		"6 before DROP TABLE s.gone",
		"7 CREATE TABLE still exists s.t",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFoldPattern(t *testing.T) {
	if got := foldPattern("Ab*1"); got != `[aA][bB]\*1` {
		t.Errorf("foldPattern = %s", got)
	}
}

func TestRewriteCreate(t *testing.T) {
	final := &tablemap.Table{Columns: []tablemap.Column{
		{Name: "a", Type: mysql.MYSQL_TYPE_VARCHAR, Collation: 8},
		{Name: "b", Type: mysql.MYSQL_TYPE_VARCHAR, Collation: 33},
		{Name: "c", Type: mysql.MYSQL_TYPE_BLOB, Collation: 8},
		{Name: "d", Type: mysql.MYSQL_TYPE_LONG},
	}}
	for _, c := range []struct{ sql, want, warn string }{
		{"CREATE TABLE IF NOT EXISTS `x`.t (a VARCHAR(3), b VARCHAR(3) CHARACTER SET utf8mb3, c TEXT, d INT, KEY (a));",
			"CREATE TABLE `new`.`t2` (a VARCHAR(3), b VARCHAR(3) CHARACTER SET utf8mb3, c TEXT, d INT, KEY (a)) DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci", ""},
		{"CREATE TABLE t (a VARCHAR(3), b VARCHAR(3), c TEXT) ENGINE=InnoDB DEFAULT CHARSET=latin1",
			"CREATE TABLE `new`.`t2` (a VARCHAR(3), b VARCHAR(3), c TEXT) ENGINE=InnoDB DEFAULT CHARSET=latin1", ""},
		{"CREATE TABLE t (a VARCHAR(3), b VARCHAR(3), d INT)",
			"CREATE TABLE `new`.`t2` (a VARCHAR(3), b VARCHAR(3), d INT)", "they differ"},
		{"CREATE TABLE `t` (\n  `d` int NOT NULL\n) ENGINE=InnoDB START TRANSACTION",
			"CREATE TABLE `new`.`t2` (\n  `d` int NOT NULL\n) ENGINE=InnoDB", ""},
	} {
		as := schemahist.ParseDDL(c.sql, "x")
		got, warn := rewriteCreate(c.sql, as[0].T, "new", "t2", final, false)
		if got != c.want || !strings.Contains(warn, c.warn) || (c.warn == "" && warn != "") {
			t.Errorf("%s\n got %q (%s)\nwant %q", c.sql, got, warn, c.want)
		}
	}
}
