// Package jsonl writes changes as JSON lines, one object per row change
// (see the README for the contract).
//
// Delivery: lines of a transaction are held back until it commits, so an
// uncommitted or truncated transaction is never printed. With
// Options.FlushEachCommit, Commit writes them to the underlying writer
// (and with Options.Sync and a file, fsyncs), so that a checkpoint taken
// after Commit is safe. Lines written
// before a crash are complete; after a restart from a checkpoint, the
// transactions between the last checkpoint and the crash are written
// again: at-least-once, deduplicated by (pos.file, pos.offset, pos.row).
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
)

var _ sink.Sink = (*Sink)(nil)

// DefaultMemory is how much of one transaction's output is kept in memory
// before the rest spills to a temporary file. It was 8 MiB. A buffer
// refilled to 8 MiB falls out of the CPU's cache before it is written,
// and growing to it faults in about twice its size: with 1 MiB, read of
// one 1M-row transaction took 0.53-0.58 CPU-s instead of 0.80-1.22, of
// 5000-row transactions with a 100k-row UPDATE 0.51-0.59 instead of
// 0.73-0.90 (into a pipe; peak RSS 31 MiB instead of 57), and 5000-row
// transactions alone (1.7 MB each, now spilled) the same, 0.72.
const DefaultMemory = 1 << 20

// memoryNoSpill is how much of a transaction is held in memory when no
// spill file can be created (TMPDIR missing or read-only): DefaultMemory
// before it became 1 MiB, so that what needed no temporary directory
// then needs none now.
const memoryNoSpill = 8 << 20

// Options configure a Sink. The zero value is usable.
type Options struct {
	// Memory bounds the bytes of one transaction held in memory (default
	// DefaultMemory); larger transactions spill to a temporary file.
	Memory int
	// TempDir is where spill files go (default os.TempDir()).
	TempDir string
	// Sync makes each flush that Commit (with FlushEachCommit), Flush,
	// FlushIdle or Close does also fsync the output when it has a Sync
	// method (an *os.File) that works for it.
	Sync bool
	// FlushEachCommit writes each transaction out at its commit (for
	// streaming with a checkpoint); otherwise output is buffered up to
	// 128 KiB, or until Flush or FlushIdle (a stream whose source has
	// nothing more at hand: pipeline.Follower calls it).
	FlushEachCommit bool
	// Format encodes the lines instead of binlogcdc's own JSON (nil):
	// sink/envelope's encoders (debezium, maxwell, canal).
	Format Format
}

// keySplitter is sink/envelope.KeySplitter.
type keySplitter interface {
	SplitKeyChange(c *change.Change) (del, ins change.Change, ok bool)
}

// Format is an encoder of another JSON shape (sink/envelope.Encoder).
type Format interface {
	AppendValue(dst []byte, c *change.Change) ([]byte, error)
	// NeedsTail: AppendValue leaves each record open, and AppendTail
	// closes it once the transaction's end is known.
	NeedsTail() bool
	AppendTail(dst []byte, tx change.TxEnd, last bool) []byte
}

// spiller is sink/envelope.Spiller: a Format that writes large values in
// pieces, handed to spillRecord.
type spiller interface {
	SetSpill(spill func(b []byte) ([]byte, error))
}

// Sink writes JSON lines to an io.Writer.
type Sink struct {
	out  *bufio.Writer
	file interface{ Sync() error } // the output, when it can be synced
	dst  *os.File                  // the output, when it is a file (sendSpill)
	opts Options
	enc  encoder

	tails   [2][]byte // Format.NeedsTail: the record tails (other, last)
	pending []byte    // committed lines not yet handed to out, then the open transaction's lines
	// committed is how many bytes at the start of pending are lines of
	// committed transactions: they go to out in pieces of pushAt bytes or
	// more, which bufio passes on without copying them (small
	// transactions were copied from pending into out's buffer, a copy of
	// all the output).
	committed int
	spill     *os.File // where pending overflowed to, if it did
	spilled   int64
	// noSpillFile: creating a spill file failed; transactions are held
	// in memory up to memoryNoSpill instead of Memory (spillAt).
	noSpillFile bool
	large       []byte    // writeLarge's scratch
	synced      bool      // nothing was written since the last fsync
	syncAt      time.Time // when FlushIdle last fsynced

	Lines uint64
}

