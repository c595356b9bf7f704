package mysqlsink

import "github.com/binlogcdc/binlogcdc/change"

// Applying in the background (Background). Without it, decoding and
// applying take turns: while the target inserts a group's rows binlogcdc
// waits for its reply, and while binlogcdc decodes the next group the
// target waits for it. With it, a full group — committed source
// transactions only — is handed to a goroutine of its own, which executes
// its changes, saves the checkpoint and commits the target transaction
// exactly as commitGroup does, while the caller decodes the next group
// into another buffer. A source transaction larger than the sink holds
// (pendingBytes) is handed over in parts the same way (flushBackground),
// each executed as flush would, the target transaction left open.
//
// At most two jobs are in flight, applied in the order handed over: the
// goroutine finds the next one waiting when it is done with one, and the
// target does not wait for the caller to wake up and hand it over. A
// third waits for the first (waitSlot); everything else that uses the
// connection or the state the goroutine owns (the session, the statement
// cache, the counts, the checkpoint saved) waits for all (wait). So the
// target sees the same statements in the same order, and a failure is the
// same failure: it is returned by the next call (Write, Commit, Rollback,
// Close), the group it belongs to was rolled back, as when commitGroup
// fails, and a job after it is not applied. Memory: three groups (each
// bounded by pendingRows and pendingBytes) instead of one.
//
// Measured on bench/compare.sh's replay of 50,000-row transactions
// (2026-12-06, a busy machine): the target's connection thread was
// blocked, waiting for binlogcdc, 1.74-2.06 s of 6.8-9.0 s before
// (parts executed by the caller, which decoded nothing meanwhile), and
// 0.81-1.06 s with the parts in the background.
//
// The goroutine owns, while a job is in flight: conn and everything
// executing statements touches (stmts, b, args, pipe, load, large*,
// fkChecks, noAutocommit, queued*, cpSent, keepNoAuto, inTx, bulkOK,
// warnings, history, the plans' upsert and deleteKey fields), saved,
// stats, carry, failed and reported. The caller owns pend, pendBytes,
// curStart, curExecuted, group, cur, handed and colsBuf, and reads the
// plans (which the goroutine only adds to through planFor, never while it
// runs).

// bgJob is a group, or a part of one, handed to the background goroutine.
type bgJob struct {
	ops    []op
	grp    group
	blocks copierBlocks // the copier's blocks its rows were cut from (copier.go)
	mark   uint64       // Sink.wrote when it was handed over
	big    bool         // an op's row has a value of its own allocation (Sink.pendBig)

	// A part of a group (flushBackground): ops[:done] are of committed
	// source transactions, ops[done:] of the open one (the tx-th, as
	// Sink.transactions counts), which a SAVEPOINT precedes when
	// savepoint is set.
	partial   bool
	done      int
	savepoint bool
	tx        uint64
}

// carried holds the counts of the parts applied (flushBackground) whose
// group has not been handed over yet: the next group handed over takes
// them (they are its transactions'), or, when none is, the caller does
// once the goroutine is idle (waitGroup).
type carried struct {
	st  Stats  // of committed transactions
	cur Stats  // of the tx-th transaction, maybe still open
	tx  uint64 // cur's
}

// Background makes the sink apply full groups on a goroutine of its own
// (see above). Call it once, before the first Write.
func (s *Sink) Background() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bgJobs != nil {
		return
	}
	s.bgJobs = make(chan bgJob, 1)
	s.spares = make([][]op, 0, 2)
	s.bgDone = make(chan bgJob, 2)
	s.copier.recycle = true
	s.bgExit = make(chan struct{})
	go s.background()
}

// OnFailure has f called, at once, with the error of a group that fails
// on its own, with no call to the sink to return it to: applied in the
// background (Background), or committed by the timer of a quiet source.
// A caller waiting for events, not changes, learns of it so (stream
// --to). f must not call the sink. Set it before Background.
func (s *Sink) OnFailure(f func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onFailure = f
}

// background is the goroutine: it applies each group handed to it and
// hands its buffer back.
func (s *Sink) background() {
	defer close(s.bgExit)
	for j := range s.bgJobs {
		if s.failed == nil {
			var err error
			if j.partial {
				err = s.applyPart(&j)
			} else {
				j.grp.stats.add(&s.carry.st) // its parts' counts
				j.grp.stats.add(&s.carry.cur)
				err = s.applyGroup(j.ops, &j.grp)
			}
			if err != nil {
				s.abort(err)
				s.reported = false // the caller has not seen it yet
				if s.onFailure != nil {
					s.onFailure(s.failed)
				}
			}
		}
		if s.failed != nil || s.history != nil {
			// A failure or a history row may hold on to values of
			// the group's rows: its blocks are not reused.
			j.blocks = copierBlocks{}
		} else {
			// Said at once, not when the caller takes the job back
			// (done): a Parallel worker may be idle.
			s.release(j.mark)
		}
		// The caller clears the buffer (done): not here, between this
		// group's COMMIT and the next group's first statement.
		s.bgDone <- bgJob{ops: j.ops, blocks: j.blocks, big: j.big}
	}
}

// applyGroup executes a group's changes (all of committed source
// transactions) and commits it with its checkpoint.
func (s *Sink) applyGroup(ops []op, g *group) error {
	if len(ops) > 0 && g.end != nil && g.state == nil && g.hist == nil && g.snapshot == nil && s.canPipeline() {
		return s.applyGroupQueued(ops, g) // queued.go
	}
	if len(ops) > 0 {
		if err := s.begin(); err != nil {
			return err
		}
		if err := s.execOps(ops, &g.stats); err != nil {
			return err
		}
	}
	return s.finishGroup(g, change.Position{})
}

