package mysqlsink

import "errors"

// How the coordinator of Parallel (parallel.go) has workers commit, and
// waits for them: before a barrier (drain), before a large transaction
// streamed to worker 0 (sync0), when a worker holds too many keys
// (flushAsync), and how a transaction that touches a row another worker
// has not committed waits for that commit (dependOn).
//
// A transaction T for worker k that touches a row worker i was given and
// has not committed does not make the coordinator wait: worker i is asked
// to commit what it was given (flushAsync), and T carries that commit,
// which worker k waits for before it applies T. The coordinator goes on
// decoding. (Waiting itself, it decoded nothing for 180 ms, once per
// replay of 1000-row transactions with --parallel 2, where updates begin
// on rows the other worker inserted.) No wait can close a cycle: what T
// waits for was handed to worker i before T was queued, and that commit
// waits only for what was handed to i before it, each wait pointing to
// something handed over earlier. And worker k's open target transaction
// holds no row worker i's commit needs: a transaction of i's touching a
// row of k's waited for k's commit of it in the same way.

// flushDone is a commit asked of a worker, for those that wait for it.
type flushDone struct {
	done chan struct{} // closed once it is done, or failed
	err  error         // why it failed; set before done is closed
}

// errOtherWorker stops a worker whose transaction waited for another
// worker's commit that failed; the first error (that worker's) is the one
// returned.
var errOtherWorker = errors.New("mysqlsink: another worker failed")

// pendingFlush is a commit asked of a worker and not waited for: the
// keys it covers, and its completion.
type pendingFlush struct {
	keys keySet
	fin  *flushDone // nil: none in flight
}

// dispatch hands w what was queued for it, with j's flush, ack and fin:
// with flush, w then commits its open target transaction and says so;
// with ack alone, w says when it has applied what it was given.
func (p *Parallel) dispatch(w *worker, j job) {
	if j.flush {
		p.queue(w, nil, nil, nil)
	}
	if len(w.pend) == 0 && !j.flush && j.ack == nil {
		return
	}
	j.items, j.mem = w.pend, w.pendMem
	p.room(w, j.mem) // parallel_queue.go
	w.jobs <- j
	w.pend, w.pendRows, w.pendMem = nil, 0, 0
}

// wait has worker k commit all it was given.
func (p *Parallel) wait(k int) error {
	ack := make(chan error, 1)
	p.dispatch(p.w[k], job{flush: true, ack: ack})
	p.inflight[k].reset()
	if k == 0 {
		p.open0 = false
	}
	err := <-ack
	// A commit asked before (flushAsync) was done before this one.
	p.flushing[k].fin = nil
	p.flushing[k].keys.reset()
	return err
}

// flushAsync has worker k commit all it was given, without waiting for
// it: its keys move to flushing[k], and a later transaction touching one
// of them waits for that commit (dependOn). One such commit per worker
// at a time: an earlier one is waited for first. (Waiting for each, the
// coordinator decoded nothing for 70-260 ms while the worker applied its
// queue: 0.4 s of a 4 s replay of 1000-row transactions with --parallel
// 2.)
func (p *Parallel) flushAsync(k int) error {
	if err := p.settle(k); err != nil {
		return err
	}
	fin := &flushDone{done: make(chan struct{})}
	p.dispatch(p.w[k], job{flush: true, fin: fin})
	fl := &p.flushing[k]
	fl.keys, p.inflight[k] = p.inflight[k], fl.keys
	p.inflight[k].reset()
	fl.fin = fin
	return nil
}

// settle waits for the commit flushAsync asked of worker k, if any.
func (p *Parallel) settle(k int) error {
	fl := &p.flushing[k]
	if fl.fin == nil {
		return nil
	}
	<-fl.fin.done
	err := fl.fin.err
	fl.fin = nil
	fl.keys.reset()
	return err
}

// dependOn returns the commit of worker i's that a transaction touching
// keys must wait for (nil: none): the one asked of it already when the
// keys are among those it covers, else a new one when worker i was given
// one of the keys since.
func (p *Parallel) dependOn(i int, keys []uint64) (*flushDone, error) {
	set, fl := &p.inflight[i], &p.flushing[i]
	if set.len() == 0 && fl.fin == nil {
		return nil, nil
	}
	var dep *flushDone
	for _, h := range keys {
		if set.has(h) {
			// Its commit covers the one in flight too (a worker
			// applies in order).
			if err := p.flushAsync(i); err != nil {
				return nil, err
			}
			return p.flushing[i].fin, nil
		}
		if dep == nil && fl.fin != nil && fl.keys.has(h) {
			dep = fl.fin
		}
	}
	return dep, nil
}

// sync0 waits until worker 0 has applied all it was given, committed or
// not: its goroutine then leaves its Sink to the caller's direct calls
// (a large transaction, streaming).
func (p *Parallel) sync0() error {
	ack := make(chan error, 1)
	p.dispatch(p.w[0], job{ack: ack})
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
		p.dispatch(w, job{flush: true, ack: acks[k]})
	}
	var first error
	for _, a := range acks {
		if err := <-a; err != nil && first == nil {
			first = err
		}
	}
	for k := range p.flushing {
		p.flushing[k].fin = nil // done before the drain's commit
		p.flushing[k].keys.reset()
	}
	return first
}
