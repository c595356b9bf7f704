package mysqlsink

import "github.com/binlogcdc/binlogcdc/change"

// Applying in the background (Background). Without it, decoding and
// applying take turns: while the target inserts a group's rows binlogcdc
// waits for its reply, and while binlogcdc decodes the next group the
// target waits for it. With it, a full group — committed source
// transactions only — is handed to a goroutine of its own, which executes
// its changes, saves the checkpoint and commits the target transaction
// exactly as commitGroup does, while the caller decodes the next group
// into a second buffer. At most one group is in flight: the next one
// waits for it (wait), and so does everything else that uses the
// connection or the state the goroutine owns (the session, the statement
// cache, the counts, the checkpoint saved). So the target sees the same
// statements in the same order, and a failure is the same failure: it is
// returned by the next call (Write, Commit, Rollback, Close), and the
// group it belongs to was rolled back, as when commitGroup fails. Memory:
// two groups (each bounded by pendingRows and pendingBytes) instead of one.
//
// The goroutine owns, while a group is in flight: conn and everything
// executing statements touches (stmts, b, args, pipe, load, large*,
// fkChecks, noAutocommit, queued*, cpSent, keepNoAuto, inTx, bulkOK,
// warnings, history, the plans' upsert and deleteKey fields), saved,
// stats, failed and reported. The
// caller owns pend, pendBytes, curStart, group, cur, handed and colsBuf, and
// reads the plans (which the goroutine only adds to through planFor,
// never while it runs).

// bgJob is a group handed to the background goroutine.
type bgJob struct {
	ops    []op
	grp    group
	blocks copierBlocks // the copier's blocks its rows were cut from (copier.go)
}

// Background makes the sink apply full groups on a goroutine of its own
// (see above). Call it once, before the first Write.
func (s *Sink) Background() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bgJobs != nil {
		return
	}
	s.bgJobs = make(chan bgJob)
	s.bgDone = make(chan bgJob, 1)
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
			if err := s.applyGroup(j.ops, &j.grp); err != nil {
				s.abort(err)
				s.reported = false // the caller has not seen it yet
				if s.onFailure != nil {
					s.onFailure(s.failed)
				}
			}
		}
		clear(j.ops)
		if s.failed != nil || s.history != nil {
			// A failure or a history row may hold on to values of
			// the group's rows: its blocks are not reused.
			j.blocks = copierBlocks{}
		}
		s.bgDone <- bgJob{ops: j.ops[:0], blocks: j.blocks}
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

// commitBackground hands the group, all of it committed source
// transactions, to the background goroutine, once the one before it is
// done.
func (s *Sink) commitBackground() error {
	// The next group uses the connection as the last one left it
	// (queued.go): no wait, which would turn autocommit back on.
	s.waitGroup()
	if err := s.check(); err != nil {
		return err
	}
	j := bgJob{ops: s.pend, grp: s.group, blocks: s.copier.handOver()}
	s.handed = *s.group.end
	s.pend, s.spare = s.spare, nil
	s.pendBytes, s.curStart = 0, 0
	s.group = group{}
	s.bgBusy = true
	s.bgJobs <- j
	return nil
}

// wait waits for the group in flight, if any, to be applied (or to fail:
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

// waitGroup waits for the group in flight, if any.
func (s *Sink) waitGroup() {
	if s.bgBusy {
		s.done(<-s.bgDone)
	}
}

// poll is wait without waiting: it reports whether no group is in
// flight any more.
func (s *Sink) poll() bool {
	if s.bgBusy {
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
	s.spare = j.ops
	s.copier.reuse(j.blocks)
	s.bgBusy = false
}

// sync waits for the group in flight and returns its failure.
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