// New returns a Sink writing to w.
func New(w io.Writer, opts Options) *Sink {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory
	}
	s := &Sink{out: bufio.NewWriterSize(w, 256<<10), opts: opts, synced: true}
	if f, ok := w.(interface{ Sync() error }); ok {
		s.file = f
	}
	s.dst, _ = w.(*os.File)
	return s
}

// ChecksUTF8 reports whether the sink checks text values as it encodes
// them, so that the decoder need not (rowevent.Decoder.LazyUTF8): with
// binlogcdc's own JSON, yes; other formats read values as they are.
func (s *Sink) ChecksUTF8() bool { return s.opts.Format == nil }

// Write encodes c into the open transaction.
func (s *Sink) Write(_ context.Context, c *change.Change) error {
	if f := s.opts.Format; f != nil {
		if sp, ok := f.(keySplitter); ok {
			if del, ins, ok := sp.SplitKeyChange(c); ok {
				if err := s.Write(context.Background(), &del); err != nil {
					return err
				}
				return s.Write(context.Background(), &ins)
			}
		}
		// The spill function is the encoder's only during the call: the
		// encoder may be shared (with a Kafka sink, whose records are
		// built whole).
		sp, pieces := f.(spiller)
		if pieces {
			sp.SetSpill(s.spillRecord)
		}
		b, err := f.AppendValue(s.pending, c)
		if pieces {
			sp.SetSpill(nil)
		}
		if err != nil {
			return err
		}
		s.pending = append(b, '\n')
	} else if hasLarge(c.After) || hasLarge(c.Before) {
		if err := s.writeLarge(c); err != nil { // large.go
			return err
		}
	} else {
		s.pending = s.enc.appendChange(s.pending, c)
	}
	s.Lines++
	if len(s.pending)-s.committed >= s.spillAt() {
		return s.spillPending()
	}
	return nil
}

// spillAt is how many bytes of the open transaction pending holds before
// they spill: Memory, or memoryNoSpill once a spill file could not be
// created.
func (s *Sink) spillAt() int {
	if s.noSpillFile {
		return max(s.opts.Memory, memoryNoSpill)
	}
	return s.opts.Memory
}

// pushAt is how many committed bytes pending gathers before they go to
// out: out's buffer size, so that they pass on without a copy.
const pushAt = 256 << 10

// pushCommitted hands the committed lines in pending to out.
func (s *Sink) pushCommitted() error {
	if s.committed == 0 {
		return nil
	}
	_, err := s.out.Write(s.pending[:s.committed])
	n := copy(s.pending, s.pending[s.committed:])
	s.pending = s.pending[:n]
	s.committed = 0
	return wrapErr(err)
}

