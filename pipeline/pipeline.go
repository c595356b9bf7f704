// Package pipeline is the read → decode → write → commit loop. It takes
// events from a binlog.Source, keeps the event-time schema of every table
// from its TABLE_MAP_EVENTs, decodes rows events into changes, hands them
// to a sink.Sink and commits at each transaction boundary.
package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/rowevent"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Options select what the pipeline passes on.
type Options struct {
	Filter *Filter // nil: every table
	DDL    bool    // also pass DDL statements on
	// RowQuery sets each change's Query from the ANNOTATE_ROWS or
	// ROWS_QUERY event before its rows (Maxwell's output_row_query);
	// off, the statements are not copied.
	RowQuery bool
	// Accounts passes account management statements on as logged, with
	// their passwords, whatever the filters (--replay-accounts: replay
	// only); otherwise their secrets are redacted (see ddl.go).
	Accounts bool
	// Replaying says that the sink applies statements or writes them as
	// SQL (--to mysql://, --format sql): what a note about an account
	// statement the filters leave out says.
	Replaying bool

	// StartTime skips transactions that began before it; StopTime and
	// Stop end the run at the first transaction that begins at or after
	// them. Zero values mean no bound.
	StartTime, StopTime time.Time
	Stop                change.Position
	// SkipGTID, if set, skips (as StartTime does) the transactions whose
	// GTID (and start position) it reports: a start after a GTID set
	// (find.go, gtidstart.go), or what an archive's later server history
	// repeats of the one before.
	SkipGTID func(pos change.Position, gtid string) bool
	// OpenEnd: the input's last file is still being written (an
	// archive's open file): a transaction cut off at its end is dropped
	// with a note, not an error.
	OpenEnd bool

	// ApplyFrom, if set, is where the sink's resume point stands when
	// reading starts before it (at a TxEnd.XAFrom): the transactions that
	// begin before it were applied already. They are read only to collect
	// the XA transactions they prepared; nothing of them reaches the sink
	// or OnCommit, and an XA COMMIT among them releases nothing.
	ApplyFrom change.Position

	// UnknownXA, if set, names a resume point that may have moved past a
	// prepared XA transaction's XA PREPARE (--kafka-exactly-once): an XA
	// COMMIT whose XA PREPARE was not read is then an error, not a
	// warning, since its changes would be lost.
	UnknownXA string

	// OnCommit, if set, is called after the sink committed a transaction:
	// the place to checkpoint tx.Next.
	OnCommit func(tx change.TxEnd) error

	// Logf, if set, receives warnings (for stderr).
	Logf func(format string, args ...any)

	// Schema, if set, is the schema history: it follows the DDL
	// statements read, each TABLE_MAP is checked against it (a
	// disagreement is a warning, and the table then follows its
	// TABLE_MAPs), and the tables of row changes carry what it adds
	// (tablemap.Column.Generated). It is used from Run's goroutine only:
	// OnCommit may save it.
	Schema *schemahist.History
	// DDLSplit is how a DDL statement is written (with DDL set): whole
	// (DDLWhole), or one change per table or database it changed
	// (change.Change.Schema, one element each), as Maxwell's and
	// Debezium's DDL records are.
	DDLSplit DDLSplit
	// BeforeCommit, if set, runs before the sink commits a transaction:
	// the place to hand the sink what it saves with that transaction
	// (the schema history on a target).
	BeforeCommit func()

	// Metrics, if set, counts events, transactions and rows (--metrics-addr).
	Metrics *metrics.Stream

	// Coverage, if set, is what the sink already holds from snapshots: a
	// snapshot resumed at later positions, and tables an incremental
	// snapshot (a sink, snapshot.Incremental) adds to it while the
	// pipeline runs. Each row change is reconciled with it (see
	// Coverage.Reconcile), DDL inside an initial snapshot's window stops
	// the run, and tables are forgotten at each commit once past (the
	// Coverage is updated in place: save it with the checkpoint in
	// OnCommit). An empty Coverage costs nothing.
	Coverage *Coverage
}

// Stats counts what a run did.
type Stats struct {
	Events, Transactions, Rows, DDL uint64
	Last                            change.Position // where the last committed transaction ended
	Stopped                         bool            // Run ended at a stop bound (Stop, StopTime), not at the input's end
}

