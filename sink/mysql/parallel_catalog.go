package mysqlsink

import (
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// safeTable reports whether changes to c's table may be applied on one
// worker while other workers apply other rows: the target table exists,
// its primary key is the binlog's (by column names, in order), and it has
// no other unique key (two rows could then collide across workers), no
// foreign key either way (a check or cascade reaches other rows), no
// trigger (it writes other rows), and no system versioning. A question
// it cannot answer counts as unsafe. Answers are kept until a DDL;
// "the table does not exist" is not kept (--create-tables makes it).
func (p *Parallel) safeTable(c *change.Change) bool {
	t := c.Table
	if ok, seen := p.safeMap[t]; seen {
		return ok
	}
	name := string(sqltext.AppendTableName(nil, t.DB, t.Name))
	ok, seen := p.safe[name]
	if !seen {
		var known bool
		if ok, known = p.checkTable(t.DB, t.Name, t.PKNames); !known {
			return false
		}
		p.safe[name] = ok
	}
	if len(p.safeMap) >= maxPlans {
		clear(p.safeMap)
	}
	p.safeMap[t] = ok
	return ok
}

func (p *Parallel) checkTable(db, table string, pk []string) (safe, known bool) {
	return checkTable(p.cat, db, table, pk)
}

// checkTable answers safeTable's question on the connection c (also
// asked for batched updates, upsert.go).
func checkTable(c *client.Conn, db, table string, pk []string) (safe, known bool) {
	count := func(q string, args ...any) (int64, error) {
		r, err := c.Execute(q, args...)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		return r.GetInt(0, 0)
	}
	r, err := c.Execute("SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, table)
	if err != nil {
		return false, false
	}
	if r.RowNumber() == 0 {
		r.Close()
		return false, false
	}
	typ, _ := r.GetString(0, 0)
	r.Close()
	if !strings.EqualFold(typ, "BASE TABLE") {
		return false, true
	}
	r, err = c.Execute("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX", db, table)
	if err != nil {
		return false, false
	}
	var got []string
	for i := range r.RowNumber() {
		idx, _ := r.GetString(i, 0)
		col, _ := r.GetString(i, 1)
		if idx != "PRIMARY" {
			r.Close()
			return false, true // another unique key
		}
		got = append(got, strings.ToLower(col))
	}
	r.Close()
	if len(got) != len(pk) || len(pk) == 0 {
		return false, true
	}
	for i := range pk {
		if got[i] != strings.ToLower(pk[i]) {
			return false, true
		}
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ?",
		"SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE WHERE REFERENCED_TABLE_NAME IS NOT NULL AND ((TABLE_SCHEMA = ? AND TABLE_NAME = ?) OR (REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?))",
	} {
		args := []any{db, table}
		if strings.Count(q, "?") == 4 {
			args = append(args, db, table)
		}
		n, err := count(q, args...)
		if err != nil {
			return false, false
		}
		if n > 0 {
			return false, true
		}
	}
	return true, true
}