// spillPending moves the open transaction's lines in pending to the spill
// file (the committed ones before them to out).
func (s *Sink) spillPending() error {
	if err := s.pushCommitted(); err != nil {
		return err
	}
	if s.spill == nil {
		held := len(s.pending) < memoryNoSpill
		if s.noSpillFile && held {
			return nil
		}
		f, err := os.CreateTemp(s.opts.TempDir, "binlogcdc-tx-*.jsonl")
		if err != nil && held {
			s.noSpillFile = true // held in memory, up to memoryNoSpill
			return nil
		}
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
func (s *Sink) Commit(_ context.Context, tx change.TxEnd) error {
	if s.opts.Format != nil && s.opts.Format.NeedsTail() {
		return s.commitTailed(tx)
	}
	if s.spilled > 0 {
		// spillPending pushed the committed lines before the spill.
		if err := s.copySpill(); err != nil {
			return err
		}
		if err := s.spill.Truncate(0); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		s.spill.Seek(0, io.SeekStart)
		s.spilled = 0
	}
	s.committed = len(s.pending)
	s.synced = false
	if s.committed >= pushAt || s.opts.FlushEachCommit {
		if err := s.pushCommitted(); err != nil {
			return err
		}
	}
	if cap(s.pending) > 4*s.opts.Memory && s.committed == 0 {
		s.pending = nil
	}
	return s.flush(false)
}

// copySpill writes the spill file's bytes to the output: with sendfile
// when the output is a file (after what out holds), else through out.
func (s *Sink) copySpill() error {
	if s.dst != nil {
		if err := s.out.Flush(); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		handled, err := sendSpill(s.dst, s.spill, s.spilled)
		if err != nil {
			return fmt.Errorf("jsonl: writing a large transaction: %w", err)
		}
		if handled {
			return nil
		}
	}
	if _, err := s.spill.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	if _, err := io.CopyN(s.out, s.spill, s.spilled); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	return nil
}

// flush pushes buffered output on; when the buffer is small it may wait,
// unless force or FlushEachCommit is set. Those flushes also fsync when
// Sync is set.
func (s *Sink) flush(force bool) error {
	force = force || s.opts.FlushEachCommit
	if !force && s.out.Buffered() < 128<<10 {
		return nil
	}
	if err := s.pushCommitted(); err != nil {
		return err
	}
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	if force && s.opts.Sync && s.file != nil && !s.synced {
		if err := s.file.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !isNotSupported(err) {
			return fmt.Errorf("jsonl: fsync: %w", err)
		}
		s.synced = true
	}
	return nil
}

// Flush writes out what has been committed.
func (s *Sink) Flush() error { return s.flush(true) }

// idleSyncInterval is how often FlushIdle fsyncs at most.
const idleSyncInterval = time.Second

// FlushIdle is Flush for a stream whose source has nothing more at hand:
// it writes what was committed since the last flush, if anything, and
// with Sync fsyncs it, at most once every second: a stream catching up
// goes idle often, and an fsync each time cost it more CPU than the
// rest of its work. (A stream that stays idle is called again at each
// server heartbeat, so the last writes are synced then.)
func (s *Sink) FlushIdle() error {
	if err := s.pushCommitted(); err != nil {
		return err
	}
	if s.out.Buffered() > 0 {
		if err := s.out.Flush(); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
	}
	if !s.opts.Sync || s.synced || time.Since(s.syncAt) < idleSyncInterval {
		return nil
	}
	s.syncAt = time.Now()
	return s.flush(true)
}

// Rollback drops the lines written since the last Commit.
func (s *Sink) Rollback(_ context.Context) error {
	s.pending = s.pending[:s.committed]
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
	if err := s.pushCommitted(); err != nil {
		return err
	}
	s.pending = nil
	if s.spill != nil {
		s.spill.Close()
		s.spill = nil
	}
	return s.flush(true)
}

// commitTailed is Commit for formats whose records end with what the
// transaction's end tells (Maxwell's xid and commit): each line's newline
// becomes the record's tail and the newline. JSON text never holds a raw
// newline, so the newlines are exactly the record ends.
func (s *Sink) commitTailed(tx change.TxEnd) error {
	if err := s.pushCommitted(); err != nil { // none with a tailed format; for safety
		return err
	}
	f := s.opts.Format
	s.tails[0] = f.AppendTail(s.tails[0][:0], tx, false)
	s.tails[1] = f.AppendTail(s.tails[1][:0], tx, true)
	if s.spilled > 0 {
		if _, err := s.spill.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		buf := make([]byte, spillChunk)
		for done := int64(0); done < s.spilled; {
			n, err := io.ReadFull(s.spill, buf[:min(int64(len(buf)), s.spilled-done)])
			if err != nil {
				return fmt.Errorf("jsonl: reading the spill file: %w", err)
			}
			done += int64(n)
			if err := s.writeTailed(buf[:n], done == s.spilled && len(s.pending) == 0); err != nil {
				return err
			}
		}
		if err := s.spill.Truncate(0); err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		s.spill.Seek(0, io.SeekStart)
		s.spilled = 0
	}
	if err := s.writeTailed(s.pending, true); err != nil {
		return err
	}
	if cap(s.pending) > 4*s.opts.Memory {
		s.pending = nil
	}
	s.pending = s.pending[:0]
	s.synced = false
	return s.flush(false)
}

// spillChunk is how much of the spill file commitTailed reads at a time.
var spillChunk = 256 << 10

// writeTailed writes chunk with a tail before each newline: the last
// tail on the chunk's final newline when final is set.
func (s *Sink) writeTailed(chunk []byte, final bool) error {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			_, err := s.out.Write(chunk)
			return wrapErr(err)
		}
		tail := s.tails[0]
		if final && i == len(chunk)-1 {
			tail = s.tails[1]
		}
		s.out.Write(chunk[:i])
		s.out.Write(tail)
		if err := s.out.WriteByte('\n'); err != nil {
			return wrapErr(err)
		}
		chunk = chunk[i+1:]
	}
	return nil
}

func wrapErr(err error) error {
	if err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	return nil
}
