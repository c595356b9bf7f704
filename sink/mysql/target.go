package mysqlsink

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/ddl"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// targetSchema caches what the target has: each table's catalog (looked
// up once in the target's information_schema, catalog.go) and, per
// event-time table, how its columns map there. DDL empties it.
type targetSchema struct {
	plans  map[*tablemap.Table]*plan
	tables map[[2]string]*tableInfo
}

// plan is how one event-time table maps onto the target.
type plan struct {
	name string // `db`.`table`
	keep []bool // the columns that exist on the target (WHERE); nil: all
	ins  []bool // the columns an INSERT writes: keep without generated ones; nil: all
	set  []bool // the columns an UPDATE sets: ins without period columns; nil: all
	// rowStart, rowEnd are the period columns of a system-versioned
	// table (versioned.go), or -1.
	rowStart, rowEnd int
	// upsert: the table takes batched statements (checkTable):
	// updates as INSERT … ON DUPLICATE KEY UPDATE (upsert.go), deletes
	// as DELETE … IN (delete.go): 1 yes, -1 no, 0 not asked yet.
	upsert int8
	// deleteKey: the target's key column has the type of the binlog's
	// key values (delete.go): 1 yes, -1 no, 0 not asked yet.
	deleteKey int8
	// noLoad: inserts go by INSERT, never LOAD DATA (a textual
	// column, catalog.go).
	noLoad bool
	// enums: the table has an ENUM column (prepareOp looks for ENUM
	// error values only then).
	enums bool
}

// maxPlans bounds the plans kept; they are all dropped when it is reached.
const maxPlans = 4096

func (p *plan) versioned() bool { return p.rowStart >= 0 && p.rowEnd >= 0 }

func (ts *targetSchema) clear() {
	ts.plans, ts.tables = nil, nil
}

func (s *Sink) planFor(t *tablemap.Table) (*plan, error) {
	if p, ok := s.target.plans[t]; ok {
		return p, nil
	}
	if err := s.sync(); err != nil { // the catalog is read on the connection (background.go)
		return nil, err
	}
	ti, err := s.tableInfo(t.DB, t.Name)
	if err != nil {
		return nil, err
	}
	if ti.cols == nil {
		if s.opts.CreateTable == nil {
			return nil, fmt.Errorf("the table does not exist on the target (replay its CREATE TABLE with --ddl apply, or use --create-tables)")
		}
		if err := s.createTable(t); err != nil {
			return nil, err
		}
		if ti, err = s.tableInfo(t.DB, t.Name); err != nil {
			return nil, err
		}
		if ti.cols == nil {
			return nil, fmt.Errorf("the table is still missing on the target after CREATE TABLE")
		}
	}
	p := &plan{name: string(sqltext.AppendTableName(nil, t.DB, t.Name)), rowStart: -1, rowEnd: -1}
	if len(ti.triggers) > 0 && !s.opts.FireTriggers {
		return nil, fmt.Errorf("the table has triggers on the target (%s): replay would fire them on every replayed row, "+
			"although the binlog already holds what the source's triggers did (a native replica does not fire them for row events). "+
			"Drop them on the target, or use --fire-triggers if firing them again is what you want", strings.Join(ti.triggers, ", "))
	}
	mask := func() []bool {
		m := make([]bool, len(t.Columns))
		for j := range m {
			m[j] = true
		}
		return m
	}
	var missing []string
	for i := range t.Columns {
		p.enums = p.enums || t.Columns[i].Type == mysql.MYSQL_TYPE_ENUM || t.Columns[i].EnumValues != nil
		ci, ok := ti.cols[strings.ToLower(t.Columns[i].Name)]
		if !ok {
			if p.keep == nil {
				p.keep = mask()
			}
			p.keep[i] = false
			missing = append(missing, sqltext.QuoteIdent(t.Columns[i].Name))
		}
		if !ok || ci.generated {
			if p.ins == nil {
				p.ins = mask()
			}
			p.ins[i] = false
		}
		if !ok || ci.generated || ci.period != 0 {
			if p.set == nil {
				p.set = mask()
			}
			p.set[i] = false
		}
		if ok && ci.textual {
			p.noLoad = true
		}
		if ok && ci.period != 0 {
			if ci.trxID {
				return nil, fmt.Errorf("the table is system-versioned by transaction id on the target (%s): its history cannot be replayed, as the source's transaction ids mean nothing there", sqltext.QuoteIdent(t.Columns[i].Name))
			}
			if ci.period == 's' {
				p.rowStart = i
			} else {
				p.rowEnd = i
			}
		}
	}
	if len(missing) > 0 {
		if !s.opts.IgnoreMissingColumns {
			return nil, fmt.Errorf("column %s does not exist on the target (use --ignore-missing-columns to leave such columns out)", strings.Join(missing, ", "))
		}
		s.logf("--ignore-missing-columns: %s lacks column %s on the target; left out", p.name, strings.Join(missing, ", "))
	}
	if p.versioned() {
		if err := s.insertHistory(); err != nil {
			return nil, err
		}
	}
	if s.target.plans == nil || len(s.target.plans) >= maxPlans {
		// Every reconnect of the source brings new event-time tables.
		s.target.plans = map[*tablemap.Table]*plan{}
	}
	s.target.plans[t] = p
	return p, nil
}

// tableInfo returns db.name's catalog on the target, cached.
func (s *Sink) tableInfo(db, name string) (*tableInfo, error) {
	k := [2]string{db, name}
	if ti, ok := s.target.tables[k]; ok {
		return ti, nil
	}
	ti, err := s.loadTableInfo(db, name)
	if err != nil {
		return nil, err
	}
	if s.target.tables == nil {
		s.target.tables = map[[2]string]*tableInfo{}
	}
	s.target.tables[k] = ti
	return ti, nil
}

