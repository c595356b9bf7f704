// Package jsonl writes changes as JSON lines, one object per row change
// (see the README for the contract).
//
// Delivery: lines of a transaction are held back until it commits, so an
// uncommitted or truncated transaction is never printed. Commit writes
// them to the underlying writer; with Options.Sync and a file, it also
// fsyncs, so that a checkpoint taken after Commit is safe. Lines written
// before a crash are complete; after a restart from a checkpoint, the
// transactions between the last checkpoint and the crash are written
// again: at-least-once, deduplicated by (pos.file, pos.offset, pos.row).
package jsonl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
)

var _ sink.Sink = (*Sink)(nil)

// DefaultMemory is how much of one transaction's output is kept in memory
// before the rest spills to a temporary file.
const DefaultMemory = 8 << 20

// Options configure a Sink. The zero value is usable.
type Options struct {
	// Memory bounds the bytes of one transaction held in memory (default
	// DefaultMemory); larger transactions spill to a temporary file.
	Memory int
	// TempDir is where spill files go (default os.TempDir()).
	TempDir string
	// Sync makes Commit fsync the output when it has a Sync method (an
	// *os.File) that works for it.
	Sync bool
	// FlushEachCommit writes each transaction out at its commit (for
	// streaming); otherwise output is buffered up to 128 KiB.
	FlushEachCommit bool
}

// Sink writes JSON lines to an io.Writer.
type Sink struct {
	out  *bufio.Writer
	file interface{ Sync() error } // the output, when it can be synced
	opts Options
	enc  encoder

	pending []byte   // the open transaction's lines
	spill   *os.File // where pending overflowed to, if it did
	spilled int64

	Lines uint64
}

// New returns a Sink writing to w.
func New(w io.Writer, opts Options) *Sink {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory
	}
	s := &Sink{out: bufio.NewWriterSize(w, 256<<10), opts: opts}
	if f, ok := w.(interface{ Sync() error }); ok {
		s.file = f
	}
	return s
}

// Write encodes c into the open transaction.
func (s *Sink) Write(_ context.Context, c *change.Change) error {
	s.pending = s.enc.appendChange(s.pending, c)
	s.Lines++
	if len(s.pending) >= s.opts.Memory {
		return s.spillPending()
	}
	return nil
}

func (s *Sink) spillPending() error {
	if s.spill == nil {
		f, err := os.CreateTemp(s.opts.TempDir, "binlogcdc-tx-*.jsonl")
		if err != nil {
			return fmt.Errorf("jsonl: large transaction: cannot create a spill file: %w (set TMPDIR to a writable directory)", err)
		}
		os.Remove(f.Name()) // unlinked: gone when closed, even after a crash
		s.spill = f
	}
	if _, err := s.spill.Write(s.pending); err != nil {
		return fmt.Errorf("jsonl: large transaction: writing the spill file: %w", err)
	}
	s.spilled += int64(len(s.pending))
	s.pending = s.pending[:0]
	return nil
}

// Commit writes the transaction's lines out and flushes them.
func (s *Sink) Commit(_ context.Context, _ change.TxEnd) error {
	if s.spilled > 0 {
		if _, err := s.spill.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		if _, err := io.CopyN(s.out, s.spill, s.spilled); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		if err := s.spill.Truncate(0); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		s.spill.Seek(0, io.SeekStart)
		s.spilled = 0
	}
	if _, err := s.out.Write(s.pending); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	if cap(s.pending) > 4*s.opts.Memory {
		s.pending = nil
	}
	s.pending = s.pending[:0]
	return s.flush(false)
}

// flush pushes buffered output on; when the buffer is small it may wait,
// unless force is set. Data is flushed at every commit when Sync is set.
func (s *Sink) flush(force bool) error {
	if !force && !s.opts.Sync && !s.opts.FlushEachCommit && s.out.Buffered() < 128<<10 {
		return nil
	}
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	if s.opts.Sync && s.file != nil {
		if err := s.file.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !isNotSupported(err) {
			return fmt.Errorf("jsonl: fsync: %w", err)
		}
	}
	return nil
}

// Flush writes out what has been committed.
func (s *Sink) Flush() error { return s.flush(true) }

// Rollback drops the lines written since the last Commit.
func (s *Sink) Rollback(_ context.Context) error {
	s.pending = s.pending[:0]
	if s.spilled > 0 {
		s.spilled = 0
		if err := s.spill.Truncate(0); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		s.spill.Seek(0, io.SeekStart)
	}
	return nil
}

// Close flushes what was committed and drops what was not.
func (s *Sink) Close(_ context.Context) error {
	s.pending = nil
	if s.spill != nil {
		s.spill.Close()
		s.spill = nil
	}
	return s.flush(true)
}
