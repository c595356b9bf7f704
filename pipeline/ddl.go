package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/ddl"
)

// DDL selection: a DDL statement passes the table filters by the tables
// it touches, all of them, whatever its default database:
//
//   - a statement on tables passes when all its tables pass, is left out
//     when none does, and stops the run when some do and some do not
//     (applying it would touch excluded tables, leaving it out would
//     leave selected ones behind);
//   - CREATE/ALTER DATABASE passes when some table of the database can;
//     DROP DATABASE when every table of it does (none: left out; some:
//     stops);
//   - routines (procedures, functions, events, DROP TRIGGER) pass when
//     every table of their database does, are left out when none can,
//     and are reported and left out otherwise;
//   - account statements (users, roles, grants) touch no table: they pass
//     only without table filters, with their secrets redacted, or as
//     logged with --replay-accounts (Options.Accounts);
//   - a statement binlogcdc does not recognise passes without filters;
//     with filters it is reported and left out.
//
// Without --tables/--exclude-tables every statement passes.

// ddlChange builds the DDL change for a statement, or returns nil when the
// filters leave it out.
func (p *Pipeline) ddlChange(ev *binlog.Event, q query) (*change.Change, error) {
	st := ddl.Parse(q.sql, q.db)
	c := &change.Change{Op: change.DDL, DB: q.db, SQL: q.sql, Pos: ev.Pos, GTID: p.tx.gtid}
	c.Start, c.TimeZone = time.Unix(int64(ev.Header.Timestamp), 0).UTC(), q.tz
	if q.micros >= 0 {
		c.Start = c.Start.Add(time.Duration(q.micros) * time.Microsecond)
	}
	c.Touches = &change.Touches{Kind: st.Kind.String(), DBs: st.DBs, OwnDB: !st.NeedsDB}
	for _, n := range st.Tables {
		c.Touches.Tables = append(c.Touches.Tables, change.TableName{DB: n.DB, Table: n.Table})
	}
	if st.Kind == ddl.Account {
		if p.opts.Accounts {
			return c, nil
		}
		c.SQL, _ = ddl.Redact(q.sql)
	}
	f := p.opts.Filter
	if !f.active() {
		return c, nil
	}
	switch st.Kind {
	case ddl.Table:
		var in, out []string
		for _, n := range st.Tables {
			if f.Table(n.DB, n.Table) {
				in = append(in, QuoteName(n.DB, n.Table))
			} else {
				out = append(out, QuoteName(n.DB, n.Table))
			}
		}
		if len(out) == 0 {
			return c, nil
		}
		if len(in) == 0 {
			return nil, nil
		}
		return nil, p.mixed(ev, st, fmt.Sprintf("selected tables %s and tables the filters leave out %s", strings.Join(in, ", "), strings.Join(out, ", ")))
	case ddl.Database:
		any, all := f.Database(st.DBs[0])
		switch {
		case all, any && !st.Drop:
			return c, nil
		case !any:
			return nil, nil
		}
		return nil, p.mixed(ev, st, fmt.Sprintf("the database %s, which holds tables the filters select and tables they leave out", "`"+st.DBs[0]+"`"))
	case ddl.Routine:
		any, all := f.Database(st.DBs[0])
		switch {
		case all:
			return c, nil
		case !any:
			return nil, nil
		}
		p.logf("%s:%d: %s in the database %s, where the filters select some tables only: binlogcdc cannot tell which tables it concerns and leaves it out; apply it by hand if the target needs it",
			ev.Pos.File, ev.Pos.Offset, st.Verb, "`"+st.DBs[0]+"`")
		return nil, nil
	case ddl.Account: // with --replay-accounts it passed above
		if p.opts.Replaying {
			p.logf("%s:%d: %s not replayed: account management (users, roles, grants, passwords) is replayed only with --replay-accounts",
				ev.Pos.File, ev.Pos.Offset, st.Verb)
		} else {
			p.logf("%s:%d: %s left out: account management (users, roles, grants, passwords) concerns no table, so --tables/--exclude-tables select none of it",
				ev.Pos.File, ev.Pos.Offset, st.Verb)
		}
		return nil, nil
	}
	p.logf("%s:%d: a statement binlogcdc cannot attribute to tables (%s…): with --tables/--exclude-tables it is left out; apply it by hand if the target needs it",
		ev.Pos.File, ev.Pos.Offset, verbOf(st))
	return nil, nil
}

