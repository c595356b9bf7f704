package mysqlsink

// Parallel apply (Parallel, --parallel N).
//
// Source transactions are applied on N target connections ("workers"),
// each a Sink of its own with its own row in binlogcdc.checkpoint: worker
// 0 the replica's usual row, worker k the row "replica#k". A worker
// applies the transactions given to it in source order, grouped into
// target transactions exactly as a single Sink does, and each of its
// target transactions updates its own checkpoint row to the end of the
// last source transaction it covers.
//
// Which worker applies a transaction is a function of the binlog and N
// alone (assign). Its row keys — the primary key of the event-time
// TABLE_MAP, integer or binary columns only — are hashed into N
// partitions. A transaction whose keys all fall into one partition goes
// to that partition's worker, so one-row transactions on the same row
// always meet on one worker, in source order. One whose keys fall into
// several goes to the worker named by the hash of its binlog position.
// One with a change that has no such key (a keyless table, a text key
// under a collation), a DDL, or more than parallelMaxRows rows or
// parallelMaxBytes bytes goes to worker 0.
//
// Order between workers: the coordinator remembers the keys of what each
// worker was given since it last committed on request; a transaction that
// touches one of them on another worker waits, on its own worker, until
// that worker has committed (dependOn). So of two transactions changing the same row, the
// later starts only after the earlier is committed, as in serial order.
//
// A barrier waits until every worker has committed everything before it,
// runs alone, and is committed before any worker goes on. Barriers are
// worker 0's keyless, DDL and large transactions, and every transaction
// touching a table that is unsafe to apply concurrently on the target
// (safeTable: triggers, foreign keys either way, a unique key besides the
// primary key, system versioning, a primary key other than the
// binlog's). Barriers depend on the target's catalog; the assignment
// never does. A transaction too large to queue, which worker 0 applies
// as it is read, needs less: the other workers commit before it starts,
// worker 0 applies it after what it was given before (in order, on one
// connection, committed or not), and it commits with worker 0's group,
// before another worker is given anything (open0). So its last part
// and COMMIT overlap with the decoding of what follows: with 50,000-row
// transactions the target's connection waited 0.55-0.66 s of a 5 s
// replay for binlogcdc, against 0.76-0.83 s committing each at once.
//
// Exactly once. Worker w's checkpoint cp[w] means: every transaction
// assigned to w that ends at or before cp[w] is applied, and none after
// it (the changes and the checkpoint row commit in one target
// transaction, in source order). A worker's checkpoint also moves past
// transactions that are not its own (a commit with no changes), but only
// to the end of a transaction after which nothing assigned to it is
// still unsent, and never back. After a crash the workers' checkpoints
// differ; reading resumes at the earliest of them (Checkpoint; at the
// beginning of the binlogs given while a worker has none), and a
// transaction T is
// skipped when it starts before cp[assign(T)] (it was applied, with its
// checkpoint), applied otherwise. Since assign depends only on the binlog
// and N, a restart recomputes the same worker for T; so a restart must
// use the same N until the workers' checkpoints are equal again (a clean
// Close leaves them equal; Open refuses another N before that).
// --on-conflict keeps its meaning: a conflict depends only on earlier
// changes to the same row, which the same worker applied before it (or
// which a barrier committed before it), as in serial order.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

var _ sink.Sink = (*Parallel)(nil)

// Bounds of a transaction handed to a worker whole; a larger one is
// applied by worker 0 as it arrives, as a barrier. Part of assign: a
// restart after a crash must use the same values.
const (
	parallelMaxRows  = 1000
	parallelMaxBytes = 4 << 20
	workerQueue      = 32      // transactions queued per worker
	maxInflightKeys  = 1 << 18 // keys tracked per worker before it must commit (twice that while it does: flushAsync)
	batchRows        = 512     // rows handed to a worker at once, about
	batchTxs         = 128     // transactions handed to a worker at once, at most
)