// Pipeline runs one source into one sink.
type Pipeline struct {
	src  binlog.Source
	sink sink.Sink
	opts Options

	ev      binlog.EventDecoder
	tables  map[uint64]*tablemap.Table // nil entry: filtered out
	schemas *tablemap.Cache
	rows    rowevent.Decoder

	cov      *Coverage // opts.Coverage
	tx       txState
	rowQuery string            // the statement of the rows events that follow (events.go)
	xa       map[string]heldXA // prepared XA transactions, by xid
	lastGTID string            // of the last committed transaction
	Stats    Stats

	mu       sync.Mutex
	progress Stats       // a copy of Stats as of the last commit, for Progress (under mu)
	inTx     atomic.Bool // a copy of tx.open, for InTransaction
	stop     atomic.Bool // RequestStop was called
}

// RequestStop makes Run return nil at the next transaction boundary: after
// the open transaction commits, or before the next one begins. It is safe
// to call while Run runs. A Run blocked waiting for events returns only
// when its context ends.
func (p *Pipeline) RequestStop() {
	p.stop.Store(true)
}

// InTransaction reports whether Run is inside a transaction. It is safe to
// call while Run runs.
func (p *Pipeline) InTransaction() bool {
	return p.inTx.Load()
}

// stopRequested and setInTx are atomics rather than p.mu: they run at
// every transaction, and a read of one-row transactions paid for the
// lock pairs.
func (p *Pipeline) stopRequested() bool { return p.stop.Load() }

func (p *Pipeline) setInTx(v bool) { p.inTx.Store(v) }

// Progress returns the counts as of the last commit. It is safe to call
// while Run runs.
func (p *Pipeline) Progress() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.progress
}

// txState is what the pipeline knows about the transaction it is in.
type txState struct {
	open     bool
	skip     bool // before StartTime: read through, pass nothing on
	explicit bool // opened by BEGIN (or a GTID event that implies one)
	gtid     string
	// commitTS is the commit time from the GTID event: its immediate
	// commit timestamp (micro set) or, without one, its header time, which
	// servers write at commit (other events carry their statement's start).
	commitTS   time.Time
	micro      bool
	standalone bool            // MariaDB: the GTID says the group has no BEGIN/COMMIT
	collect    bool            // before Options.ApplyFrom: applied already; only XA PREPAREs are kept
	xid        string          // inside XA START … XA_PREPARE: the xid
	held       []change.Change // XA: changes held until the outcome is known

	lastRowsPos change.Position
	nextRow     int // RowIndex for the next row at lastRowsPos

	start, lastEvent change.Position // where the transaction began; its last event so far

	ops [4]uint32 // changes written, by change.Op - 1 (for Options.Metrics)
}

// New returns a Pipeline. It does no I/O.
func New(src binlog.Source, s sink.Sink, opts Options) *Pipeline {
	p := &Pipeline{src: src, sink: s, opts: opts, tables: map[uint64]*tablemap.Table{}, schemas: tablemap.NewCache()}
	p.cov = opts.Coverage
	p.rows.LazyUTF8 = sink.ChecksUTF8(s)
	return p
}

var errStop = errors.New("pipeline: stop point reached")

// Run reads until the source ends, the stop point is reached, or an error.
// A clean end returns nil. Changes of a transaction that did not commit
// before the end are never committed to the sink.
func (p *Pipeline) Run(ctx context.Context) error {
	for {
		ev, err := p.src.Next(ctx)
		if err == io.EOF {
			return p.atEnd()
		}
		if err != nil {
			return err
		}
		p.Stats.Events++
		if m := p.opts.Metrics; m != nil {
			m.Event(len(ev.Raw))
			if t := ev.Type(); t == replication.HEARTBEAT_EVENT || t == replication.HEARTBEAT_LOG_EVENT_V2 {
				m.Heartbeat() // the source has nothing more to send
			}
		}
		if p.tx.open {
			p.tx.lastEvent = ev.Pos
		}
		if err := p.handle(ctx, ev); err != nil {
			if err == errStop {
				p.Stats.Stopped = true
				return nil
			}
			return err
		}
	}
}

func (p *Pipeline) fail(ev *binlog.Event, err error, hint string) error {
	var be *binlog.Error
	if errors.As(err, &be) {
		return err
	}
	var me *tablemap.MetadataError
	if errors.As(err, &me) {
		me.File, me.Offset, me.ServerVersion = ev.Pos.File, ev.Pos.Offset, p.ev.ServerVersion
		return me
	}
	return &binlog.Error{Pos: ev.Pos, Err: err, Hint: hint}
}

const hintCorrupt = "the event is damaged, or uses a format binlogcdc does not know; please report it with the binlog file"

