package binlog

import (
	"errors"
	"fmt"
	"io"

	"github.com/binlogcdc/binlogcdc/change"
)

// Stdin ('-') is read as it arrives (FileSource.stream), plain or gzip-
// or zstd-compressed: each transaction is passed on as soon as its last
// event is read. What a file allows and a stream does not is done
// differently: an event's size is not checked against the bytes left
// (a cut event is found when its bytes run out), and a start position is
// reached by reading the events before it (skipTo) instead of seeking.

// readErr is the error for a failed read of the event at pos that is not
// the end of the data (a damaged gzip or zstd stream, a read error), or
// nil when it is the end (io.EOF, io.ErrUnexpectedEOF: the data is cut
// short, for truncated to say).
func (s *FileSource) readErr(pos change.Position, err error) error {
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrNoProgress) {
		return nil
	}
	if s.stream {
		return &Error{Pos: pos, Err: fmt.Errorf("reading %s: %w", s.shown(), err),
			Hint: s.shown() + " is damaged or could not be read here (a damaged archive?); every complete transaction before this offset was read"}
	}
	return &Error{Pos: pos, Err: fmt.Errorf("reading the file: %w", err), Hint: "every complete transaction before this offset was read"}
}

// readGrowing reads the next size bytes into s.buf, growing it as they
// arrive. On an error it returns what was read.
func (s *FileSource) readGrowing(size int64) ([]byte, error) {
	const chunk = 1 << 20
	raw := s.buf[:0]
	for int64(len(raw)) < size {
		n := min(size-int64(len(raw)), chunk)
		if int64(cap(raw)-len(raw)) < n {
			raw = append(raw[:len(raw):len(raw)], make([]byte, n)...)[:len(raw)]
		}
		m, err := io.ReadFull(s.r, raw[len(raw):len(raw)+int(n)])
		raw = raw[:len(raw)+m]
		if err != nil {
			s.buf = raw[:0]
			return raw, err
		}
	}
	s.buf = raw[:0]
	return raw, nil
}

// skipTo reads stdin's events up to target, the start position, which
// must be the start of one (the FORMAT_DESCRIPTION_EVENT has been read).
func (s *FileSource) skipTo(target int64) error {
	prev := int64(4)
	for s.off < target {
		pos := change.Position{File: s.base, Offset: uint64(s.off)}
		hdr, err := s.r.Peek(HeaderSize)
		if len(hdr) < HeaderSize {
			if err := s.readErr(pos, err); err != nil {
				return err
			}
			return &Error{Pos: change.Position{File: s.base, Offset: uint64(target)},
				Err: fmt.Errorf("start position is past the end of %s (%d bytes)", s.shown(), s.off+int64(len(hdr)))}
		}
		size := int64(parseHeader(hdr).EventSize)
		if size < HeaderSize || size > MaxEventSize {
			return &Error{Pos: pos, Err: fmt.Errorf("corrupt event header: event size %d is impossible", size),
				Hint: "the data is damaged at this offset, before the start position"}
		}
		if _, err := s.r.Discard(int(min(size, int64(^uint(0)>>1)))); err != nil {
			if err := s.readErr(pos, err); err != nil {
				return err
			}
			return &Error{Pos: change.Position{File: s.base, Offset: uint64(target)},
				Err: fmt.Errorf("start position is past the end of %s", s.shown())}
		}
		prev, s.off = s.off, s.off+size
	}
	if s.off > target {
		return &FileError{Path: s.shown(),
			Msg:  fmt.Sprintf("the start position %s:%d is not the start of an event: it falls inside the event at %d; the nearest event starts are %d and %d", s.base, target, prev, prev, s.off),
			Hint: "start at a transaction's first event, a position from SHOW BINLOG EVENTS or mariadb-binlog/mysqlbinlog"}
	}
	return nil
}
