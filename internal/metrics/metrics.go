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
	"sync/atomic"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// Stream holds the counters of one run. The zero value is ready to use;
// New sets its clock.
type Stream struct {
	rows         [4]atomic.Uint64 // committed row changes: insert, update, delete; [3] DDL
	transactions atomic.Uint64
	events       atomic.Uint64
	bytes        atomic.Uint64
	reconnects   atomic.Uint64
	sinkErrors   atomic.Uint64

	lagNanos      atomic.Int64 // behind the source at the last commit (0: caught up)
	lastCommitTS  atomic.Int64 // source commit time of the last transaction (unix ns)
	checkpointAt  atomic.Int64 // when the checkpoint last advanced (unix ns)
	pendingSince  atomic.Int64 // first transaction begun since the checkpoint advanced (unix ns; 0: none)
	disconnected  atomic.Int64 // since when the source is unreachable (unix ns; 0: connected)
	connected     atomic.Bool
	bufferedFunc  atomic.Pointer[func() int64]
	retriesFunc   atomic.Pointer[func() uint64]
	checkpointPos atomic.Pointer[change.Position]

	now func() time.Time
}

// New returns a Stream that starts now: the checkpoint counts as having
// advanced at the start.
func New() *Stream {
	s := &Stream{now: time.Now}
	s.checkpointAt.Store(s.now().UnixNano())
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

// Begin records that a transaction began: work the checkpoint must catch
// up with.
func (s *Stream) Begin() {
	if s == nil || s.pendingSince.Load() != 0 {
		return
	}
	s.pendingSince.CompareAndSwap(0, s.clock().UnixNano())
}

// Commit counts a transaction delivered to the sink, with its rows by op
// (indexed by change.Op - 1: insert, update, delete, DDL) and its commit
// time at the source.
func (s *Stream) Commit(rows *[4]uint32, at time.Time) {
	if s == nil {
		return
	}
	for i, n := range rows {
		if n != 0 {
			s.rows[i].Add(uint64(n))
		}
	}
	s.transactions.Add(1)
	if !at.IsZero() {
		s.lastCommitTS.Store(at.UnixNano())
		lag := s.clock().Sub(at)
		if lag < 0 {
			lag = 0
		}
		s.lagNanos.Store(int64(lag))
	}
}

// Checkpoint records where the checkpoint stands; it advanced when pos
// differs from the last one.
func (s *Stream) Checkpoint(pos change.Position) {
	if s == nil {
		return
	}
	if old := s.checkpointPos.Load(); old != nil && *old == pos {
		return
	}
	s.checkpointPos.Store(&pos)
	s.checkpointAt.Store(s.clock().UnixNano())
	s.pendingSince.Store(0)
}

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
// advanced, the checkpoint advanced within stall of the first of them.
func (s *Stream) Health(window, stall time.Duration) error {
	now := s.clock()
	if d := s.disconnected.Load(); d != 0 {
		if out := now.Sub(time.Unix(0, d)); out > window {
			return fmt.Errorf("the source has been unreachable for %v, longer than the health window (%v)", out.Round(time.Second), window)
		}
	}
	if p := s.pendingSince.Load(); p != 0 {
		if stuck := now.Sub(time.Unix(0, p)); stuck > stall {
			return fmt.Errorf("the checkpoint has not advanced for %v although transactions have been waiting for %v (longer than %v)",
				now.Sub(time.Unix(0, s.checkpointAt.Load())).Round(time.Second), stuck.Round(time.Second), stall)
		}
	}
	return nil
}
