package archive

// --compress zstd: a complete file is compressed once its checksum is in
// the manifest. Each step is safe to be killed at: the compressed copy is
// written under a temporary name (name.zst.tmp), fsynced, renamed to
// name.zst, read back and checked against the file's checksum; only then
// does the manifest name it (stored, with its own size and checksum), and
// only after that manifest is durable is the plain file removed. A
// restart finishes or redoes what was half done (compressPending, the
// worker's first pass, worker.go).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// finishCompressed removes, at the start, the plain files whose
// compressed copy the manifest names (a kill left them).
func (a *archiver) finishCompressed() error {
	for _, e := range a.d.m.Files {
		raw := filepath.Join(a.d.path, e.Name)
		if e.Complete && !e.Expired && e.Stored != "" {
			if _, err := os.Stat(raw); err == nil {
				a.cfg.Logf("%s: its compressed copy %s is in the manifest; removing the plain file", raw, e.Stored)
				if err := removePlain(a.d, raw); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// compressPending compresses, with Compress, the complete files of the
// current history not yet compressed (a leftover temporary copy is
// replaced); the worker calls it.
func (a *archiver) compressPending() error {
	if a.cfg.Compress == "" {
		return nil
	}
	var d *dir
	var jobs []*FileEntry
	a.locked(func() {
		d = a.d
		for _, e := range d.m.Files {
			if e.Complete && !e.Expired && e.Stored == "" {
				jobs = append(jobs, e)
			}
		}
	})
	for _, e := range jobs {
		if err := a.compress(d, e); err != nil {
			return err
		}
	}
	return nil
}

// compress stores the complete file e of history d compressed (see
// above). The worker calls it; e's binlog fields do not change.
func (a *archiver) compress(d *dir, e *FileEntry) error {
	raw := filepath.Join(d.path, e.Name)
	name := e.Name + zstSuffix
	dst := filepath.Join(d.path, name)
	tmp := dst + tmpSuffix
	werr := func(err error) error {
		return &Error{Msg: fmt.Sprintf("cannot compress %s into %s: %v", raw, dst, err), Write: true,
			Hint: "make room or fix the disk, then start binlogcdc archive again: it compresses the file again (the plain file stays until its compressed copy is checked)"}
	}
	in, err := os.Open(raw)
	if err != nil {
		return werr(err)
	}
	defer in.Close()
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return werr(err)
	}
	h := newDigest(a.cfg.hashAlgo())
	cw := &countWriter{w: io.MultiWriter(out, h)}
	z, err := zstd.NewWriter(cw, zstd.WithEncoderConcurrency(1))
	if err == nil {
		_, err = io.Copy(z, in)
		if cerr := z.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		os.Remove(tmp)
		return werr(err)
	}
	// Read back: the copy must decompress to the file the manifest hashed.
	want := e.plainSum()
	if sum, n, err := decompressedSum(dst, want); err != nil || !sameSum(sum, want) || n != e.Size {
		if err == nil {
			err = fmt.Errorf("it decompresses to %d bytes of checksum %s, not %d of %s", n, sum, e.Size, want)
		}
		return werr(err)
	}
	a.locked(func() {
		e.Stored, e.StoredSize = name, uint64(cw.n)
		e.setSums("", h.sum())
	})
	if err := a.save(d); err != nil {
		return err
	}
	return removePlain(d, raw)
}

func removePlain(d *dir, raw string) error {
	if err := os.Remove(raw); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot remove %s after it was compressed: %v", raw, err), Write: true}
	}
	if err := syncDir(d.path); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot sync %s: %v", d.path, err), Write: true}
	}
	return nil
}

// decompressedSum is the checksum (want's algorithm) and size of the
// binlog in the archived file at path (decompressed when it is a .zst).
func decompressedSum(path, want string) (string, uint64, error) {
	r, err := openArchived(path)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	sum, n, err := sumReader(r, want)
	return sum, uint64(n), err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