// applyPart executes a part of a group (flushBackground), as flush does,
// and leaves the target transaction open.
func (s *Sink) applyPart(j *bgJob) error {
	c := &s.carry
	if j.tx != c.tx { // the transaction of c.cur committed since
		c.st.add(&c.cur)
		c.tx = j.tx
	}
	return s.execTx(j.ops, j.done, j.savepoint, &c.st, &c.cur) // apply.go
}

// flushBackground is flush(len(s.pend)) on the background goroutine:
// when a source transaction is larger than the sink holds, its changes
// so far are executed there, while the caller decodes the next ones,
// instead of the caller waiting for the target. Everything that waits
// for a group waits for them.
func (s *Sink) flushBackground() error {
	s.waitSlot()
	if err := s.check(); err != nil {
		return err
	}
	j := bgJob{ops: s.pend, blocks: s.copier.handOver(), partial: true, done: s.curStart, tx: s.transactions}
	if s.curStart < len(s.pend) {
		j.savepoint = !s.curExecuted
		s.curExecuted = true
	}
	s.hand(j)
	return nil
}

// hand gives the goroutine the job j, made of s.pend, and starts a new
// pend buffer (flushBackground, commitBackground).
func (s *Sink) hand(j bgJob) {
	j.mark = s.wrote // every op queued so far is in j or an earlier job
	j.big, s.pendBig = s.pendBig, false
	s.pend = s.takeSpare()
	s.pendBytes, s.curStart = 0, 0
	s.bgBusy++
	s.bgJobs <- j
}

// commitBackground hands the group, all of it committed source
// transactions, to the background goroutine, once fewer than two jobs
// are in flight.
func (s *Sink) commitBackground() error {
	// The next group uses the connection as the last one left it
	// (queued.go): no wait, which would turn autocommit back on.
	s.waitSlot()
	if err := s.check(); err != nil {
		return err
	}
	j := bgJob{ops: s.pend, grp: s.group, blocks: s.copier.handOver()}
	s.handed = *s.group.end
	s.group = group{}
	s.hand(j)
	return nil
}

// wait waits for the jobs in flight, if any, to be applied (or to fail:
// then s.failed says why), and gives the caller the connection as the
// rest of the sink expects it: with autocommit on outside a transaction
// (queued.go).
func (s *Sink) wait() {
	s.waitGroup()
	if s.noAutocommit && !s.inTx && s.failed == nil {
		if err := s.restoreAutocommit(); err != nil {
			s.failed, s.reported = err, false
		}
	}
}

// waitGroup waits for the jobs in flight, if any, and takes what the
// goroutine carries.
func (s *Sink) waitGroup() {
	for s.bgBusy > 0 {
		s.done(<-s.bgDone)
	}
	// The goroutine is idle: what it carries is the caller's.
	c := &s.carry
	if c.tx == s.transactions && s.curExecuted {
		s.cur.add(&c.cur) // the open transaction's
	} else {
		s.group.stats.add(&c.cur)
	}
	s.group.stats.add(&c.st)
}

// waitSlot waits until fewer than two jobs are in flight.
func (s *Sink) waitSlot() {
	for s.bgBusy >= 2 {
		s.done(<-s.bgDone)
	}
}

// poll is wait without waiting: it reports whether no group is in
// flight any more.
func (s *Sink) poll() bool {
	for s.bgBusy > 0 {
		select {
		case j := <-s.bgDone:
			s.done(j)
		default:
			return false
		}
	}
	return true
}

// done takes back what the background goroutine gave back with a group
// applied: the group's buffer for the next one, and its rows' blocks.
func (s *Sink) done(j bgJob) {
	if len(s.spares) < cap(s.spares) {
		if j.big {
			// No reference to a large value stays. The rest are in
			// the copier's blocks, reused anyway, and overwritten as
			// the buffer fills again: clearing it each time cost 4%
			// of replay's CPU with --parallel 2.
			clear(j.ops)
		}
		s.spares = append(s.spares, j.ops[:0])
	}
	s.copier.reuse(j.blocks)
	s.bgBusy--
}

// takeSpare returns an empty pend buffer given back by the goroutine, or
// nil. (Up to three are in use: one filled, two in flight. A buffer grown
// anew for each group cost 6% of replay's CPU, its copies as it grew.)
func (s *Sink) takeSpare() []op {
	s.poll() // the jobs done give their buffers back
	n := len(s.spares)
	if n == 0 {
		return nil
	}
	b := s.spares[n-1]
	s.spares = s.spares[:n-1]
	return b
}

// sync waits for the jobs in flight and returns a failure.
func (s *Sink) sync() error {
	s.wait()
	return s.check()
}

// stopBackground ends the goroutine (Close, after wait).
func (s *Sink) stopBackground() {
	if s.bgJobs != nil {
		close(s.bgJobs)
		<-s.bgExit
		s.bgJobs = nil
	}
}

// release says that the first n ops queued (wrote) were executed, or
// dropped, and that nothing refers to their rows any more (for
// Parallel's reuse of its row copies: parallel_recycle.go). Called by the
// background goroutine or by the caller, never both at once.
func (s *Sink) release(n uint64) {
	if n > s.released.Load() {
		s.released.Store(n)
	}
}

// queuedOps returns how many ops were queued so far (wrote).
func (s *Sink) queuedOps() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote
}