// Parallel applies source transactions on several connections (see above).
// Its sink.Sink methods are called from one goroutine.
type Parallel struct {
	cfg  Config
	opts Options
	w    []*worker
	// inflight[k] holds the keys of what worker k was given since it
	// last committed on our request (wait); flushing[k], those of a
	// commit asked of it and not waited for (flushAsync).
	inflight []keySet
	flushing []pendingFlush
	cat      *client.Conn             // catalog queries (safeTable)
	safe     map[string]bool          // safeTable's answers, by `db`.`table`
	safeMap  map[*tablemap.Table]bool // ... and by TABLE_MAP (no name to build per change)
	cp       []change.Position        // each worker's checkpoint at Open
	hi       change.Position          // the latest of them

	// The open source transaction.
	buf       []change.Change
	lastLen   int // len(buf) of the last transaction, for the next one's
	copier    rowCopier
	bufBytes  int
	bufMem    int  // what buf holds in memory (parallel_queue.go)
	part      int  // its partition: -1 none yet
	multi     bool // its keys fall into several partitions
	nokey     bool // some change has no usable key (or is a DDL)
	keys      []uint64
	unsafe    bool // touches an unsafe table: a barrier
	streaming bool // too large: its changes go to worker 0 as they come
	open0     bool // such a transaction ended, and worker 0 has not committed it yet
	others    bool // a worker other than 0 was given transactions since the last drain
	skip      bool // applied before the restart: dropped
	first     change.Position

	last    change.TxEnd // the last source transaction's end
	lastSet bool
	hist    parallelHistory // the schema history (parallel_history.go)
	txs     uint64
	mu      sync.Mutex
	failed  error

	// Blocks of copier's set aside until the workers are done with
	// them, and how many (parallel_recycle.go).
	epochs      []copyEpoch
	epochBlocks int
	bufFree     chan []change.Change // change buffers the workers are done with
}

type worker struct {
	s        *Sink
	id       int
	jobs     chan job
	done     chan struct{}
	sent     change.TxEnd // the latest transaction end it was told about (its checkpoint never goes back)
	started  bool         // its goroutine runs
	pend     []item       // queued, not yet handed over (dispatch)
	pendRows int
	pendMem  int           // what pend's rows hold in memory (parallel_queue.go)
	queueMem atomic.Int64  // ... and those handed over and not yet written to its Sink
	took     chan struct{} // a job was written (or dropped): room in the queue
	histSent uint64        // the generation of the schema history it was handed last (0: none)
	err      error         // owned by the worker goroutine

	queued uint64      // items queued so far (the coordinator's; parallel_recycle.go)
	m      workerMarks // its notes of the ops its items were (parallel_recycle.go)
}

// job is what a worker is handed at once: source transactions, then
// maybe a commit of its open target transaction.
type job struct {
	items []item
	mem   int        // what its rows hold in memory (parallel_queue.go)
	flush bool       // then commit the open target transaction
	ack   chan error // and say so
	fin   *flushDone // or say so to whoever waits for it (parallel_wait.go)
}

type item struct {
	advance *change.TxEnd   // commit this (empty) transaction end first
	advHist []byte          // with this schema history (nil: the one it has)
	changes []change.Change // then apply these
	tx      *change.TxEnd   // and commit them as this transaction
	txHist  []byte          // with this schema history (nil: the one it has)
	seq     uint64          // its number among the worker's items, from 1
	deps    []*flushDone    // other workers' commits to wait for first
}

// Checkpoint is where reading resumes: the earliest worker checkpoint
// (ok false: some worker has applied nothing yet, so reading starts at
// the beginning).
func (p *Parallel) Checkpoint() (Checkpoint, bool) {
	best := 0
	for k := range p.w {
		if p.cp[k].File == "" {
			return Checkpoint{}, false
		}
		if posLess(p.cp[k], p.cp[best]) {
			best = k
		}
	}
	cp, ok := p.w[best].s.Checkpoint()
	// Reading starts where every worker's held XA transactions are
	// collected again: the earliest worker's read point.
	for _, w := range p.w {
		if from := w.s.cp.ReadFrom(); posLess(from, cp.ReadFrom()) {
			cp.XAFrom = from
		}
	}
	return cp, ok
}

// SaveStart records start as every worker's checkpoint, where none has one.
func (p *Parallel) SaveStart(start change.Position, gtidPos string) error {
	for _, w := range p.w {
		if err := w.s.SaveStart(start, gtidPos); err != nil {
			return err
		}
	}
	return nil
}

// Advance moves the position past a ROTATE between transactions; the
// workers' checkpoints follow with their next commits.
func (p *Parallel) Advance(next change.Position) {
	if len(p.buf) > 0 || p.streaming || next.File == "" || !p.lastSet {
		return
	}
	p.last.Next = next
}

// Stats adds up the workers' counts.
func (p *Parallel) Stats() Stats {
	var st Stats
	for k, w := range p.w {
		ws := w.s.Stats()
		st.add(&ws)
		st.TargetCommits += ws.TargetCommits
		st.DDL += ws.DDL
		if k == 0 {
			st.Started, st.Finished = ws.Started, ws.Finished
		}
	}
	p.mu.Lock()
	st.Transactions = p.txs
	p.mu.Unlock()
	return st
}