// createTable creates t on the target from its TABLE_MAP metadata, on a
// second session: the main one may be inside a transaction, which a
// CREATE TABLE would commit.
func (s *Sink) createTable(t *tablemap.Table) error {
	sql, err := s.opts.CreateTable(t, strings.Contains(s.conn.GetServerVersion(), "MariaDB"))
	if err != nil {
		return fmt.Errorf("--create-tables: %w", err)
	}
	if s.ddlConn == nil {
		if s.ddlConn, err = dial(context.Background(), s.cfg); err != nil {
			return err
		}
	}
	if t.DB != "" {
		if _, err := s.ddlConn.Execute("CREATE DATABASE IF NOT EXISTS " + sqltext.QuoteIdent(t.DB)); err != nil {
			return fmt.Errorf("--create-tables: target: %w", err)
		}
	}
	if _, err := s.ddlConn.Execute(sql); err != nil {
		if myErrorCode(err) != mysql.ER_TABLE_EXISTS_ERROR {
			return fmt.Errorf("--create-tables: target: %w\n%s", err, sql)
		}
	}
	s.logf("--create-tables: created %s", string(sqltext.AppendTableName(nil, t.DB, t.Name)))
	delete(s.target.tables, [2]string{t.DB, t.Name})
	return nil
}

// alreadyDone are the errors a DDL statement gives when it already took
// effect: a DDL interrupted by a crash is run again, and these errors are
// then taken as "done".
var alreadyDone = map[uint16]bool{
	mysql.ER_DB_CREATE_EXISTS: true, mysql.ER_DB_DROP_EXISTS: true,
	mysql.ER_TABLE_EXISTS_ERROR: true, mysql.ER_BAD_TABLE_ERROR: true, mysql.ER_NO_SUCH_TABLE: true,
	mysql.ER_DUP_FIELDNAME: true, mysql.ER_DUP_KEYNAME: true, mysql.ER_CANT_DROP_FIELD_OR_KEY: true,
	mysql.ER_BAD_FIELD_ERROR: true,
	1304:                     true, 1305: true, // stored routine exists / does not exist
	1359: true, 1360: true, // trigger exists / does not exist
	1396: true, // CREATE/DROP USER failed
}

// ddl runs a DDL statement in its default database. The group before it
// is committed first, with a note in the checkpoint that this DDL is
// about to run; its Commit clears the note. After a crash in between, the
// DDL is run again and the errors that mean "already done" are ignored.
func (s *Sink) ddl(c *change.Change) error {
	if s.opts.KeepDropped && sqltext.IsDrop(c.SQL) {
		s.logf("--keep-dropped: skipped at %s:%d: %.200s", c.Pos.File, c.Pos.Offset, c.SQL)
		return nil
	}
	why := sqltext.NotReplayed(c, s.opts.Accounts)
	if why == "" && !s.opts.FireTriggers && sqltext.IsTriggerDDL(c.SQL) {
		why = "trigger DDL skipped (the binlog holds what the source's triggers did; --fire-triggers replays it)"
	}
	if why != "" {
		s.logf("%s:%d: %s: %s", c.Pos.File, c.Pos.Offset, why, sqltext.OneLine(c.SQL, 200))
		return nil
	}
	if err := s.commitGroup(c.Pos); err != nil {
		return err
	}
	if err := s.setForeignKeyChecks(false); err != nil {
		return err
	}
	retry := s.ddlRetry && c.Pos == s.cp.DDL
	s.ddlRetry = false
	set, reset := sqltext.DDLSession(c)
	err := s.runDDLAt(sqltext.DDLDB(c), c.SQL, set, reset)
	if err != nil && retry && alreadyDone[myErrorCode(err)] {
		s.logf("DDL at %s:%d had already run before the restart (%v); going on", c.Pos.File, c.Pos.Offset, err)
		err = nil
	}
	s.target.clear()
	s.stmts.clear()
	if err != nil {
		// It did not run: clear the note, so that a restart does not take
		// the same error for "already done".
		if serr := s.saveCheckpoint(s.saved, change.Position{}); serr != nil {
			s.logf("target: clearing the DDL note in the checkpoint: %v", serr)
		}
		shown, _ := ddl.Redact(c.SQL) // --replay-accounts: no password in the message
		return fmt.Errorf("DDL at %s:%d failed on the target: %w\n%s\n(use --ddl=skip to leave DDL out)", c.Pos.File, c.Pos.Offset, err, shown)
	}
	s.stats.DDL++
	s.ddlPendingCommit = true
	return nil
}

// runDDLAt runs a DDL statement under set, then runs reset
// (sqltext.DDLSession; none when ""): at the source's @@timestamp and
// time_zone, as a native replica runs it, so that CURRENT_TIMESTAMP and
// NOW() in it are the source's.
func (s *Sink) runDDLAt(db, sql, set, reset string) error {
	if set == "" {
		return s.runDDL(db, sql)
	}
	if err := s.plain(set); err != nil {
		return fmt.Errorf("target: %s: %w", set, err)
	}
	err := s.runDDL(db, sql)
	if rerr := s.plain(reset); err == nil && rerr != nil {
		err = fmt.Errorf("target: %s: %w", reset, rerr)
	}
	return err
}

func (s *Sink) runDDL(db, sql string) error {
	if db != "" && db != s.curDB {
		if err := s.conn.UseDB(db); err != nil {
			return fmt.Errorf("USE %s: %w", sqltext.QuoteIdent(db), err)
		}
		s.curDB = db
	}
	r, err := s.conn.Execute(sql)
	if err != nil {
		return err
	}
	r.Close()
	return nil
}
