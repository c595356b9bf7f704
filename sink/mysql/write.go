package mysqlsink

import (
	"context"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// ChecksUTF8 reports true: text in a UTF-8 or ASCII collation may come
// unchecked (rowevent.Decoder.LazyUTF8), and goes to the target as the
// binlog holds it, byte for byte. The target checks it against the
// column's charset as it stores it, and under the session's strict
// sql_mode (sqltext.SessionSQLMode) refuses text that is not valid there,
// so the replay stops with that error; the ENUM statements that run
// without strict mode count the target's warnings (enum.go). Checked by
// binlogcdc, such text would have become U+FFFD in the target instead.
// (Not checking it also saves replay the decoder's pass over each text.)
func (s *Sink) ChecksUTF8() bool { return true }

// ChecksUTF8 is Sink.ChecksUTF8: the workers are Sinks.
func (p *Parallel) ChecksUTF8() bool { return true }

// Write queues c for the open source transaction.
func (s *Sink) Write(_ context.Context, c *change.Change) error {
	return s.write(c, true)
}

// WriteBatch is Write of each of cs (sink.BatchWriter), under one lock.
func (s *Sink) WriteBatch(_ context.Context, cs []change.Change) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range cs {
		if err := s.writeLocked(&cs[i], true); err != nil {
			return i, err
		}
	}
	return len(cs), nil
}

// write is Write; without clone, c's rows are the sink's (Parallel's).
func (s *Sink) write(c *change.Change, clone bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(c, clone)
}

func (s *Sink) writeLocked(c *change.Change, clone bool) error {
	if err := s.check(); err != nil {
		return err
	}
	if c.Op == change.DDL {
		if err := s.ddl(c); err != nil {
			return s.fail(err)
		}
		return nil
	}
	if bookkeeping(c) { // opchange.go
		return nil
	}
	o := op{c: opChangeOf(c)}
	if err := s.prepareOp(&o); err != nil {
		return s.fail(err)
	}
	ins, lines, enc := o.c.Op == change.Insert, s.bulkLines.Load(), s.encInserts.Load()
	if !clone || !ins || lines || !enc || !s.encodeCloned(&o) { // encoded.go
		if !clone || !s.cloneRows(&o) {
			// No copy: the rows are the sink's (Parallel's), or a
			// large row's, executed by the flush below while the
			// decoder's values are valid (large.go).
			o.c.Before, o.c.After = c.Before, c.After
			o.size = rowSize(c.Before) + rowSize(c.After)
		}
		if ins && lines {
			s.formatLine(&o) // bulk.go
		} else if ins && enc {
			s.encodeRow(&o) // encoded.go
		}
	}
	if s.group.txs == 0 && s.group.rows == 0 {
		s.group.start = time.Now()
	}
	s.pend = append(s.pend, o)
	s.wrote++
	// A value above a quarter of a block has an allocation of its own
	// (copier.go), and a row not copied is the decoder's (large.go).
	s.pendBig = s.pendBig || o.size > copierBytes/4
	s.pendBytes += opMem(&o)
	s.group.rows++
	if len(s.pend) >= pendingRows || s.pendBytes >= pendingBytes {
		if s.bgJobs != nil && (!clone || o.size < pendingBytes) {
			// Every pending row is the sink's own (copied, or
			// Parallel's): they can wait for the goroutine.
			if err := s.flushBackground(); err != nil { // background.go
				return s.fail(err)
			}
			return nil
		}
		if err := s.flush(len(s.pend)); err != nil {
			return s.fail(err)
		}
	}
	return nil
}
