package pipeline

// Row events: TABLE_MAP_EVENTs name the tables, rows events carry the
// changes (decoded by rowevent and passed to the sink in order).

import (
	"context"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/rowevent"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// eventTime is the transaction's commit time with microseconds when its
// GTID event carries one (MySQL 8.0.1+), else the event header's seconds.
func (p *Pipeline) eventTime(ev *binlog.Event) (t time.Time, micro bool) {
	if !p.tx.commitTS.IsZero() {
		return p.tx.commitTS, p.tx.micro
	}
	return time.Unix(int64(ev.Header.Timestamp), 0).UTC(), false
}

func (p *Pipeline) tableMap(ev *binlog.Event) error {
	// Servers repeat a table's TABLE_MAP before every transaction. Only
	// tables that pass the filter are cached, and the body holds the
	// names, so a body seen before needs neither the names nor the filter.
	if t := p.schemas.Lookup(ev.Body, p.ev.TableIDSize(ev.Type())); t != nil {
		p.tables[t.ID] = p.annotate(t, ev)
		return nil
	}
	id, db, table, err := tablemap.PeekName(ev.Body, p.ev.TableIDSize(ev.Type()))
	if err != nil {
		return p.fail(ev, err, hintCorrupt)
	}
	p.opts.Filter.noteTable(db, table)
	if !p.opts.Filter.Table(db, table) {
		p.tables[id] = nil
		return nil
	}
	t, err := p.schemas.Get(ev.Body, p.ev.TableIDSize(ev.Type()), func() (*replication.TableMapEvent, error) { return p.ev.TableMap(ev) })
	if err != nil {
		return p.fail(ev, err, hintCorrupt)
	}
	p.tables[id] = p.annotate(t, ev)
	return nil
}

// annotate checks t against the schema history (Options.Schema), and
// returns it with what the history adds.
func (p *Pipeline) annotate(t *tablemap.Table, ev *binlog.Event) *tablemap.Table {
	if p.opts.Schema == nil {
		return t
	}
	a, warn := p.opts.Schema.Annotate(t, ev.Pos)
	if warn != "" {
		p.logf("%s", warn)
	}
	return a
}

func (p *Pipeline) rowsEvent(ctx context.Context, ev *binlog.Event) error {
	t := ev.Type()
	h, err := rowevent.ParseHeader(t, ev.Body, p.ev.TableIDSize(t))
	if err != nil {
		return p.fail(ev, err, hintCorrupt)
	}
	tbl, known := p.tables[h.TableID]
	if !known {
		return p.fail(ev, fmt.Errorf("rows event for table id %d, whose TABLE_MAP_EVENT was not read", h.TableID),
			"start at the beginning of a transaction (its GTID or BEGIN event), not in the middle of one")
	}
	if tbl == nil {
		return nil // filtered out
	}
	changes, err := p.rows.Decode(t, h, tbl)
	if err != nil {
		return p.fail(ev, fmt.Errorf("table %s.%s: %w", tbl.DB, tbl.Name, err), hintCorrupt)
	}
	// Rows inside one TRANSACTION_PAYLOAD_EVENT share its position: number
	// them on across its rows events.
	base := 0
	if ev.InPayload && ev.Pos == p.tx.lastRowsPos {
		base = p.tx.nextRow
	}
	ts, micro := p.eventTime(ev)
	for i := range changes {
		c := &changes[i]
		c.Pos, c.RowIndex, c.GTID, c.Time, c.TimeMicro = ev.Pos, base+c.RowIndex, p.tx.gtid, ts, micro
		c.ServerID, c.Query = ev.Header.ServerID, p.rowQuery
		if p.tx.xid != "" {
			// An XA transaction: held until its outcome is logged.
			p.tx.held = append(p.tx.held, c.Clone())
		}
	}
	if p.tx.xid == "" && !p.tx.collect {
		if err := p.emitAll(ctx, changes); err != nil {
			return err
		}
	}
	p.tx.lastRowsPos, p.tx.nextRow = ev.Pos, base+len(changes)
	if h.StmtEnd && !p.tx.explicit && p.tx.open {
		// Rows outside BEGIN…COMMIT (no GTID, no BEGIN): each statement commits.
		return p.commit(ctx, ev)
	}
	return nil
}

// heldXA is a prepared XA transaction: its changes, held from its XA
// PREPARE to its XA COMMIT, and where its XA PREPARE group starts.
type heldXA struct {
	start   change.Position
	changes []change.Change
}

// emitAll emits the changes of one rows event: at once when the sink
// takes them so (sink.BatchWriter) and nothing is reconciled with a
// snapshot's coverage.
func (p *Pipeline) emitAll(ctx context.Context, cs []change.Change) error {
	if bw, ok := p.sink.(sink.BatchWriter); ok && p.cov.Empty() {
		n, err := bw.WriteBatch(ctx, cs)
		for i := range cs[:n] {
			p.countOp(cs[i].Op)
		}
		p.Stats.Rows += uint64(n)
		if err != nil {
			p.opts.Metrics.SinkError()
		}
		return err
	}
	for i := range cs {
		if err := p.emit(ctx, &cs[i]); err != nil {
			return err
		}
	}
	return nil
}

// emit hands one row change to the sink, after the snapshot coverage
// has reconciled it (a change the snapshot already holds is dropped).
func (p *Pipeline) emit(ctx context.Context, c *change.Change) error {
	if !p.cov.Empty() {
		keep, err := p.cov.Reconcile(c)
		if err != nil || !keep {
			return err
		}
	}
	if err := p.sink.Write(ctx, c); err != nil {
		p.opts.Metrics.SinkError()
		return err
	}
	p.countOp(c.Op)
	p.Stats.Rows++
	return nil
}
