package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// zstSuffix is the suffix of a file the archiver compressed (--compress).
const zstSuffix = ".zst"

// openArchived opens an archived file for reading, decompressing a
// compressed one (binlog.Decompress: by its magic bytes).
func openArchived(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	z, _, err := binlog.Decompress(f)
	if err != nil {
		f.Close()
		return nil, damaged(path, 0, "it cannot be decompressed: "+err.Error())
	}
	return readCloser{z, f}, nil
}

type readCloser struct {
	io.ReadCloser
	f io.Closer
}

func (r readCloser) Close() error {
	r.ReadCloser.Close()
	return r.f.Close()
}

// eachEvent calls fn with each whole event of the binlog r (named path in
// errors) and its offset; a cut last event ends the walk (an open file's
// torn tail). A bad size is an error naming its offset.
func eachEvent(path string, r io.Reader, fn func(h header, raw []byte, off int64) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var magic [4]byte
	if n, _ := io.ReadFull(br, magic[:]); n < 4 {
		return nil
	}
	if !bytes.Equal(magic[:], binlog.Magic) {
		return damaged(path, 0, "it does not start with the binlog magic bytes")
	}
	off := int64(4)
	var buf []byte
	for {
		hdr, err := br.Peek(binlog.HeaderSize)
		if err != nil {
			return nil // the end, or a cut header
		}
		h := parseHeader(hdr)
		if h.size < binlog.HeaderSize || int64(h.size) > binlog.MaxEventSize {
			return damaged(path, off, fmt.Sprintf("an impossible event size %d", h.size))
		}
		// Grown as the bytes come, so that a damaged size field cannot
		// make a short file allocate a gigabyte.
		b := bytes.NewBuffer(buf[:0])
		if n, _ := io.CopyN(b, br, int64(h.size)); n < int64(h.size) {
			return nil // a cut last event
		}
		buf = b.Bytes()
		raw := buf[:h.size]
		if err := fn(h, raw, off); err != nil {
			if _, ok := err.(*Error); ok || errors.Is(err, errFound) {
				return err
			}
			return damaged(path, off, err.Error())
		}
		off += int64(h.size)
	}
}

// trackFile runs a txTracker over the archived file at path (its first
// limit bytes; 0: all).
func trackFile(path string, limit int64, onTx func(*txInfo) error) (*txTracker, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return trackReader(path, f, limit, onTx)
}

// trackReader runs a txTracker over the archived file r (compressed or
// not; path names it in messages), its first limit bytes (0: all) of
// the binlog.
func trackReader(path string, r io.Reader, limit int64, onTx func(*txInfo) error) (*txTracker, error) {
	rc, _, err := binlog.Decompress(r)
	if err != nil {
		return nil, damaged(path, 0, "it cannot be decompressed: "+err.Error())
	}
	defer rc.Close()
	var br io.Reader = rc
	if limit > 0 {
		br = io.LimitReader(rc, limit)
	}
	t := newTxTracker()
	t.onTx = onTx
	err = eachEvent(path, br, func(h header, raw []byte, off int64) error { return t.event(h, raw, off) })
	return t, err
}
