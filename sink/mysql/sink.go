// Package mysqlsink applies changes to a MySQL or MariaDB server (the
// replay target), exactly once.
//
// # Delivery guarantee
//
// Each source transaction is applied inside one target transaction, in
// commit order; several small source transactions may share a target
// transaction (Options.GroupRows, Options.GroupTime), one is never split.
// The same target transaction updates the replica's row in
// binlogcdc.checkpoint to where the next source transaction starts. So a
// crash at any moment (kill -9 of binlogcdc, of the target, a lost
// connection) leaves the target either before or after each source
// transaction, never inside one, and the checkpoint says which: resuming
// from it applies every change exactly once. This needs transactional
// (InnoDB) target tables; DDL, which the server commits on its own, is
// recorded before and after it runs, and a DDL interrupted by a crash is
// run again, its "already done" errors ignored. Parallel (parallel.go)
// applies on several connections, each with its own checkpoint row, and
// keeps the same guarantee.
//
// Rows are found by the primary key of the event-time TABLE_MAP, or, for
// a table without one, by all columns of the full before image (NULL-safe,
// exact, LIMIT 1). Statements are prepared and values bound, never spliced.
// With the error conflict policy, up to 64 of them are sent per round trip
// and their results checked one by one (see pipeline.go).
package mysqlsink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

var _ sink.Sink = (*Sink)(nil)

// Sink applies changes to a target server. Its methods are safe for
// concurrent use (they take a lock, which a background timer that commits
// idle groups shares); the sink.Sink calls come from one goroutine.
type Sink struct {
	mu       sync.Mutex
	cfg      Config
	opts     Options
	conn     *client.Conn
	ddlConn  *client.Conn // for CREATE TABLE inside an open transaction
	stmts    stmtCache
	b        sqltext.Builder
	args     []any
	warnings uint16 // of the last statement exec ran

	cp       Checkpoint                      // as read at Open
	saved    change.TxEnd                    // the last checkpoint written (or read)
	savedPos atomic.Pointer[change.Position] // saved.Next, for Saved (not under mu)
	target   targetSchema
	curDB    string // the session's default database
	ddlRetry bool   // the DDL at cp.DDL may have run before a crash

	ddlPendingCommit bool // a DDL ran; its Commit saves the checkpoint on its own

	nextState []byte // SetState's, for the next Commit (incremental.go)
	nextHist  []byte // SetSchemaHistory's, for the next Commit (schemahistory.go)

	pend      []op // changes not yet executed
	pendBytes int  // their size

	maxAllowedPacket int  // the target's max_allowed_packet (0: unknown)
	curStart         int  // pend[curStart:] belong to the open source transaction
	curExecuted      bool // some of its changes were executed (after a SAVEPOINT)
	inTx             bool // a target transaction is open

	// Pipelining (pipeline.go).
	pipe         []byte      // SAVEPOINT and COM_STMT_EXECUTE packets to send
	pipeSent     int         // pipe[:pipeSent] was sent already (sendPipe)
	pipeNQ       int         // the queued checkpoint UPDATE was sent before it (1) or not (0)
	pipeAsk      bool        // a statement of the pipeline needs the target's catalog first (batchSafe)
	load         []byte      // the rows of a LOAD DATA LOCAL (bulk.go)
	bulkLines    atomic.Bool // bulkOK, for the caller: format inserts' lines as they are queued
	lineSlab     []byte      // the caller's: room for the next lines
	encInserts   atomic.Bool // for the caller: encode inserts' values as they are queued (encoded.go)
	encSlab      []byte      // the caller's: room for the next encodings
	copier       rowCopier   // the caller's: copies queued rows
	colsBuf      []int       // scratch for an op's columns (sharedCols)
	bulkOK       bool        // the target allows LOAD DATA LOCAL
	pipeStmts    []pipeStmt  // the statements in pipe
	noAutocommit bool        // the session has autocommit=0 (set inside a target transaction, or between background groups: queued.go)
	queued       []byte      // the checkpoint UPDATE to send before the transaction's first statement (queued.go)
	queuedBuf    []byte
	cpSent       bool // the open transaction's checkpoint UPDATE was sent first (queued.go)
	keepNoAuto   bool // its COMMIT leaves autocommit=0 (queued.go)

	// Large statements (large.go).
	large     []largePart
	largeHead []byte
	largeW    *bufio.Writer

	// Session state (session.go, versioned.go).
	fkChecks  bool        // the session's foreign_key_checks
	historyOn bool        // system_versioning_insert_history is ON
	history   *historyRow // the history row the target just made itself

	group        group
	cur          Stats  // counts of the open source transaction's executed changes
	transactions uint64 // source transactions committed (Stats.Transactions)

	// Applying in the background (background.go).
	bgJobs    chan bgJob
	bgDone    chan bgJob // a group applied (or failed): its buffer, for spares, and its rows' blocks (copier.go)
	bgExit    chan struct{}
	bgBusy    int     // jobs handed over whose bgDone was not received: at most 2
	carry     carried // the goroutine's while jobs are in flight
	onFailure func(error)
	handed    change.TxEnd // the end of the last group handed over (the caller's)
	spares    [][]op       // empty pend buffers to take next (takeSpare), at most cap: 2
	stats     Stats
	failed    error
	reported  bool // failed was returned to the caller
	stopTimer chan struct{}
	timerDone chan struct{}

	// wrote counts the ops queued so far (write); the first released of
	// them were executed and nothing refers to their rows any more
	// (Parallel's reuse of its row copies: parallel_recycle.go).
	wrote    uint64
	released atomic.Uint64
	pendBig  bool // an op of pend has a value of its own allocation (background.go, done)
}

