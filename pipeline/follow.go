package pipeline

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Follower runs pipelines over a source that can be dialed again: after a
// broken connection it drops the open transaction's changes
// (sink.Rollback) and reconnects, with backoff, at the start of the first
// transaction not yet committed. So no change is lost and none is emitted
// twice.
//
// Only errors of the source are retried: a failure of the sink or of
// OnCommit (a full disk, a read-only checkpoint directory) ends Run, so
// that nothing is acknowledged that was not written.
type Follower struct {
	// Dial opens a source that starts at from, a transaction boundary.
	Dial func(ctx context.Context, from change.Position) (binlog.Source, error)
	Sink sink.Sink
	// Options for each pipeline; OnCommit is called as in Options.
	Options Options
	// Retryable says whether an error of the source (Dial or Next) is
	// worth a reconnect (a broken connection, a server restart). Errors in
	// the data never are, nor errors of anything else.
	Retryable func(error) bool
	// Logf reports reconnects.
	Logf func(format string, args ...any)
	// MinBackoff and MaxBackoff bound the wait between reconnects
	// (default 100 ms and 10 s).
	MinBackoff, MaxBackoff time.Duration

	// xa holds the prepared XA transactions' changes from one pipeline
	// to the next: a reconnect resumes after their XA PREPARE.
	xa map[string]heldXA

	mu   sync.Mutex
	cur  *Pipeline // the running pipeline; nil while (re)connecting
	last Stats     // Progress of the last pipeline, while cur is nil
	req  bool
}

// RequestStop makes Run return nil at the next transaction boundary.
func (f *Follower) RequestStop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.req = true
	if f.cur != nil {
		f.cur.RequestStop()
	}
}

// InTransaction reports whether the running pipeline is inside a transaction.
func (f *Follower) InTransaction() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	// cur is cleared when its source fails: a pipeline that died in a
	// transaction still says it is in one, but that transaction was
	// rolled back and can only finish after a reconnect, which may never
	// come (the server is down). A graceful stop must not wait for it.
	return f.cur != nil && f.cur.InTransaction()
}

// Progress returns the running totals as of the last commit.
func (f *Follower) Progress() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		return f.last
	}
	return f.cur.Progress()
}

// Run follows from start until ctx ends, RequestStop, or an error that is
// not retryable.
func (f *Follower) Run(ctx context.Context, start change.Position) error {
	minB, maxB := f.MinBackoff, f.MaxBackoff
	if minB == 0 {
		minB = 100 * time.Millisecond
	}
	if maxB == 0 {
		maxB = 10 * time.Second
	}
	backoff := minB
	from := start
	var total Stats
	m := f.Options.Metrics // nil: off
	lost := false
	for {
		if lost {
			m.Reconnect()
		}
		dialed, err := f.Dial(ctx, from)
		fromSource := true // err is the source's
		if err == nil {
			m.Connected()
			src := &watchedSource{Source: dialed}
			if fl, ok := f.Sink.(idleFlusher); ok {
				src.idle = fl.FlushIdle
			}
			if w, ok := f.Sink.(idleWorker); ok {
				src.work = w.WorkIdle
			}
			p := New(src, f.Sink, f.Options)
			p.Stats, p.xa = total, f.xa
			f.mu.Lock()
			f.cur = p
			if f.req {
				p.RequestStop()
			}
			f.mu.Unlock()
			err = p.Run(ctx)
			f.mu.Lock()
			f.cur, f.last = nil, p.Progress()
			f.mu.Unlock()
			src.Close()
			total, f.xa = p.Stats, p.xa
			if total.Last.File != "" {
				if total.Last != from {
					backoff = minB // progress was made
				}
				from = total.Last
			}
			if err == nil {
				return nil
			}
			fromSource = src.err != nil
		}
		if rerr := f.Sink.Rollback(ctx); rerr != nil && fromSource {
			return rerr
		}
		if !fromSource {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !f.retryable(err) {
			return err
		}
		m.Disconnected()
		lost = true
		if f.Logf != nil {
			f.Logf("connection lost (%v); reconnecting at %s:%d in %v", err, from.File, from.Offset, backoff)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
		if backoff > maxB {
			backoff = maxB
		}
	}
}

func (f *Follower) retryable(err error) bool {
	var me *tablemap.MetadataError
	var be *binlog.Error
	if errors.As(err, &me) || (errors.As(err, &be) && !errors.Is(err, io.ErrUnexpectedEOF)) {
		return false
	}
	if f.Retryable != nil {
		return f.Retryable(err)
	}
	return true
}

// watchedSource remembers whether its source failed: the errors a
// pipeline returns otherwise come from the sink or OnCommit.
type watchedSource struct {
	binlog.Source
	err  error
	idle func() error // before Next waits for the source (nil: nothing)
	// work, before idle: work to do while the source has nothing at hand
	// (waiting says it still has not).
	work func(ctx context.Context, waiting func() bool) error
}

// buffered is a Source that can tell whether Next would wait
// (binlog.LiveSource).
type buffered interface{ Buffered() bool }

// idleFlusher is a sink that holds written output back until it is told
// the source went idle (sink/jsonl without FlushEachCommit): so a stream
// catching up writes in large blocks, and one that is caught up writes
// each transaction as it commits.
type idleFlusher interface{ FlushIdle() error }

// idleWorker is a sink with work to do while the source has nothing at
// hand (snapshot.Incremental reads chunks then).
type idleWorker interface {
	WorkIdle(ctx context.Context, waiting func() bool) error
}

func (s *watchedSource) Next(ctx context.Context) (*binlog.Event, error) {
	if s.idle != nil || s.work != nil {
		if b, ok := s.Source.(buffered); ok && !b.Buffered() {
			// A failure to write is the sink's, not the source's: fatal.
			if s.work != nil {
				if err := s.work(ctx, func() bool { return !b.Buffered() }); err != nil {
					return nil, err
				}
			}
			if s.idle != nil {
				if err := s.idle(); err != nil {
					return nil, err
				}
			}
		}
	}
	ev, err := s.Source.Next(ctx)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return ev, err
}
