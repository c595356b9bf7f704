// Package outfile writes an output file that appears whole or not at all.
//
// recover's SQL is one artifact: a table's CREATE TABLE and all its rows.
// Written straight to -o FILE, an error after the first INSERT (a row the
// target could not store, a binlog that ends early) left a partial table
// there, and had already truncated what FILE held before. A File is
// written beside its path under a temporary name and renamed over it
// only by Commit; Abort removes it, and the path keeps what it held.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an output being written; see the package comment.
type File struct {
	*os.File
	path string // the final path
	tmp  string // the temporary one; "" when writing to path itself
	done bool
}

// Create starts the output to path. A path that exists and is not a
// regular file (/dev/null, /dev/stdout, a FIFO) is written in place: it
// cannot hold a partial table, and renaming over it would replace the
// device. A symbolic link is followed, so that the file it names is the
// one replaced. The temporary file gets the existing file's permissions,
// or those os.Create would give (0666 less the umask).
func Create(path string) (*File, error) {
	mode := fs.FileMode(0o666)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
			if err != nil {
				return nil, err
			}
			return &File{File: f, path: path}, nil
		}
		mode = fi.Mode().Perm()
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var suffix [6]byte
	rand.Read(suffix[:])
	tmp := filepath.Join(dir, "."+base+".binlogcdc-"+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return nil, fmt.Errorf("cannot create a temporary file beside %s to write it whole: %w (the output is renamed into place at the end; give -o a path in a writable directory)", path, err)
	}
	if mode != 0o666 {
		// OpenFile's mode passed through the umask; an existing file's
		// permissions are kept as they were.
		if err := f.Chmod(mode); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, err
		}
	}
	return &File{File: f, path: path, tmp: tmp}, nil
}

// Commit makes the output whole at its path: flushed to disk, renamed
// over the path, and the directory flushed, so that after a crash the
// path holds the old content or the new, never part of it.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.tmp == "" {
		return f.File.Close()
	}
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.path)
	}
	if err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort drops the output: the path keeps what it held. It does nothing
// after Commit, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}
