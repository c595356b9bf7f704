package mysqlsink

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// A job waits for room in its worker's queue only while the queue holds
// something and the job would take it past workerQueueMem; a job larger
// than the budget goes to an empty queue.
func TestWorkerQueueRoom(t *testing.T) {
	p := &Parallel{}
	w := &worker{took: make(chan struct{}, 1)}

	p.room(w, 3*workerQueueMem) // alone: admitted at once
	if got := w.queueMem.Load(); got != 3*workerQueueMem {
		t.Fatalf("queued %d", got)
	}
	w.release(3 * workerQueueMem)

	p.room(w, workerQueueMem-10)
	p.room(w, 10) // exactly full
	select {      // the release's token, which no room call took
	case <-w.took:
	default:
	}
	admitted := make(chan struct{})
	go func() {
		p.room(w, 1)
		close(admitted)
	}()
	// The third job waits until the worker has written one: whatever
	// the scheduling, it cannot be admitted before the release.
	select {
	case <-admitted:
		t.Fatal("a job was admitted past the budget")
	default:
	}
	w.release(10)
	<-admitted
	if got := w.queueMem.Load(); got != workerQueueMem-10+1 {
		t.Fatalf("queued %d after the release, want %d", got, workerQueueMem-10+1)
	}
}

func TestChangeMemCountsValues(t *testing.T) {
	c := change.Change{After: make(change.Row, 200)}
	if got, want := changeMem(&c, 200*8+1000), changeSize+200*8+1000+200*32; got != want {
		t.Fatalf("changeMem = %d, want %d", got, want)
	}
}
