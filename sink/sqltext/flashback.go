package sqltext

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
)

var _ sink.Sink = (*Flashback)(nil)

// Flashback writes the SQL that undoes the changes it receives, newest
// first: each transaction, in reverse order, as BEGIN; …; COMMIT;, with
// its rows reversed too. An insert becomes a DELETE, a delete an INSERT,
// an update an UPDATE back to the before image, found by the after image's
// key. Statements use the event-time names.
//
// Undoing needs full row images: a change whose image lacks a column is
// refused. DDL is not undone (it is reported through Options.Logf).
//
// Nothing is written until Close: the statements go to an unlinked
// temporary file as changes arrive (memory stays bounded), and Close
// writes them out backwards. Transactions that did not commit are dropped.
type Flashback struct {
	dst  io.Writer
	opts Options
	b    Builder

	tmp       *os.File
	tw        *bufio.Writer
	size      int64 // bytes written to tmp
	committed int64 // size at the last Commit

	Rows, Transactions uint64
}

// Record kinds in the temporary file.
const (
	recStmt   = 'S' // body: a statement
	recInsert = 'I' // head: "INSERT INTO … VALUES", body: one tuple
	recCommit = 'C' // a transaction boundary
)

// NewFlashback returns a Flashback that writes to w at Close. tempDir ""
// means os.TempDir().
func NewFlashback(w io.Writer, tempDir string, opts Options) (*Flashback, error) {
	f, err := os.CreateTemp(tempDir, "binlogcdc-flashback-*")
	if err != nil {
		return nil, fmt.Errorf("flashback: cannot create a temporary file: %w (set TMPDIR to a writable directory)", err)
	}
	os.Remove(f.Name()) // unlinked: gone when closed, even after a crash
	return &Flashback{dst: w, opts: opts, tmp: f, tw: bufio.NewWriterSize(f, 256<<10)}, nil
}

// ChecksUTF8 is Sink.ChecksUTF8: text goes into the SQL as it is.
func (f *Flashback) ChecksUTF8() bool { return true }

func (f *Flashback) record(kind byte, head, body []byte) error {
	var tr [9]byte
	binary.LittleEndian.PutUint32(tr[0:], uint32(len(head)))
	binary.LittleEndian.PutUint32(tr[4:], uint32(len(body)))
	tr[8] = kind
	for _, p := range [][]byte{head, body, tr[:]} {
		if _, err := f.tw.Write(p); err != nil {
			return fmt.Errorf("flashback: temporary file: %w", err)
		}
	}
	f.size += int64(len(head) + len(body) + len(tr))
	return nil
}

// full checks that a row image has every column.
func full(c *change.Change, row change.Row, which string) error {
	for i, v := range row {
		if v.IsAbsent() {
			return rowError(c, fmt.Errorf("--flashback needs full row images, but the %s image lacks column %s (set binlog_row_image=FULL on the source)",
				which, QuoteIdent(c.Table.Columns[i].Name)))
		}
	}
	return nil
}

// Write records the statement that undoes c.
func (f *Flashback) Write(_ context.Context, c *change.Change) error {
	if c.Op == change.DDL {
		if f.opts.Logf != nil {
			f.opts.Logf("--flashback: DDL at %s:%d is not undone: %.200s", c.Pos.File, c.Pos.Offset, c.SQL)
		}
		return nil
	}
	t := c.Table
	f.b.Reset()
	f.Rows++
	switch c.Op {
	case change.Insert:
		if err := full(c, c.After, "after"); err != nil {
			return err
		}
		k, err := KeyOf(t, c.After, nil)
		if err != nil {
			return rowError(c, err)
		}
		f.b.Delete(t, k, c.After)
	case change.Delete:
		if err := full(c, c.Before, "before"); err != nil {
			return err
		}
		cols := Columns(nil, c.Before, nil)
		if EnumErrors(c.Before, cols) > 0 {
			f.b.Insert("INSERT", t, cols, c.Before) // checked below (NotStored)
			break
		}
		f.b.InsertHead("INSERT", t, cols)
		n := len(f.b.SQL)
		f.b.InsertTuple(cols, c.Before)
		if err := f.b.Err(); err != nil {
			return rowError(c, err)
		}
		return f.record(recInsert, f.b.SQL[:n-1], f.b.SQL[n:])
	case change.Update:
		if err := full(c, c.Before, "before"); err != nil {
			return err
		}
		if err := full(c, c.After, "after"); err != nil {
			return err
		}
		k, err := KeyOf(t, c.After, nil)
		if err != nil {
			return rowError(c, err)
		}
		f.b.Update(t, Columns(nil, c.Before, nil), c.Before, k, c.After)
	default:
		return fmt.Errorf("sqltext: unknown change %v", c.Op)
	}
	if err := f.b.Err(); err != nil {
		return rowError(c, err)
	}
	if c.Op != change.Insert && EnumErrors(c.Before, Columns(nil, c.Before, nil)) > 0 {
		if i := NotStored(c.Before, nil); i >= 0 { // nonstrict.go
			return rowError(c, NotStoredError(t, i))
		}
		return f.record(recStmt, nil, nonStrict(f.b.SQL))
	}
	return f.record(recStmt, nil, f.b.SQL)
}