// run is worker w's goroutine.
func (p *Parallel) run(ctx context.Context, w *worker) {
	defer close(w.done)
	for j := range w.jobs {
		if w.err == nil {
			w.err = w.do(ctx, j)
			if w.err != nil {
				p.fail(w.err)
			} else {
				p.giveBack(j.items) // parallel_recycle.go
			}
		}
		w.release(j.mem) // parallel_queue.go
		if j.ack != nil {
			j.ack <- w.err
		}
		if j.fin != nil {
			j.fin.err = w.err
			close(j.fin.done)
		}
	}
}

func (w *worker) do(ctx context.Context, j job) error {
	if err := w.doItems(ctx, j); err != nil {
		return err
	}
	if n := len(j.items); n > 0 {
		w.noteJob(j.items[n-1].seq)
	}
	return nil
}

func (w *worker) doItems(ctx context.Context, j job) error {
	for _, it := range j.items {
		for _, d := range it.deps {
			<-d.done
			if d.err != nil {
				return errOtherWorker // that worker's error is the one returned
			}
		}
		if it.advance != nil {
			if it.advHist != nil {
				w.s.SetSchemaHistory(it.advHist)
			}
			if err := w.s.Commit(ctx, *it.advance); err != nil {
				return err
			}
		}
		for i := range it.changes {
			if err := w.s.write(&it.changes[i], false); err != nil {
				return err
			}
		}
		if it.tx != nil {
			if it.txHist != nil {
				w.s.SetSchemaHistory(it.txHist)
			}
			if err := w.s.Commit(ctx, *it.tx); err != nil {
				return err
			}
		}
	}
	if j.flush {
		return w.s.flushGroup()
	}
	return nil
}

func (p *Parallel) fail(err error) {
	p.mu.Lock()
	if p.failed == nil {
		p.failed = err
	}
	p.mu.Unlock()
}

// check makes err (from worker 0, called directly) sticky.
func (p *Parallel) check(err error) error {
	if err != nil {
		p.fail(err)
	}
	return err
}

func (p *Parallel) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// queue adds a source transaction (or, without tx, only the last
// transaction end) to what w is handed next, first moving w's
// checkpoint to the last transaction end when w was not told of it.
func (p *Parallel) queue(w *worker, changes []change.Change, tx *change.TxEnd, deps []*flushDone) {
	var it item
	if p.lastSet && posLess(w.sent.Next, p.last.Next) {
		end := p.last
		it.advance = &end
		it.advHist = p.hist.lastFor(w)
		w.sent = end
	}
	if tx != nil {
		it.changes, it.tx, it.deps = changes, tx, deps
		w.pendMem += p.bufMem // what the changes hold in memory
		it.txHist = p.hist.nextFor(w)
		w.sent = *tx
	}
	if it.advance == nil && it.tx == nil {
		return
	}
	w.queued++
	it.seq = w.queued
	w.pend = append(w.pend, it)
	w.pendRows += len(changes)
	if w.pendRows >= batchRows || len(w.pend) >= batchTxs || w.pendMem >= batchMem {
		p.dispatch(w, job{})
	}
}

// Write buffers c for the open source transaction.
func (p *Parallel) Write(ctx context.Context, c *change.Change) error {
	if err := p.err(); err != nil {
		return err
	}
	if p.skip {
		return nil
	}
	if len(p.buf) == 0 && !p.streaming {
		// An XA transaction's changes, logged at its XA PREPARE, are
		// applied where it commits.
		p.first = c.Pos
		if c.CommitPos.File != "" {
			p.first = c.CommitPos
		}
	}
	if p.streaming {
		return p.check(p.w[0].s.Write(ctx, c))
	}
	o := *c
	var n1, n2 int
	o.Before, n1 = p.copier.clone(c.Before)
	o.After, n2 = p.copier.clone(c.After)
	if p.buf == nil {
		// As long as the last transaction: its changes are handed over
		// with the slice (reused once the worker is done with it:
		// takeBuf); growing it would copy them again and again.
		p.buf = p.takeBuf(min(max(p.lastLen, 8), parallelMaxRows+1))
	}
	p.buf = append(p.buf, o)
	p.bufBytes += n1 + n2 + len(c.SQL)
	p.bufMem += changeMem(&o, n1+n2)
	p.classify(&p.buf[len(p.buf)-1])
	if len(p.buf) > parallelMaxRows || p.bufBytes > parallelMaxBytes {
		// Too large to hold: worker 0's, applied as it comes.
		if p.applied(0) {
			p.skip = true
			p.buf, p.bufBytes = nil, 0
			return nil
		}
		// Whatever another worker was given commits first; worker 0
		// applies in order what it was given before, committed or not.
		if p.others {
			if err := p.drain(); err != nil {
				return err
			}
		} else if err := p.sync0(); err != nil {
			return err
		}
		p.streaming = true
		buf := p.buf
		p.buf, p.bufBytes = nil, 0
		for i := range buf {
			if err := p.w[0].s.Write(ctx, &buf[i]); err != nil {
				return p.check(err)
			}
		}
	}
	return nil
}