// group is what the open target transaction holds.
type group struct {
	txs, rows int
	start     time.Time
	end       *change.TxEnd // the last source transaction committed into it
	snapshot  []byte        // the last snapshot progress committed into it (TxEnd.Snapshot)
	stats     Stats
	state     []byte // incremental snapshot progress to save with it (nil: unchanged)
	hist      []byte // the schema history to save with it (nil: unchanged)
}

// Open connects to the target, creates binlogcdc.checkpoint if needed,
// locks the replica name and reads its checkpoint (Checkpoint).
func Open(ctx context.Context, cfg Config, opts Options) (*Sink, error) {
	if opts.Replica == "" {
		opts.Replica = "default"
	}
	if opts.GroupRows <= 0 {
		opts.GroupRows = DefaultGroupRows
	}
	if opts.GroupTime <= 0 {
		opts.GroupTime = time.Second
	}
	c, err := dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cp, err := prepareTarget(c, opts.Replica)
	if err != nil {
		c.Close()
		return nil, err
	}
	s := &Sink{cfg: cfg, opts: opts, conn: c, cp: cp, stopTimer: make(chan struct{}), timerDone: make(chan struct{})}
	s.maxAllowedPacket = readMaxAllowedPacket(c) // apply.go
	s.bulkOK = opts.LoadData && !opts.NoBulkLoad && s.localInfile(c)
	s.bulkLines.Store(s.bulkOK && s.canPipeline())
	s.encInserts.Store(!opts.NoBulkLoad && s.canPipeline())
	s.b.Mode = sqltext.Placeholders
	s.saved = change.TxEnd{Next: cp.Next, GTID: cp.GTID, XAFrom: cp.XAFrom, HeldXA: cp.XAFrom.File != ""}
	next := s.saved.Next
	s.savedPos.Store(&next)
	s.ddlRetry = cp.DDL.File != ""
	s.stats.Started = time.Now()
	go s.timer()
	return s, nil
}

// Checkpoint returns the checkpoint read at Open; ok is false when the
// replica has not applied anything yet.
func (s *Sink) Checkpoint() (cp Checkpoint, ok bool) { return s.cp, s.cp.Next.File != "" }

// op is a change waiting to be executed, with its values copied. The
// fields that the scans of a queue read come first (sameInsert, encoded).
type op struct {
	plan    *plan
	cols    []int       // insert: the columns; update: the columns to set
	enc     []byte      // insert: its values as COM_STMT_EXECUTE binds them, encoded when queued (encoded.go); nil: not encoded
	fk      bool        // apply with foreign_key_checks=1
	enumErr bool        // the new row holds an ENUM error value (enum.go)
	c       opChange    // (opchange.go)
	key     sqltext.Key // update, delete: how to find the row
	size    int         // bytes of values, roughly
	line    []byte      // insert: its LOAD DATA line, formatted when queued (bulk.go); nil: not formatted
}

// pendingRows and pendingBytes bound the changes held before they are
// executed (pendingBytes counts what they hold in memory, opMem): beyond
// them, the pending changes run, those of the open source transaction
// after a SAVEPOINT. With Background, a group is handed over when it
// holds half of pendingBytes (Commit), so that groups of small source
// transactions do not meet this bound, which runs them in the
// foreground.
const (
	pendingRows  = 1 << 16
	pendingBytes = 8 << 20
)

