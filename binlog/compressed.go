package binlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// StdinName is the file name that positions give a binlog read from
// stdin ('-').
const StdinName = "stdin"

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// CompressedSuffixes are the file name suffixes of compressed binlogs:
// binlog.000042.gz is binlog.000042, compressed.
var CompressedSuffixes = []string{".gz", ".gzip", ".zst", ".zstd"}

// PlainName is base (a file name) without its compression suffix:
// "binlog.000042.gz" is "binlog.000042".
func PlainName(base string) string {
	for _, ext := range CompressedSuffixes {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// origins maps each decompressed copy (and stdin's) to the path it was
// made from, as given: reading follows a ROTATE in the original's
// directory, and messages name the original.
var origins sync.Map

// Origin is the path a file to read was made from: the compressed file
// (or "-") a decompressed copy came from, or path itself.
func Origin(path string) string {
	if o, ok := origins.Load(path); ok {
		return o.(string)
	}
	return path
}

// unpacker copies binlogs that cannot be read in place — gzip- or
// zstd-compressed files, stdin — into plain files in a private temporary
// directory (under $TMPDIR), so they can be read like any other: seeking
// to a start position, checking their size. A compressed file keeps its
// name without the .gz/.zst suffix (binlog.000042.gz is binlog.000042 in
// positions); stdin is named StdinName.
type unpacker struct {
	dir    string
	copies []string
}

// unpack returns the plain file to read for path: path itself, or a
// decompressed copy.
func (u *unpacker) unpack(path string) (string, error) {
	var r *bufio.Reader
	name := StdinName
	if path == "-" {
		r = bufio.NewReaderSize(os.Stdin, 1<<20)
	} else {
		f, err := os.Open(path)
		if err != nil {
			return path, nil // checkFile says what is wrong
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return path, nil
		}
		// The magic bytes are read on their own: for a plain file (the
		// usual case, looked at twice per run) bufio's Peek allocated a
		// 1 MiB buffer and filled it from the file, for 4 bytes.
		var head [4]byte
		n, _ := io.ReadFull(f, head[:])
		if !bytes.HasPrefix(head[:n], gzipMagic) && !bytes.HasPrefix(head[:n], zstdMagic) {
			return path, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", fmt.Errorf("binlog: %w", err)
		}
		r = bufio.NewReaderSize(f, 1<<20)
		name = PlainName(filepath.Base(path))
	}
	src, kind, err := decompressor(r)
	if err != nil {
		return "", &FileError{Path: path, Msg: fmt.Sprintf("is %s-compressed, but cannot be decompressed: %v", kind, err), Hint: "is the archive complete?"}
	}
	if u.dir == "" {
		if u.dir, err = os.MkdirTemp("", "binlogcdc-in-"); err != nil {
			return "", fmt.Errorf("binlog: a temporary directory for %s: %w", path, err)
		}
	}
	out := filepath.Join(u.dir, name)
	if _, err := os.Stat(out); err == nil {
		return "", &FileError{Path: path, Msg: fmt.Sprintf("is the second file named %s (as %s)", name, Origin(out)), Hint: "give each binlog once, in one form (plain, .gz or .zst)", Usage: true}
	}
	f, err := os.Create(out)
	if err != nil {
		return "", fmt.Errorf("binlog: %w", err)
	}
	origins.Store(out, path)
	u.copies = append(u.copies, out)
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if kind == "" {
			return "", fmt.Errorf("binlog: copying %s to %s: %w", path, out, err)
		}
		return "", &FileError{Path: path, Msg: fmt.Sprintf("is %s-compressed, but cannot be decompressed: %v", kind, err), Hint: "is the archive complete?"}
	}
	return out, nil
}

// Decompress returns the binlog r holds: decompressed as it is read when
// r starts like gzip or zstd data (kind "gzip" or "zstd"), else r itself
// (kind ""). It is the one place that tells compressed binlogs by their
// magic bytes: reading (OpenFiles, OpenParts, stdin) and checking an
// archived file's checksum (archive) both go through it. Closing rc
// releases the decompressor, not r. A zstd window larger than an event
// (MaxEventSize) is refused: a damaged header cannot make it allocate more.
func Decompress(r io.Reader) (rc io.ReadCloser, kind string, err error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, "gzip", err
		}
		return z, "gzip", nil
	case bytes.HasPrefix(head, zstdMagic):
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxEventSize))
		if err != nil {
			return nil, "zstd", err
		}
		return z.IOReadCloser(), "zstd", nil
	}
	return io.NopCloser(br), "", nil
}

// decompressor is Decompress for the readers here.
func decompressor(r *bufio.Reader) (io.Reader, string, error) {
	rc, kind, err := Decompress(r)
	if err != nil || kind == "" {
		return r, kind, err
	}
	return rc, kind, nil
}

// cleanup removes the copies.
func (u *unpacker) cleanup() {
	if u.dir != "" {
		os.RemoveAll(u.dir)
		u.dir = ""
	}
	for _, c := range u.copies {
		origins.Delete(c)
	}
	u.copies = nil
}
