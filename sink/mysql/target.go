package mysqlsink

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// targetSchema caches what the target has: the column names of each table
// (looked up once in the target's information_schema) and, per event-time
// table, which of its columns exist there. DDL empties it.
type targetSchema struct {
	plans map[*tablemap.Table]*plan
	cols  map[[2]string]map[string]bool // nil map: no such table
}

// plan is how one event-time table maps onto the target.
type plan struct {
	name string // `db`.`table`
	keep []bool // the columns that exist on the target; nil: all
}

// maxPlans bounds the plans kept; they are all dropped when it is reached.
const maxPlans = 4096

func (ts *targetSchema) clear() {
	ts.plans, ts.cols = nil, nil
}

func (s *Sink) planFor(t *tablemap.Table) (*plan, error) {
	if p, ok := s.target.plans[t]; ok {
		return p, nil
	}
	cols, err := s.targetColumns(t.DB, t.Name)
	if err != nil {
		return nil, err
	}
	if cols == nil {
		if s.opts.CreateTable == nil {
			return nil, fmt.Errorf("the table does not exist on the target (replay its CREATE TABLE with --ddl apply, or use --create-tables)")
		}
		if err := s.createTable(t); err != nil {
			return nil, err
		}
		if cols, err = s.targetColumns(t.DB, t.Name); err != nil {
			return nil, err
		}
		if cols == nil {
			return nil, fmt.Errorf("the table is still missing on the target after CREATE TABLE")
		}
	}
	p := &plan{name: string(sqltext.AppendTableName(nil, t.DB, t.Name))}
	var missing []string
	for i := range t.Columns {
		if !cols[strings.ToLower(t.Columns[i].Name)] {
			if p.keep == nil {
				p.keep = make([]bool, len(t.Columns))
				for j := range p.keep {
					p.keep[j] = true
				}
			}
			p.keep[i] = false
			missing = append(missing, sqltext.QuoteIdent(t.Columns[i].Name))
		}
	}
	if len(missing) > 0 {
		if !s.opts.IgnoreMissingColumns {
			return nil, fmt.Errorf("column %s does not exist on the target (use --ignore-missing-columns to leave such columns out)", strings.Join(missing, ", "))
		}
		s.logf("--ignore-missing-columns: %s lacks column %s on the target; left out", p.name, strings.Join(missing, ", "))
	}
	if s.target.plans == nil || len(s.target.plans) >= maxPlans {
		// Every reconnect of the source brings new event-time tables.
		s.target.plans = map[*tablemap.Table]*plan{}
	}
	s.target.plans[t] = p
	return p, nil
}

// targetColumns returns the lower-cased column names of db.name on the
// target, or nil when the table does not exist.
func (s *Sink) targetColumns(db, name string) (map[string]bool, error) {
	k := [2]string{db, name}
	if cols, ok := s.target.cols[k]; ok {
		return cols, nil
	}
	st, err := s.stmts.get(s.conn, []byte("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"))
	if err != nil {
		return nil, fmt.Errorf("target: information_schema: %w", err)
	}
	r, err := st.Execute(db, name)
	if err != nil {
		return nil, fmt.Errorf("target: information_schema: %w", err)
	}
	defer r.Close()
	var cols map[string]bool
	for i := range r.RowNumber() {
		// GetString's string shares the result's memory, which the next
		// query reuses once r is closed (go-mysql pools results): the
		// cached names must be copies, or they turn into other names.
		n, _ := r.GetString(i, 0)
		if cols == nil {
			cols = map[string]bool{}
		}
		cols[strings.Clone(strings.ToLower(n))] = true
	}
	if s.target.cols == nil {
		s.target.cols = map[[2]string]map[string]bool{}
	}
	s.target.cols[k] = cols
	return cols, nil
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
	delete(s.target.cols, [2]string{t.DB, t.Name})
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
	if why := sqltext.NotReplayed(c); why != "" {
		s.logf("%s:%d: %s: %s", c.Pos.File, c.Pos.Offset, why, sqltext.OneLine(c.SQL, 200))
		return nil
	}
	if err := s.commitGroup(c.Pos); err != nil {
		return err
	}
	retry := s.ddlRetry && c.Pos == s.cp.DDL
	s.ddlRetry = false
	err := s.runDDL(sqltext.DDLDB(c), c.SQL)
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
		return fmt.Errorf("DDL at %s:%d failed on the target: %w\n%s\n(use --ddl=skip to leave DDL out)", c.Pos.File, c.Pos.Offset, err, c.SQL)
	}
	s.stats.DDL++
	s.ddlPendingCommit = true
	return nil
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
