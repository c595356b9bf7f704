package binlogcdc

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
)

// Stream follows a MySQL or MariaDB server as a replica, as 'binlogcdc
// stream' does, and delivers each committed transaction, in commit
// order, to one destination: Handler, Sink, or (neither set) what
// Options say: JSON lines to Stdout or Options.Output, a replay target
// (Options.Replay.To mysql://…) or Kafka (kafka://…). See the package
// documentation for the delivery contract.
//
// A Stream runs once: make a new one to start again.
type Stream struct {
	// Options are the settings of 'binlogcdc stream', one field per
	// flag: the server, the start point, the checkpoint file, the
	// tables, the snapshot.
	Options StreamOptions
	// Handler, when set, receives each committed transaction.
	Handler Handler
	// Sink, when set, receives each committed transaction through the
	// sink.Sink protocol (any sink of sink/..., or a program's own).
	Sink sink.Sink
	// Stdout receives the JSON lines when neither Handler, Sink,
	// Options.Output nor a replay target is set; nil: os.Stdout.
	Stdout io.Writer
	// Log receives what the command prints on stderr: "binlogcdc: …"
	// notes and warnings; nil: discarded.
	Log io.Writer

	stopRequested atomic.Bool
	running       atomic.Pointer[pipeline.Follower]
	mu            sync.Mutex
	cancel        context.CancelFunc // Run's context, while it runs
}

// Stop asks the stream to stop at the next transaction boundary: the
// open transaction, if any, is delivered and the checkpoint saved, then
// Run returns nil. A stream waiting for events, still connecting, or
// copying a snapshot (whose progress the checkpoint keeps) stops at
// once. To bound the wait for an open transaction, cancel Run's context
// later (the command gives it 30 seconds). Stop may be called from any
// goroutine, also before Run (which then returns nil at once, having
// delivered nothing).
func (s *Stream) Stop() {
	s.stopRequested.Store(true)
	if fl := s.running.Load(); fl != nil {
		fl.RequestStop()
		if fl.InTransaction() {
			return // it stops at the commit
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

// runContext is ctx, cancelled also by Stop when nothing is to finish.
func (s *Stream) runContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
	if s.stopRequested.Load() {
		cancel()
	}
	return ctx, cancel
}

// InTransaction reports whether the stream is in the middle of a
// transaction (Stop then waits for its end).
func (s *Stream) InTransaction() bool {
	fl := s.running.Load()
	return fl != nil && fl.InTransaction()
}

// checkDestination refuses two destinations at once.
func (s *Stream) checkDestination() error {
	if s.Handler == nil && s.Sink == nil {
		return nil
	}
	if s.Handler != nil && s.Sink != nil {
		return UsageError{Msg: "Stream: both Handler and Sink are set", Hint: "set one of them"}
	}
	return checkOwnDestination(s.Options.Output, &s.Options.Replay, &s.Options.Kafka)
}

// checkOwnDestination refuses options that name an output when a
// program's own Handler or Sink receives the changes.
func checkOwnDestination(output string, r *ReplayOptions, k *KafkaOptions) error {
	switch {
	case output != "":
		return UsageError{Msg: "Options.Output (-o) is set with a Handler or Sink, which receives the changes instead", Hint: "leave Output empty"}
	case r.enabled() || k.To != "":
		return UsageError{Msg: "Replay.To or --format sql is set with a Handler or Sink, which receives the changes instead", Hint: "leave Replay.To and Replay.Format empty"}
	case r.Format != "" && r.Format != "json":
		return UsageError{Msg: "Replay.Format " + r.Format + " is for the JSON output; a Handler or Sink receives change.Change values", Hint: "leave Replay.Format empty"}
	}
	return nil
}

// NewHandlerSink returns a sink.Sink that hands each committed
// transaction with at least one change to h (see Handler): for ReadTo,
// or any code that drives sinks.
func NewHandlerSink(h Handler) sink.Sink { return &handlerSink{h: h} }

// Tx is one committed transaction.
type Tx struct {
	// Changes are the transaction's row changes (and, with
	// Options.DDL, its DDL records), in binlog order. They stay valid
	// after the handler returns.
	Changes []change.Change
	// End is the commit: End.Next is the position the stream resumes
	// from after this transaction, End.GTID its GTID (when the server
	// logs them), End.Pos where it started.
	End change.TxEnd
}

// Handler receives committed transactions; see the package
// documentation for when it is called again.
type Handler interface {
	// HandleTx is called once per transaction, in commit order, never
	// concurrently. Returning nil acknowledges tx: the checkpoint may
	// then move past it. An error stops the stream: Run returns it, and
	// the checkpoint stays before tx.
	HandleTx(ctx context.Context, tx *Tx) error
}

// HandlerFunc makes a function a Handler.
type HandlerFunc func(ctx context.Context, tx *Tx) error

// HandleTx calls f.
func (f HandlerFunc) HandleTx(ctx context.Context, tx *Tx) error { return f(ctx, tx) }

// handlerSink buffers a transaction's changes and hands them to h at
// its commit.
type handlerSink struct {
	h   Handler
	buf []change.Change
}

func (s *handlerSink) Write(ctx context.Context, c *change.Change) error {
	s.buf = append(s.buf, c.Clone()) // a Write's values are valid only during the call
	return nil
}

func (s *handlerSink) Commit(ctx context.Context, end change.TxEnd) error {
	if len(s.buf) == 0 {
		return nil // nothing selected (or a ROTATE): only the checkpoint moves
	}
	tx := &Tx{Changes: s.buf, End: end}
	s.buf = nil
	return s.h.HandleTx(ctx, tx)
}

func (s *handlerSink) Rollback(ctx context.Context) error {
	s.buf = nil
	return nil
}

func (s *handlerSink) Close(ctx context.Context) error {
	s.buf = nil
	return nil
}