func (p *Pipeline) handle(ctx context.Context, ev *binlog.Event) error {
	switch t := ev.Type(); t {
	case replication.FORMAT_DESCRIPTION_EVENT:
		if err := p.ev.Format(ev); err != nil {
			return p.fail(ev, err, hintCorrupt)
		}
		if !ev.InPayload {
			// Table ids are only meaningful within one server run.
			clear(p.tables)
		}
		return nil

	case replication.GTID_EVENT, replication.ANONYMOUS_GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT,
		replication.MARIADB_GTID_EVENT:
		g, err := p.ev.GTID(ev)
		if err != nil {
			return p.fail(ev, err, hintCorrupt)
		}
		if err := p.begin(ctx, ev); err != nil {
			return err
		}
		p.tx.explicit, p.tx.standalone = !g.Standalone, g.Standalone
		if g.PreparedXA {
			p.tx.xid = xidUnknown // named by its XA END, before the rows are released
		}
		p.tx.gtid, p.tx.commitTS, p.tx.micro = g.ID, g.CommitTime, !g.CommitTime.IsZero()
		p.rowQuery = ""
		p.tx.skip = p.tx.skip || p.opts.SkipGTID != nil && p.opts.SkipGTID(ev.Pos, g.ID)
		if g.CommitTime.IsZero() {
			p.tx.commitTS = time.Unix(int64(ev.Header.Timestamp), 0).UTC()
		}
		return nil

	case replication.QUERY_EVENT, replication.MARIADB_QUERY_COMPRESSED_EVENT:
		q, err := p.ev.Query(ev)
		if err != nil {
			return p.fail(ev, err, hintCorrupt)
		}
		return p.handleQuery(ctx, ev, classify(q))

	case replication.XID_EVENT:
		return p.commit(ctx, ev)

	case replication.MARIADB_ANNOTATE_ROWS_EVENT, replication.ROWS_QUERY_EVENT:
		if p.opts.RowQuery {
			p.rowQuery = rowsQuery(ev)
		}
		return nil

	case replication.ROTATE_EVENT:
		return p.rotate(ev)

	case replication.TABLE_MAP_EVENT:
		if !p.tx.open {
			if err := p.begin(ctx, ev); err != nil {
				return err
			}
		}
		if p.tx.skip {
			return nil
		}
		return p.tableMap(ev)

	case replication.BEGIN_LOAD_QUERY_EVENT, replication.EXECUTE_LOAD_QUERY_EVENT:
		if p.tx.skip {
			return nil
		}
		return p.fail(ev, errors.New("LOAD DATA logged as a statement"), hintStatement)

	case replication.XA_PREPARE_LOG_EVENT:
		// XA PREPARE ends the binlog group of an XA transaction; whether it
		// commits is logged later, in another group (XA COMMIT/ROLLBACK).
		if p.tx.open && p.tx.xid != "" && !p.tx.skip {
			if p.xa == nil {
				p.xa = map[string]heldXA{}
			}
			p.xa[p.tx.xid] = heldXA{start: p.tx.start, changes: p.tx.held}
		}
		return p.commit(ctx, ev)

	default:
		if _, ok := rowevent.Kind(t); ok {
			if !p.tx.open {
				if err := p.begin(ctx, ev); err != nil {
					return err
				}
			}
			if p.tx.skip {
				return nil
			}
			return p.rowsEvent(ctx, ev)
		}
		// ROTATE, STOP, PREVIOUS_GTIDS, MARIADB_GTID_LIST, BINLOG_CHECKPOINT,
		// ANNOTATE_ROWS, ROWS_QUERY, INTVAR, RAND, USER_VAR, HEARTBEAT…:
		// nothing to pass on.
		return nil
	}
}

const hintStatement = "binlogcdc needs binlog_format=ROW: run SET GLOBAL binlog_format = 'ROW' (it applies to new sessions and new binlog events only)"

func (p *Pipeline) logf(format string, args ...any) {
	if p.opts.Logf != nil {
		p.opts.Logf(format, args...)
	}
}

// atEnd checks the end of the input: a transaction still open there was
// cut off (a truncated file, or one still being written). Its changes were
// not committed to the sink; every complete transaction before it was.
func (p *Pipeline) atEnd() error {
	if len(p.xa) > 0 {
		p.logf("%d prepared XA transaction(s) have no XA COMMIT or XA ROLLBACK in the input: their changes were not emitted", len(p.xa))
	}
	if !p.tx.open || p.tx.skip || p.tx.lastEvent.File == "" {
		return nil
	}
	if p.opts.OpenEnd {
		p.logf("the input ends inside a transaction that began at %s:%d, still being written: it was left out", p.tx.start.File, p.tx.start.Offset)
		return nil
	}
	return &binlog.Error{Pos: p.tx.lastEvent,
		Err:  fmt.Errorf("%w: the binlog ends inside a transaction that began at %s:%d", io.ErrUnexpectedEOF, p.tx.start.File, p.tx.start.Offset),
		Hint: "the file is truncated, or was still being written; every complete transaction before it was written out"}
}