// Commit marks the end of a transaction.
func (f *Flashback) Commit(_ context.Context, _ change.TxEnd) error {
	if f.size == f.committed {
		return nil // nothing to undo
	}
	if err := f.record(recCommit, nil, nil); err != nil {
		return err
	}
	f.committed = f.size
	f.Transactions++
	return nil
}

// Rollback drops what was written since the last Commit.
func (f *Flashback) Rollback(_ context.Context) error {
	if f.size == f.committed {
		return nil
	}
	if err := f.tw.Flush(); err != nil {
		return fmt.Errorf("flashback: temporary file: %w", err)
	}
	if err := f.tmp.Truncate(f.committed); err != nil {
		return fmt.Errorf("flashback: temporary file: %w", err)
	}
	if _, err := f.tmp.Seek(f.committed, io.SeekStart); err != nil {
		return err
	}
	f.size = f.committed
	return nil
}

// Close writes the undo statements of every committed transaction, newest
// first.
func (f *Flashback) Close(ctx context.Context) error {
	defer f.tmp.Close()
	if err := f.Rollback(ctx); err != nil {
		return err
	}
	if err := f.tw.Flush(); err != nil {
		return fmt.Errorf("flashback: temporary file: %w", err)
	}
	out := bufio.NewWriterSize(f.dst, 256<<10)
	w := sqlWriter{out: out}
	r := backReader{f: f.tmp}
	for pos := f.committed; pos > 0; {
		tr, err := r.read(pos-9, pos)
		if err != nil {
			return err
		}
		hl, bl, kind := int64(binary.LittleEndian.Uint32(tr)), int64(binary.LittleEndian.Uint32(tr[4:])), tr[8]
		start := pos - 9 - hl - bl
		rec, err := r.read(start, pos-9)
		if err != nil {
			return err
		}
		switch kind {
		case recCommit:
			w.commit("")
		case recStmt:
			w.stmt(rec[hl:])
		case recInsert:
			w.insert(rec[:hl], rec[hl:])
		default:
			return errors.New("flashback: temporary file is corrupt")
		}
		if w.err != nil {
			return w.err
		}
		pos = start
	}
	w.commit("")
	if w.err != nil {
		return w.err
	}
	return out.Flush()
}

// backReader reads a file backwards through a window.
type backReader struct {
	f          *os.File
	buf        []byte
	start, end int64 // the window's place in the file
}

const backWindow = 1 << 20

// read returns the bytes [from, to) of the file; valid until the next call.
func (r *backReader) read(from, to int64) ([]byte, error) {
	if from < 0 {
		return nil, errors.New("flashback: temporary file is corrupt")
	}
	if from < r.start || to > r.end {
		r.start = max(0, to-backWindow)
		if from < r.start {
			r.start = from
		}
		r.end = to
		if int64(cap(r.buf)) < r.end-r.start {
			r.buf = make([]byte, r.end-r.start)
		}
		r.buf = r.buf[:r.end-r.start]
		if _, err := r.f.ReadAt(r.buf, r.start); err != nil {
			return nil, fmt.Errorf("flashback: reading the temporary file: %w", err)
		}
	}
	return r.buf[from-r.start : to-r.start], nil
}