// opMem is about what the queued op o holds in memory: its values (size
// counts 8 bytes per value for the header, which is 40), its LOAD DATA
// line or encoding, and the op itself.
func opMem(o *op) int {
	return o.size + len(o.line) + len(o.enc) + int(unsafe.Sizeof(op{})) + 32*(len(o.c.Before)+len(o.c.After))
}

func (s *Sink) check() error {
	if !s.poll() {
		return nil // the group in flight: its failure, if any, comes later
	}
	if s.failed != nil {
		s.reported = true
		return s.failed
	}
	return nil
}

// fail rolls back the open target transaction and makes err sticky
// (after the group in flight, whose failure comes first).
func (s *Sink) fail(err error) error {
	s.wait()
	return s.abort(err)
}

// abort is fail without waiting (the background goroutine's).
func (s *Sink) abort(err error) error {
	if s.failed == nil {
		s.failed = err
	}
	s.queued, s.cpSent, s.keepNoAuto = nil, false, false
	if s.inTx {
		s.conn.Execute("ROLLBACK")
		s.inTx = false
		s.restoreAutocommit()
	}
	s.reported = true
	return s.failed
}

// Commit ends the source transaction; its group is committed on the
// target when the group is full or old enough.
func (s *Sink) Commit(_ context.Context, tx change.TxEnd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	s.curStart, s.curExecuted = len(s.pend), false
	s.group.stats.add(&s.cur)
	if s.group.txs == 0 && s.group.rows == 0 {
		s.group.start = time.Now()
	}
	s.group.txs++
	if s.group.end == nil {
		// One per group, overwritten by its next transactions (&tx was
		// an allocation per source transaction).
		s.group.end = new(change.TxEnd)
	}
	*s.group.end = tx
	if s.nextState != nil {
		s.group.state, s.nextState = s.nextState, nil
	}
	if s.nextHist != nil {
		s.group.hist, s.nextHist = s.nextHist, nil
	}
	if tx.Snapshot != nil {
		s.group.snapshot = tx.Snapshot
	}
	s.transactions++
	if s.ddlPendingCommit {
		// The DDL ran: record it as done, on its own.
		s.ddlPendingCommit = false
		return s.commitGroup(change.Position{})
	}
	if s.group.rows >= s.opts.GroupRows || s.pendBytes >= pendingBytes/2 || time.Since(s.group.start) >= s.opts.GroupTime {
		if s.bgJobs != nil && s.group.state == nil && s.group.snapshot == nil {
			return s.commitBackground() // background.go
		}
		return s.commitGroup(change.Position{})
	}
	return nil
}

// commitGroup executes the committed source transactions still pending,
// saves the checkpoint (with ddl, the position of a DDL about to run) and
// commits the target transaction. The open source transaction's changes,
// not yet executed, stay pending.
func (s *Sink) commitGroup(ddl change.Position) error {
	if err := s.sync(); err != nil {
		return err
	}
	if s.curExecuted {
		return errors.New("mysqlsink: internal error: committing a group inside a source transaction")
	}
	if err := s.flush(s.curStart); err != nil {
		return s.fail(err)
	}
	if err := s.finishGroup(&s.group, ddl); err != nil {
		return s.fail(err)
	}
	s.group = group{}
	return nil
}

// finishGroup saves the checkpoint of the group g, whose changes were
// executed (with ddl, the position of a DDL about to run), and commits
// the target transaction.
func (s *Sink) finishGroup(g *group, ddl change.Position) error {
	end := s.saved
	if g.end != nil {
		end = *g.end
	}
	if (g.end != nil || ddl.File != "") && !s.cpSent {
		if err := s.begin(); err != nil {
			return err
		}
		if err := s.saveCheckpoint(end, ddl); err != nil {
			return fmt.Errorf("target: saving the checkpoint: %w", err)
		}
		if g.state != nil {
			if err := s.saveState(g.state); err != nil {
				return fmt.Errorf("target: saving the incremental snapshot's progress: %w", err)
			}
		}
		if g.hist != nil {
			if err := s.saveSchemaHistory(g.hist); err != nil {
				return fmt.Errorf("target: saving the schema history: %w", err)
			}
		}
		if g.snapshot != nil {
			if err := s.execPrepared("UPDATE "+snapshotTable+" SET state = ? WHERE replica = ?", g.snapshot, s.opts.Replica); err != nil {
				return fmt.Errorf("target: saving the snapshot's progress: %w", err)
			}
		}
	}
	s.cpSent = false
	if s.inTx {
		if err := s.plain("COMMIT"); err != nil {
			return fmt.Errorf("target: COMMIT: %w", err)
		}
		s.inTx = false
		if !s.keepNoAuto {
			if err := s.restoreAutocommit(); err != nil {
				return err
			}
		}
		s.stats.TargetCommits++
	}
	s.keepNoAuto = false
	s.saved = end
	s.savedPos.Store(&end.Next)
	s.stats.add(&g.stats)
	return nil
}

