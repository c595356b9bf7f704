package mysqlsink

// How the coordinator of Parallel (parallel.go) has workers commit, and
// waits for them: before a transaction that touches a row another worker
// has not committed (waitFor, wait), when a worker holds too many keys
// (flushAsync), before a barrier (drain) and before a large transaction
// streamed to worker 0 (sync0).

// pendingFlush is a commit asked of a worker and not waited for: the
// keys it covers, and its result.
type pendingFlush struct {
	keys keySet
	ack  chan error // nil: none in flight
}

// dispatch hands w what was queued for it; with flush, w then commits
// its open target transaction and sends its result to ack.
func (p *Parallel) dispatch(w *worker, flush bool, ack chan error) {
	if flush {
		p.queue(w, nil, nil)
	}
	if len(w.pend) == 0 && !flush {
		return
	}
	w.jobs <- job{items: w.pend, flush: flush, ack: ack}
	w.pend, w.pendRows = nil, 0
}

// wait has worker k commit all it was given.
func (p *Parallel) wait(k int) error {
	ack := make(chan error, 1)
	p.dispatch(p.w[k], true, ack)
	p.inflight[k].reset()
	if k == 0 {
		p.open0 = false
	}
	err := <-ack
	// A commit asked before (flushAsync) was done before this one.
	p.flushing[k].ack = nil
	p.flushing[k].keys.reset()
	return err
}

// flushAsync has worker k commit all it was given, without waiting for
// it: its keys move to flushing[k], which a later transaction touching
// one of them waits for (settle), as it would for inflight[k]. One such
// commit per worker at a time: an earlier one is waited for first.
// (Waiting for each, the coordinator decoded nothing for 70-260 ms while
// the worker applied its queue: 0.4 s of a 4 s replay of 1000-row
// transactions with --parallel 2.)
func (p *Parallel) flushAsync(k int) error {
	if err := p.settle(k); err != nil {
		return err
	}
	ack := make(chan error, 1)
	p.dispatch(p.w[k], true, ack)
	fl := &p.flushing[k]
	fl.keys, p.inflight[k] = p.inflight[k], fl.keys
	p.inflight[k].reset()
	fl.ack = ack
	return nil
}

// settle waits for the commit flushAsync asked of worker k, if any.
func (p *Parallel) settle(k int) error {
	fl := &p.flushing[k]
	if fl.ack == nil {
		return nil
	}
	err := <-fl.ack
	fl.ack = nil
	fl.keys.reset()
	return err
}

// waitFor has worker i commit first when it was given one of keys and
// has not committed it.
func (p *Parallel) waitFor(i int, keys []uint64) error {
	set, fl := &p.inflight[i], &p.flushing[i]
	if set.len() == 0 && fl.ack == nil {
		return nil
	}
	for _, h := range keys {
		if set.has(h) {
			return p.wait(i) // after the commit in flight, if any
		}
		if fl.ack != nil && fl.keys.has(h) {
			if err := p.settle(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// sync0 waits until worker 0 has applied all it was given, committed or
// not: its goroutine then leaves its Sink to the caller's direct calls
// (a large transaction, streaming).
func (p *Parallel) sync0() error {
	w := p.w[0]
	ack := make(chan error, 1)
	w.jobs <- job{items: w.pend, ack: ack}
	w.pend, w.pendRows = nil, 0
	return <-ack
}

// drain has every worker commit all it was given, its checkpoint at the
// last transaction end.
func (p *Parallel) drain() error {
	for k := range p.inflight {
		p.inflight[k].reset()
	}
	p.open0, p.others = false, false
	acks := make([]chan error, len(p.w))
	for k, w := range p.w {
		acks[k] = make(chan error, 1)
		p.dispatch(w, true, acks[k])
	}
	var first error
	for _, a := range acks {
		if err := <-a; err != nil && first == nil {
			first = err
		}
	}
	for k := range p.flushing {
		p.flushing[k].ack = nil // done before the drain's commit
		p.flushing[k].keys.reset()
	}
	return first
}