func verbOf(st ddl.Statement) string {
	if st.Verb == "" {
		return "?"
	}
	return st.Verb
}

// mixed is the error for a statement that touches both selected tables
// and tables the filters leave out (exit status 1: the binlog is fine).
func (p *Pipeline) mixed(ev *binlog.Event, st ddl.Statement, what string) error {
	return fmt.Errorf("%s:%d: %s touches %s: applying it would change tables the filters leave out, leaving it out would leave the selected ones behind; nothing of it was written\n"+
		"hint: make --tables/--exclude-tables select all of its tables or none of them; or leave DDL out (--ddl=skip; JSON: without --ddl); "+
		"or apply the part that concerns the selected tables by hand and resume after this statement (read: --start-position at the next transaction)",
		ev.Pos.File, ev.Pos.Offset, st.Verb, what)
}

// writeDDL passes a DDL statement on when the filters select it.
func (p *Pipeline) writeDDL(ctx context.Context, ev *binlog.Event, q query, schema []change.SchemaChange) error {
	c, err := p.ddlChange(ev, q)
	if err != nil || c == nil {
		return err
	}
	c.Schema = schema
	c.Time, c.TimeMicro = p.eventTime(ev)
	c.ServerID = ev.Header.ServerID
	if err := p.cov.CheckDDL(c); err != nil {
		return err
	}
	if p.opts.DDLSplit == DDLWhole || (len(schema) == 0 && p.opts.DDLSplit == DDLPerChangeOrWhole) {
		return p.writeDDLChange(ctx, c)
	}
	for i := range schema {
		one := *c
		one.Schema = schema[i : i+1]
		if err := p.writeDDLChange(ctx, &one); err != nil {
			return err
		}
	}
	return nil
}

// DDLSplit is how a DDL statement is written (Options.DDLSplit).
type DDLSplit uint8

const (
	// DDLWhole: one change per statement.
	DDLWhole DDLSplit = iota
	// DDLPerChange: one change per table or database the statement
	// changed, none for a statement that changed none (Maxwell).
	DDLPerChange
	// DDLPerChangeOrWhole: one change per table or database the
	// statement changed, the statement whole when it changed none
	// (Debezium).
	DDLPerChangeOrWhole
)

func (p *Pipeline) writeDDLChange(ctx context.Context, c *change.Change) error {
	if err := p.sink.Write(ctx, c); err != nil {
		p.opts.Metrics.SinkError()
		return err
	}
	p.countOp(c.Op)
	p.Stats.DDL++
	return nil
}

// checkDDL stops at a statement inside the coverage's window that is not
// passed on (see Coverage.CheckDDL).
func (p *Pipeline) checkDDL(ev *binlog.Event, q query) error {
	c, err := p.ddlChange(ev, q)
	if err != nil || c == nil {
		return err
	}
	return p.cov.CheckDDL(c)
}

// noteDDL marks the table patterns that match a DDL statement's tables
// when DDL is not passed on: the tables are still mentioned by the input
// (see Filter.Unmatched).
func (p *Pipeline) noteDDL(q query) {
	if !p.opts.Filter.active() {
		return
	}
	for _, n := range ddl.Parse(q.sql, q.db).Tables {
		p.opts.Filter.Table(n.DB, n.Table)
	}
}

// dmlSelected reports whether a row statement logged as text (not as row
// events) may write a selected table: the one table it names passes the
// filters, whatever its default database; a statement on several tables,
// or one binlogcdc cannot read, may.
func (p *Pipeline) dmlSelected(q query) bool {
	if !p.opts.Filter.active() {
		return true
	}
	if n, ok := ddl.DMLTarget(q.sql, q.db); ok {
		return p.opts.Filter.Table(n.DB, n.Table)
	}
	return true
}