// applied reports whether the open transaction, assigned to worker k,
// was applied before the restart (see above).
func (p *Parallel) applied(k int) bool {
	return p.first.File != "" && posLess(p.first, p.cp[k])
}

// Commit hands the source transaction to its worker.
func (p *Parallel) Commit(ctx context.Context, tx change.TxEnd) error {
	if err := p.err(); err != nil {
		return err
	}
	p.mu.Lock()
	p.txs++
	p.mu.Unlock()
	defer func() {
		p.resetTx()
		p.last, p.lastSet = tx, true
		p.hist.committed()
		p.recycle()
	}()
	switch {
	case p.skip:
		return nil
	case p.streaming:
		w := p.w[0]
		if h := p.hist.nextFor(w); h != nil {
			w.s.SetSchemaHistory(h)
		}
		if err := w.s.Commit(ctx, tx); err != nil {
			return p.check(err)
		}
		w.sent = tx
		// Committed on the target when worker 0's group is, not now:
		// before another worker is given anything (open0), so that a
		// large transaction's last part and COMMIT overlap with the
		// decoding of the next one.
		p.open0 = true
		return nil
	case len(p.buf) == 0:
		return nil
	}
	if cap(p.buf) > 2*len(p.buf)+8 {
		// Sized after a longer transaction: the worker keeps what it is
		// handed until it applies it, so hand over the rows, not the room.
		p.buf = slices.Clone(p.buf)
	}
	k, barrier := p.assign()
	if p.applied(k) {
		return nil
	}
	if !barrier {
		if k != 0 {
			// A large transaction worker 0 applied may have touched
			// these rows: it commits first.
			if p.open0 {
				if err := p.wait(0); err != nil {
					return err
				}
			}
			p.others = true
		}
		// An earlier transaction on another worker that touched one of
		// these rows commits first: worker k waits for that commit.
		var deps []*flushDone
		for i := range p.inflight {
			if i == k {
				continue
			}
			d, err := p.dependOn(i, p.keys)
			if err != nil {
				return err
			}
			if d != nil {
				deps = append(deps, d)
			}
		}
		set := &p.inflight[k]
		for _, h := range p.keys {
			set.add(h)
		}
		p.queue(p.w[k], p.buf, &tx, deps)
		if set.len() > maxInflightKeys {
			return p.flushAsync(k)
		}
		return nil
	}
	if err := p.drain(); err != nil {
		return err
	}
	ddl := p.hasDDL() // (p.buf is the worker's once handed over: giveBack)
	ack := make(chan error, 1)
	p.queue(p.w[k], p.buf, &tx, nil)
	p.dispatch(p.w[k], job{flush: true, ack: ack})
	if err := <-ack; err != nil {
		return err
	}
	if ddl {
		// The other workers' view of the target's tables is stale.
		p.safe = map[string]bool{}
		clear(p.safeMap)
		for i, w := range p.w {
			if i != k {
				w.s.forgetTargetSchema()
			}
		}
	}
	return nil
}

func (p *Parallel) hasDDL() bool {
	for i := range p.buf {
		if p.buf[i].Op == change.DDL {
			return true
		}
	}
	return false
}

// Rollback drops the open source transaction.
func (p *Parallel) Rollback(ctx context.Context) error {
	if err := p.err(); err != nil {
		return err
	}
	streaming := p.streaming
	p.resetTx()
	if streaming {
		return p.check(p.w[0].s.Rollback(ctx))
	}
	return nil
}

// Close commits what every worker was given, its checkpoint at the last
// transaction end, and disconnects.
func (p *Parallel) Close(ctx context.Context) error {
	var err error
	if p.err() == nil {
		if p.streaming {
			p.w[0].s.Rollback(ctx)
			p.streaming = false
		}
		err = p.drain()
	}
	if cerr := p.closeWorkers(ctx); err == nil {
		err = cerr
	}
	if err == nil {
		err = p.err()
	}
	return err
}

func (p *Parallel) closeWorkers(ctx context.Context) error {
	var first error
	for _, w := range p.w {
		if w.jobs != nil {
			close(w.jobs)
			if w.started {
				<-w.done
			}
			w.jobs = nil
		}
		if err := w.s.Close(ctx); err != nil && first == nil && !errors.Is(err, w.err) {
			first = err
		}
	}
	if p.cat != nil {
		p.cat.Close()
		p.cat = nil
	}
	return first
}