// flushGroup commits the source transactions committed so far (Parallel).
func (s *Sink) flushGroup() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	return s.commitGroup(change.Position{})
}

// Flush commits the source transactions committed so far on the target
// now, rather than when their group is full or old enough (a live
// verification lines a snapshot of the target up with the source's).
// Call it at a transaction boundary.
func (s *Sink) Flush() error { return s.flushGroup() }

// forgetTargetSchema drops what the sink knows of the target's tables
// (Parallel: another connection ran a DDL).
func (s *Sink) forgetTargetSchema() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	s.target.clear()
	s.stmts.clear()
}

func (s *Sink) begin() error {
	if s.inTx {
		return nil
	}
	if err := s.plain("BEGIN"); err != nil {
		return fmt.Errorf("target: BEGIN: %w", err)
	}
	s.inTx = true
	return nil
}

// Rollback drops the open source transaction's changes. Source
// transactions committed before it stay, to be committed with their group.
func (s *Sink) Rollback(_ context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.sync(); err != nil {
		return err
	}
	s.group.rows -= len(s.pend) - s.curStart
	s.truncatePending()
	s.history = nil
	if s.curExecuted {
		if err := s.plain("ROLLBACK TO SAVEPOINT binlogcdc_tx"); err != nil {
			return s.fail(fmt.Errorf("target: %w", err))
		}
		s.curExecuted = false
	}
	s.ddlPendingCommit = false
	s.cur = Stats{}
	return nil
}

// Close commits the source transactions committed so far, drops an
// unfinished one and disconnects. After a failure it only disconnects
// (the failed group was rolled back; the checkpoint is before it).
func (s *Sink) Close(ctx context.Context) error {
	close(s.stopTimer)
	<-s.timerDone
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	var err error
	if s.failed == nil {
		if rerr := s.rollbackCurrent(); rerr != nil {
			err = rerr
		} else {
			err = s.commitGroup(change.Position{})
		}
	} else if !s.reported {
		err = s.failed
	}
	s.stopBackground()
	s.stats.Finished = time.Now()
	s.stmts.clear()
	for _, c := range []*client.Conn{s.conn, s.ddlConn} {
		if c != nil && c.Quit() != nil {
			c.Close()
		}
	}
	return err
}

// truncatePending drops the open source transaction's pending changes.
func (s *Sink) truncatePending() {
	for i := s.curStart; i < len(s.pend); i++ {
		s.pendBytes -= opMem(&s.pend[i])
	}
	clear(s.pend[s.curStart:])
	s.pend = s.pend[:s.curStart]
}

func (s *Sink) rollbackCurrent() error {
	s.truncatePending()
	s.history = nil
	s.cur = Stats{}
	if s.curExecuted {
		if err := s.plain("ROLLBACK TO SAVEPOINT binlogcdc_tx"); err != nil {
			return s.fail(fmt.Errorf("target: %w", err))
		}
		s.curExecuted = false
	}
	return nil
}

// timer commits a group that waited GroupTime, when no source transaction
// is half executed: so a quiet source does not hold applied changes back.
func (s *Sink) timer() {
	defer close(s.timerDone)
	tick := max(s.opts.GroupTime/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stopTimer:
			return
		case <-t.C:
			s.mu.Lock()
			if !s.poll() {
				s.mu.Unlock()
				continue // a group is being committed
			}
			if s.failed == nil && s.group.txs > 0 && !s.curExecuted && time.Since(s.group.start) >= s.opts.GroupTime {
				if err := s.commitGroup(change.Position{}); err != nil {
					s.reported = false
					// Said once: by the caller told of it, or here at once
					// for one that learns of it only at its next call.
					if s.onFailure != nil {
						s.onFailure(err) // background.go
					} else if s.opts.Logf != nil {
						s.opts.Logf("%v", err)
					}
				}
			}
			s.mu.Unlock()
		}
	}
}

// Saved returns where the checkpoint committed on the target stands (for
// --metrics-addr). Unlike the other methods it does not wait for the
// lock: a target that blocks a commit must not block the caller too.
func (s *Sink) Saved() change.Position {
	if p := s.savedPos.Load(); p != nil {
		return *p
	}
	return change.Position{}
}

// Stats returns the counts so far (committed on the target).
func (s *Sink) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	st := s.stats.clone()
	st.Transactions = s.transactions
	return st
}
