package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteError is a failure to write a local file: the checkpoint or the
// output. It is fatal: a stream stops with it, and never reconnects over
// it (nothing may be acknowledged that was not written).
type WriteError struct {
	What string // "the checkpoint /var/lib/cdc/cp.json", "-o out.jsonl"
	Err  error
}

func (e *WriteError) Error() string { return fmt.Sprintf("cannot write %s: %v", e.What, e.Err) }
func (e *WriteError) Unwrap() error { return e.Err }

// Output is the file of stream -o: appended to, locked against a second
// writer, and kept to whole transactions. Its size after each
// checkpointed transaction is saved in the checkpoint (OutputSize); a
// restart cuts off what was written after it (a transaction written in
// part when the disk filled up, or written in full after the last save),
// and the stream writes it again from the checkpoint. So the file is
// always whole lines of whole transactions, each once.
type Output struct {
	f       *os.File
	path    string // absolute
	size    int64  // bytes written so far, for a regular file
	regular bool   // a regular file: its size is tracked and checkpointed
}

// OpenOutput opens (creating it if needed) the -o file path for a stream
// that resumes from cp (nil: none), after checking it:
//
//   - another process writing to it (holding its lock) is an error;
//   - when cp recorded this file's size, a longer file is cut back to it
//     (logged), and a shorter one is an error unless it is empty (moved
//     away or rotated: it is started anew);
//   - otherwise a file that ends in a cut line (a failed write without a
//     checkpoint to go back to) is an error that says how to fix it.
func OpenOutput(path string, cp *Checkpoint, logf func(string, ...any)) (*Output, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	o := &Output{f: f, path: abs}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("-o: %w", err)
	}
	if !st.Mode().IsRegular() { // a pipe, a terminal, /dev/null: nothing to keep whole
		return o, nil
	}
	o.regular = true
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("-o %s: another process is writing to it (it holds its lock); stop it, or write to another file", path)
		}
		return nil, fmt.Errorf("-o %s: lock: %w", path, err)
	}
	size := st.Size()
	if err := o.check(path, size, cp, logf); err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

func (o *Output) check(path string, size int64, cp *Checkpoint, logf func(string, ...any)) error {
	if cp != nil && cp.Output == o.path {
		switch want := cp.OutputSize; {
		case size > want:
			if err := o.f.Truncate(want); err != nil {
				return &WriteError{What: "-o " + path, Err: err}
			}
			if err := o.f.Sync(); err != nil {
				return &WriteError{What: "-o " + path, Err: err}
			}
			logf("-o %s: cut off the %d bytes after the checkpoint (it held %d bytes there): their transactions are written again", path, size-want, want)
			size = want
		case size < want && size > 0:
			return fmt.Errorf("-o %s holds %d bytes, fewer than the %d it held at the checkpoint: something else changed it. Move it away (binlogcdc then starts a new file) and restart", path, size, want)
		case size < want:
			logf("-o %s is empty (it held %d bytes at the checkpoint: moved away?); writing on into it from the checkpoint", path, want)
		}
		o.size = size
		return nil
	}
	if err := cutLine(o.f, path, size); err != nil {
		return err
	}
	o.size = size
	return nil
}

// cutLine refuses a file f (named path, size bytes long) whose last line
// has no newline.
func cutLine(f *os.File, path string, size int64) error {
	whole, err := wholeLines(f, size)
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	if whole != size {
		return fmt.Errorf("-o %s ends in a cut line (the last %d bytes have no newline), left by a run whose write failed, and no checkpoint says where its last whole transaction ends: remove the cut line (truncate -s %d %s) and restart; with --checkpoint binlogcdc does this itself",
			path, size-whole, whole, path)
	}
	return nil
}

// CheckOutput is OpenOutput's cut-line check, made before connecting
// anywhere and without changing the file: an existing regular file path
// that cp (nil: none) does not record, and whose last line is cut, is
// refused with the same error.
func CheckOutput(path string, cp *Checkpoint) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	if cp != nil && cp.Output == abs {
		return nil // cut back to the checkpoint's size when opened
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // missing or unreadable: OpenOutput says so
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return cutLine(f, path, st.Size())
}

// wholeLines returns the length of the file up to and including its last
// newline (0 when it has none).
func wholeLines(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := min(end, int64(len(buf)))
		b := buf[:n]
		if _, err := f.ReadAt(b, end-n); err != nil && err != io.EOF {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' {
				return end - n + int64(i) + 1, nil
			}
		}
		end -= n
	}
	return 0, nil
}

// Write appends to the file; a failure is a *WriteError.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	o.size += int64(n)
	if err != nil {
		return n, &WriteError{What: "-o " + o.path, Err: err}
	}
	return n, nil
}

// Sync flushes the file to disk (nothing for a pipe or a terminal).
func (o *Output) Sync() error {
	if !o.regular {
		return nil
	}
	if err := o.f.Sync(); err != nil {
		return &WriteError{What: "-o " + o.path, Err: fmt.Errorf("fsync: %w", err)}
	}
	return nil
}

// record notes the file and its size in c (regular files only).
func (o *Output) record(c *Checkpoint) {
	if o != nil && o.regular {
		c.Output, c.OutputSize = o.path, o.size
	}
}

// Close closes the file (and so lets go of its lock).
func (o *Output) Close() error { return o.f.Close() }
