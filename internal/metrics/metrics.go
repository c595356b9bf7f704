// Package metrics counts what a stream (or a long read) does, for
// Prometheus (see Serve) and its health check.
//
// The pipeline, the follower and the command call a *Stream's methods on
// the hot path: each is a few atomic operations, without allocation, and a
// nil *Stream does nothing, so that code needs no checks when metrics are
// off.
package metrics

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// Stream holds the counters of one run. The zero value is ready to use;
// New sets its clock.
type Stream struct {
	rows         [4]atomic.Uint64 // committed row changes: insert, update, delete; [3] DDL
	transactions atomic.Uint64    // committed with at least one change delivered
	sourceTx     atomic.Uint64    // every source transaction read to its commit
	events       atomic.Uint64
	bytes        atomic.Uint64
	reconnects   atomic.Uint64
	sinkErrors   atomic.Uint64

	lagNanos     atomic.Int64 // behind the source at the last commit (0: caught up)
	lastCommitTS atomic.Int64 // source commit time of the last transaction (unix ns)
	disconnected atomic.Int64 // since when the source is unreachable (unix ns; 0: connected)
	connected    atomic.Bool
	bufferedFunc atomic.Pointer[func() int64]
	retriesFunc  atomic.Pointer[func() uint64]
	verify       verifyState // live verification (verify.go)

	// The checkpoint and the transactions it has not caught up with
	// (once per transaction: a mutex is cheap enough).
	mu        sync.Mutex
	cpFunc    func() change.Position // polled, if set (SetCheckpointFunc)
	cpPos     change.Position
	cpAt      time.Time // when cpPos was first seen
	lastBegin mark      // the last transaction begun
	waiting   mark      // the first transaction begun at or after cpPos (zero: none)

	now func() time.Time
}

// mark is a transaction's start and when it began.
type mark struct {
	pos change.Position
	at  time.Time
}

// New returns a Stream that starts now: the checkpoint counts as having
// advanced at the start.
func New() *Stream {
	s := &Stream{now: time.Now}
	s.cpAt = s.now()
	return s
}

func (s *Stream) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// Event counts one event of size bytes read from the source.
func (s *Stream) Event(size int) {
	if s == nil {
		return
	}
	s.events.Add(1)
	s.bytes.Add(uint64(size))
}

// Heartbeat records that the source said it has nothing more to send:
// the stream is caught up.
func (s *Stream) Heartbeat() {
	if s == nil {
		return
	}
	s.lagNanos.Store(0)
}

// Begin records that a transaction began at pos: work the checkpoint
// must catch up with.
func (s *Stream) Begin(pos change.Position) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.lastBegin = mark{pos, s.clock()}
	if s.waiting.at.IsZero() && !before(pos, s.cpPos) {
		s.waiting = s.lastBegin
	}
	s.mu.Unlock()
}

// Commit counts a source transaction committed in the sink, with the
// changes of it the sink received, by op (indexed by change.Op - 1:
// insert, update, delete, DDL), and its commit time at the source. A
// transaction whose changes were all filtered out counts only among the
// source's transactions, not among those delivered.
func (s *Stream) Commit(rows *[4]uint32, at time.Time) {
	if s == nil {
		return
	}
	delivered := false
	for i, n := range rows {
		if n != 0 {
			s.rows[i].Add(uint64(n))
			delivered = true
		}
	}
	s.sourceTx.Add(1)
	if delivered {
		s.transactions.Add(1)
	}
	if !at.IsZero() {
		s.lastCommitTS.Store(at.UnixNano())
		lag := s.clock().Sub(at)
		if lag < 0 {
			lag = 0
		}
		s.lagNanos.Store(int64(lag))
	}
}

// Checkpoint records where the checkpoint stands (where the first
// transaction it does not cover starts); it advanced when pos differs
// from the last one.
func (s *Stream) Checkpoint(pos change.Position) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.setCheckpoint(pos)
	s.mu.Unlock()
}

