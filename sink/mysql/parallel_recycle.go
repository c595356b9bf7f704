package mysqlsink

import (
	"sync"

	"github.com/binlogcdc/binlogcdc/change"
)

// Reusing Parallel's row copies. The coordinator copies every row it
// buffers (Write) out of the decoder's buffers, cut from the blocks of its
// rowCopier, and hands them to the workers, whose Sinks queue them
// without copying them again. A single Sink reuses its blocks once the
// group they went with is applied (background.go); here the rows of one
// block go to several workers, so a block is reused only once every
// worker is done with every row cut from it before. Without it, the
// garbage collector found and freed those blocks: about 0.45 of 2.5 CPU-s
// sampled in a replay of 1000-row transactions with --parallel 2.
//
// The blocks the coordinator filled are set aside at each Commit, with,
// for each worker, how many items (transactions) it had been given by
// then (an epoch). A worker notes, after each job, how many ops its Sink
// had queued (Sink.wrote) when it had written that job's last item; its
// Sink says how many of the ops it queued were executed and no longer
// referred to (Sink.released: when a group applied in the background
// comes back, or after flush). An epoch's blocks are reused when every
// worker has released the ops of the items it was given before the
// epoch. A worker that failed, or keeps a history row, releases nothing
// until it can; the blocks set aside are bounded (maxEpochBlocks), the
// oldest left to the garbage collector beyond that.

// maxEpochBlocks bounds the blocks held for reuse and not reused yet:
// with 1000-row transactions and --parallel 2, about 700 are in flight.
const maxEpochBlocks = 4096

// copyEpoch is the blocks filled before a Commit, reusable once each
// worker k has released the ops of its first need[k] items.
type copyEpoch struct {
	blocks copierBlocks
	need   []uint64
}

// jobMark is a worker's note: the ops of its items up to seq were queued
// on its Sink by the time it had queued ops in all.
type jobMark struct {
	seq, ops uint64
}

// workerMarks is a worker's notes, written by its goroutine and read by
// the coordinator.
type workerMarks struct {
	mu    sync.Mutex
	marks []jobMark
	freed uint64 // the items up to this one are released
}

// noteJob is called by worker w's goroutine after a job whose last item
// was seq (0: none).
func (w *worker) noteJob(seq uint64) {
	if seq == 0 {
		return
	}
	ops := w.s.queuedOps()
	w.m.mu.Lock()
	w.m.marks = append(w.m.marks, jobMark{seq: seq, ops: ops})
	w.m.mu.Unlock()
}

// freed returns the last item of w's whose rows its Sink no longer refers to.
func (w *worker) freed() uint64 {
	rel := w.s.released.Load()
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	i := 0
	for i < len(w.m.marks) && w.m.marks[i].ops <= rel {
		w.m.freed = w.m.marks[i].seq
		i++
	}
	if i > 0 {
		n := copy(w.m.marks, w.m.marks[i:])
		w.m.marks = w.m.marks[:n]
	}
	return w.m.freed
}

// recycle sets aside the blocks filled since the last call and takes back
// for reuse those every worker is done with (see above). Called at each
// Commit, when no row of an open transaction is buffered.
func (p *Parallel) recycle() {
	if !p.copier.recycle {
		return
	}
	if b := p.copier.handOver(); len(b.vals)+len(b.bytes) > 0 {
		need := make([]uint64, len(p.w))
		for k, w := range p.w {
			need[k] = w.queued
		}
		p.epochs = append(p.epochs, copyEpoch{blocks: b, need: need})
		p.epochBlocks += len(b.vals) + len(b.bytes)
	}
	for len(p.epochs) > 0 {
		e := &p.epochs[0]
		if p.releasedAll(e.need) {
			p.copier.reuse(e.blocks)
		} else if p.epochBlocks <= maxEpochBlocks {
			return
		}
		p.epochBlocks -= len(e.blocks.vals) + len(e.blocks.bytes)
		*e = copyEpoch{}
		p.epochs = p.epochs[1:]
	}
}

// releasedAll reports whether each worker k released the ops of its
// first need[k] items.
func (p *Parallel) releasedAll(need []uint64) bool {
	for k, w := range p.w {
		if need[k] > 0 && w.freed() < need[k] {
			return false
		}
	}
	return true
}

// bufFree bounds the change buffers kept for reuse (Parallel.bufFree).
const bufFree = 32

// giveBack is called by a worker's goroutine once it has written the
// items of a job: their change buffers, which its Sink copied each change
// out of (op), are empty again for the coordinator's next transactions
// (takeBuf). A Change is about 250 bytes, a 1000-row transaction's buffer
// a quarter of a megabyte: made anew for each, they were most of what the
// garbage collector scanned and cleared.
func (p *Parallel) giveBack(items []item) {
	for _, it := range items {
		b := it.changes
		if cap(b) == 0 {
			continue
		}
		clear(b[:cap(b)]) // no reference to rows, tables or text stays
		select {
		case p.bufFree <- b[:0]:
		default:
			return
		}
	}
}

// takeBuf returns an empty change buffer with room for n changes: one a
// worker gave back, or a new one.
func (p *Parallel) takeBuf(n int) []change.Change {
	for {
		select {
		case b := <-p.bufFree:
			if cap(b) >= n && cap(b) <= 2*n+8 {
				return b
			}
			continue // too small, or too large to hand over (Commit)
		default:
		}
		return make([]change.Change, 0, n)
	}
}
