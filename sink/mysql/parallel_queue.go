package mysqlsink

import (
	"unsafe"

	"github.com/binlogcdc/binlogcdc/change"
)

// The bytes queued for a worker of Parallel (parallel.go).
//
// A worker's queue held up to workerQueue jobs of up to batchRows rows
// each, bounded in count only: the coordinator, faster than the target,
// keeps it full. That was 16,000 rows a worker whatever their width. With
// 200-column rows (about 10 KB each as changes) `--parallel 2` peaked at
// 320 MiB against 96 MiB on one connection, and a table with a large
// column would have taken more still. So each worker also has a byte
// budget: what its queued rows hold in memory (changeMem), counted from
// when they are handed over (dispatch) until its goroutine has written
// them to its Sink, whose groups have bounds of their own (pendingBytes).
// A job that would take the queue past workerQueueMem waits for room; a
// job alone may be larger (a transaction of up to parallelMaxBytes).
//
// Waiting cannot deadlock: everything already in a worker's queue waits
// only for commits handed to other workers before it (parallel_wait.go),
// so every worker empties its queue without the coordinator; and a
// worker that failed drops its jobs, still making room.
const (
	workerQueueMem = 16 << 20 // bytes queued per worker, about
	batchMem       = 1 << 20  // bytes handed to a worker at once, about
)

// changeSize is a change's own size, without its values.
const changeSize = int(unsafe.Sizeof(change.Change{}))

// changeMem is about what the copied change c holds in memory: itself,
// its values' headers (size counts 8 bytes of each, which is 40), and
// size bytes copied for it (rowCopier.clone).
func changeMem(c *change.Change, size int) int {
	return changeSize + size + 32*(len(c.Before)+len(c.After)) + len(c.SQL)
}

// room waits until w's queue has room for a job holding mem bytes.
func (p *Parallel) room(w *worker, mem int) {
	for {
		q := int(w.queueMem.Load())
		if q == 0 || q+mem <= workerQueueMem {
			w.queueMem.Add(int64(mem))
			return
		}
		<-w.took
	}
}

// release is called by w's goroutine once it has written (or dropped) a
// job holding mem bytes.
func (w *worker) release(mem int) {
	if mem == 0 {
		return
	}
	w.queueMem.Add(-int64(mem))
	select {
	case w.took <- struct{}{}:
	default:
	}
}