// rotate moves the resume point to the next file when a ROTATE comes
// between transactions, so a checkpoint never names a file the server
// may purge once it has moved on.
func (p *Pipeline) rotate(ev *binlog.Event) error {
	if p.tx.open || ev.NextPos.File == "" || ev.NextPos.Offset < 4 {
		return nil
	}
	if p.Stats.Last == ev.NextPos || !before(p.Stats.Last, ev.NextPos) {
		return nil
	}
	p.Stats.Last = ev.NextPos
	if p.opts.OnCommit != nil && !before(ev.NextPos, p.opts.ApplyFrom) {
		// No transaction ended: GTID stays the last committed one's.
		end := change.TxEnd{GTID: p.lastGTID, Next: ev.NextPos}
		p.setHeldXA(&end)
		if err := p.opts.OnCommit(end); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.progress = p.Stats
	p.mu.Unlock()
	return nil
}

// begin opens a transaction at ev, checking the start and stop bounds.
func (p *Pipeline) begin(ctx context.Context, ev *binlog.Event) error {
	if p.tx.open {
		// A new transaction without a commit of the previous one: the
		// previous one's end was never logged (the server crashed while
		// writing it). It did not commit: drop what the sink holds of it.
		p.tx = txState{}
		if err := p.sink.Rollback(ctx); err != nil {
			return err
		}
	}
	if p.stopRequested() {
		return errStop
	}
	ts := time.Unix(int64(ev.Header.Timestamp), 0)
	if !p.opts.StopTime.IsZero() && !ts.Before(p.opts.StopTime) {
		return errStop
	}
	if p.opts.Stop.File != "" && !before(ev.Pos, p.opts.Stop) {
		return errStop
	}
	p.tx = txState{open: true, start: ev.Pos}
	p.tx.collect = p.opts.ApplyFrom.File != "" && before(ev.Pos, p.opts.ApplyFrom)
	p.opts.Metrics.Begin(ev.Pos)
	p.tx.skip = !p.opts.StartTime.IsZero() && ts.Before(p.opts.StartTime)
	p.setInTx(true)
	return nil
}

// countOp counts a change written in the open transaction, for Options.Metrics.
func (p *Pipeline) countOp(op change.Op) {
	if op >= change.Insert && op <= change.DDL {
		p.tx.ops[op-1]++
	}
}

// before reports whether a comes before b (change.Position.Compare: by
// file sequence, an archive's later server histories after the earlier).
func before(a, b change.Position) bool { return a.Before(b) }

func (p *Pipeline) commit(ctx context.Context, ev *binlog.Event) error {
	if !p.tx.open {
		return nil
	}
	p.rows.Release() // the sink may now read a huge row back from disk
	skip, collect := p.tx.skip, p.tx.collect
	end := change.TxEnd{GTID: p.tx.gtid, Next: ev.NextPos}
	p.setHeldXA(&end)
	if ev.Header.EventType == replication.XID_EVENT && len(ev.Body) >= 8 {
		end.Xid = binary.LittleEndian.Uint64(ev.Body)
	}
	end.Time, _ = p.eventTime(ev)
	ops := p.tx.ops
	p.tx = txState{}
	p.setInTx(false)
	if !skip && !collect {
		if p.opts.BeforeCommit != nil {
			p.opts.BeforeCommit()
		}
		if err := p.sink.Commit(ctx, end); err != nil {
			p.opts.Metrics.SinkError()
			return err
		}
		p.Stats.Transactions++
		p.opts.Metrics.Commit(&ops, end.Time)
	}
	p.Stats.Last = end.Next
	if !p.cov.Empty() {
		p.cov.Forget(end.Next)
	}
	if end.GTID != "" {
		p.lastGTID = end.GTID
	}
	if p.opts.OnCommit != nil && !collect {
		if err := p.opts.OnCommit(end); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.progress = p.Stats
	p.mu.Unlock()
	if p.stop.Load() {
		return errStop
	}
	return nil
}

// setHeldXA marks end as leaving prepared XA transactions held, with
// where the earliest of them starts.
func (p *Pipeline) setHeldXA(end *change.TxEnd) {
	end.HeldXA = len(p.xa) > 0
	for _, h := range p.xa {
		if end.XAFrom.File == "" || before(h.start, end.XAFrom) {
			end.XAFrom = h.start
		}
	}
}
