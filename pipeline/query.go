package pipeline

// The statements of QUERY events: BEGIN, COMMIT, SAVEPOINT, XA, DDL
// (selected by the tables it touches: ddl.go), and a change logged as a
// statement, which is refused (binlog_format must be ROW).

import (
	"context"
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/schemahist"
)

func (p *Pipeline) handleQuery(ctx context.Context, ev *binlog.Event, q query) error {
	switch q.kind {
	case queryBegin:
		if !p.tx.open {
			if err := p.begin(ctx, ev); err != nil {
				return err
			}
		}
		p.tx.explicit = true
		return nil
	case queryCommit:
		// ROLLBACK is only logged for transactions that changed
		// non-transactional tables; those changes happened and were logged.
		return p.commit(ctx, ev)
	case querySavepoint:
		return nil
	case queryXAStart:
		if !p.tx.open {
			if err := p.begin(ctx, ev); err != nil {
				return err
			}
		}
		p.tx.explicit, p.tx.xid = true, q.xid
		return nil
	case queryXAEnd:
		if p.tx.open && p.tx.xid != "" {
			p.tx.xid = q.xid
		}
		return nil
	case queryXACommit, queryXARollback:
		return p.xaOutcome(ctx, ev, q)
	case queryDML:
		if p.tx.skip || !p.dmlSelected(q) { // ddl.go
			return nil
		}
		return p.fail(ev, fmt.Errorf("statement logged instead of rows: %.80s", q.sql), hintStatement)
	}
	// DDL and other statements: they commit on their own.
	if !p.tx.open {
		if err := p.begin(ctx, ev); err != nil {
			return err
		}
	}
	var schema []change.SchemaChange
	if p.opts.Schema != nil && !p.tx.skip {
		p.opts.Schema.SetFlavor(p.ev.MariaDB)
		warns, sc := p.opts.Schema.ApplyChanges(schemahist.Statement{SQL: q.sql, DB: q.db, Pos: ev.Pos,
			CollationServer: q.collServer, CollationDatabase: q.collDB})
		for _, w := range warns {
			p.logf("%s", w)
		}
		schema = sc
	}
	if !p.tx.skip && !p.tx.collect && p.opts.DDL {
		if err := p.writeDDL(ctx, ev, q, schema); err != nil { // ddl.go
			return err
		}
	} else if !p.tx.skip {
		p.noteDDL(q) // ddl.go
		if !p.cov.Empty() && !p.tx.collect {
			if err := p.checkDDL(ev, q); err != nil { // ddl.go
				return err
			}
		}
	}
	if p.ddlContinues(q) {
		return nil // its rows and XID follow
	}
	return p.commit(ctx, ev)
}

// ddlContinues reports a DDL statement that is the first part of a
// transaction, not one on its own: CREATE TABLE ... SELECT, which servers
// with atomic DDL log as one transaction with the rows it inserted
// (MariaDB: a GTID without the standalone flag; MySQL 8.0.21+: the
// statement logged with a trailing START TRANSACTION).
func (p *Pipeline) ddlContinues(q query) bool {
	if p.ev.MariaDB {
		return p.tx.gtid != "" && !p.tx.standalone
	}
	return strings.HasSuffix(strings.ToUpper(strings.TrimRight(q.sql, " \t\r\n;")), "START TRANSACTION")
}

// xaOutcome handles XA COMMIT and XA ROLLBACK of a prepared transaction:
// a group of its own that releases (or drops) the changes held since its
// XA PREPARE, as one transaction with this group's GTID and time.
func (p *Pipeline) xaOutcome(ctx context.Context, ev *binlog.Event, q query) error {
	if !p.tx.open {
		if err := p.begin(ctx, ev); err != nil {
			return err
		}
	}
	held, ok := p.xa[q.xid]
	delete(p.xa, q.xid)
	if q.kind == queryXACommit && !p.tx.skip && !p.tx.collect {
		if !ok && p.opts.UnknownXA != "" {
			return &binlog.Error{Pos: ev.Pos, Err: fmt.Errorf("XA COMMIT %s: the transaction was prepared before the resume point in %s, so its changes (logged at its XA PREPARE) are not in the input and would be lost", q.xid, p.opts.UnknownXA),
				Hint: "publish them another way (for instance read --start-position at a point before its XA PREPARE, without --kafka-exactly-once, into another topic), then move the resume point past this XA COMMIT; or let binlogcdc exit while no XA transaction is prepared"}
		}
		if !ok {
			p.logf("%s:%d: XA COMMIT %s: the transaction was prepared before the binlog position read from; its changes are not in the input and are not emitted",
				ev.Pos.File, ev.Pos.Offset, q.xid)
		}
		ts, micro := p.eventTime(ev)
		for i := range held.changes {
			c := &held.changes[i]
			// It takes effect where it commits: the coverage
			// reconciles it there.
			c.GTID, c.Time, c.TimeMicro, c.CommitPos = p.tx.gtid, ts, micro, ev.Pos
			if err := p.emit(ctx, c); err != nil {
				return err
			}
		}
	}
	return p.commit(ctx, ev)
}

// xidUnknown marks an XA transaction whose xid is not known yet.
const xidUnknown = "\x00"