// SetCheckpointFunc sets a function that says where the checkpoint
// stands, asked at each scrape and health check: for a checkpoint that a
// sink saves on its own (a replay target's, committed by a timer). It
// must not block.
func (s *Stream) SetCheckpointFunc(f func() change.Position) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.cpFunc = f
	s.mu.Unlock()
}

// setCheckpoint is Checkpoint with s.mu held.
func (s *Stream) setCheckpoint(pos change.Position) {
	if pos == s.cpPos || pos.File == "" {
		return
	}
	s.cpPos, s.cpAt = pos, s.clock()
	if s.waiting.at.IsZero() || !before(s.waiting.pos, pos) {
		return // nothing waited, or what waits is still not covered
	}
	// The transaction that waited is covered; the last one begun may not be.
	s.waiting = mark{}
	if !s.lastBegin.at.IsZero() && !before(s.lastBegin.pos, pos) {
		s.waiting = s.lastBegin
	}
}

// checkpointState polls the checkpoint function and returns when the
// checkpoint last advanced and since when a transaction has been waiting
// for it (zero: none).
func (s *Stream) checkpointState() (cpAt, waitingSince time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cpFunc != nil {
		s.setCheckpoint(s.cpFunc())
	}
	return s.cpAt, s.waiting.at
}

// before reports whether a comes before b (change.Position.Compare: by
// file sequence, an archive's later server histories after the earlier).
func before(a, b change.Position) bool { return a.Before(b) }

// SinkError counts a failed write to the sink (a target server, Kafka,
// the output file).
func (s *Stream) SinkError() {
	if s != nil {
		s.sinkErrors.Add(1)
	}
}

// Connected records that the source is connected.
func (s *Stream) Connected() {
	if s == nil {
		return
	}
	s.connected.Store(true)
	s.disconnected.Store(0)
}

// Disconnected records that the source was lost (or could not be
// reached); the first call after Connected starts the outage.
func (s *Stream) Disconnected() {
	if s == nil {
		return
	}
	s.connected.Store(false)
	s.disconnected.CompareAndSwap(0, s.clock().UnixNano())
}

// Reconnect counts an attempt to connect again after the source was lost.
func (s *Stream) Reconnect() {
	if s != nil {
		s.reconnects.Add(1)
	}
}

// SetBuffered sets the function that says how many records the sink
// holds that the destination has not acknowledged yet (Kafka).
func (s *Stream) SetBuffered(f func() int64) {
	if s != nil && f != nil {
		s.bufferedFunc.Store(&f)
	}
}

// SetRetries sets the function that counts the sink's transient errors
// that it retried (Kafka brokers unreachable).
func (s *Stream) SetRetries(f func() uint64) {
	if s != nil && f != nil {
		s.retriesFunc.Store(&f)
	}
}

// Health says whether the stream is healthy: not disconnected for longer
// than window, and, when transactions began after the checkpoint last
// advanced, the checkpoint advanced within stall of the first of them;
// with live verification, its last pass proved the copy equal.
func (s *Stream) Health(window, stall time.Duration) error {
	if err := s.verifyHealth(); err != nil { // verify.go
		return err
	}
	now := s.clock()
	if d := s.disconnected.Load(); d != 0 {
		if out := now.Sub(time.Unix(0, d)); out > window {
			return fmt.Errorf("the source has been unreachable for %v, longer than the health window (%v)", out.Round(time.Second), window)
		}
	}
	cpAt, waiting := s.checkpointState()
	if !waiting.IsZero() {
		if stuck := now.Sub(waiting); stuck > stall {
			return fmt.Errorf("the checkpoint has not advanced for %v although a transaction has been waiting for %v (longer than %v)",
				now.Sub(cpAt).Round(time.Second), stuck.Round(time.Second), stall)
		}
	}
	return nil
}
