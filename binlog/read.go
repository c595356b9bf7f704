package binlog

import (
	"errors"
	"fmt"
	"github.com/binlogcdc/binlogcdc/internal/bigbuf"
	"io"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// readEvent reads the event at s.off. It returns io.EOF at a clean end of
// the file and an *Error wrapping io.ErrUnexpectedEOF for a truncated one.
func (s *FileSource) readEvent() (*Event, error) {
	pos := change.Position{File: s.base, Offset: uint64(s.off)}
	if cap(s.buf) >= bigbuf.Threshold {
		// The last event was huge (a big row): its buffer is not kept
		// for the next one, so that it is freed once its changes are
		// done with (a transaction held until its commit reads them back
		// from a spill file: both would be in memory).
		s.buf = nil
	}
	// The event is read in place in the reader's buffer when it fits
	// (valid until the next read, as s.buf would be): no copy, and no
	// io.ReadFull per event.
	hdr, err := s.r.Peek(HeaderSize)
	if len(hdr) < HeaderSize {
		if len(hdr) == 0 && err == io.EOF {
			return nil, io.EOF
		}
		if err = s.readErr(pos, err); err != nil {
			return nil, err
		}
		return nil, s.truncated(pos, fmt.Errorf("event header cut short after %d of %d bytes", len(hdr), HeaderSize))
	}
	h := parseHeader(hdr)
	size := int64(h.EventSize)
	if size < HeaderSize || size > MaxEventSize {
		return nil, &Error{Pos: pos, Err: fmt.Errorf("corrupt event header: event size %d is impossible", size),
			Hint: "the file is damaged at this offset; events before it were read"}
	}
	if rest := s.size - s.off; !s.stream && size > rest {
		return nil, s.truncated(pos, fmt.Errorf("%v event of %d bytes, but only %d bytes are left in the file", h.EventType, size, rest))
	}
	var raw []byte
	if size <= int64(s.r.Size()) {
		if raw, err = s.r.Peek(int(size)); err != nil {
			if err := s.readErr(pos, err); err != nil {
				return nil, err
			}
			return nil, s.truncated(pos, fmt.Errorf("%v event cut short: %v", h.EventType, err))
		}
		s.r.Discard(int(size))
	} else if s.stream {
		// Its size is not known to be there: the buffer grows as the
		// bytes arrive, so a corrupt size allocates no more than them.
		if raw, err = s.readGrowing(size); err != nil {
			if err := s.readErr(pos, err); err != nil {
				return nil, err
			}
			return nil, s.truncated(pos, fmt.Errorf("%v event cut short after %d of %d bytes", h.EventType, len(raw), size))
		}
	} else {
		if int64(cap(s.buf)) < size {
			// Room to grow into, except for a large event (a big row):
			// its slack would count against the heap for the rest of
			// the run.
			c := size + size/4
			if size > 64<<20 {
				c = size
			}
			s.buf = bigbuf.Make(int(size), int(c))
		}
		raw = s.buf[:size]
		if _, err := io.ReadFull(s.r, raw); err != nil {
			return nil, s.truncated(pos, fmt.Errorf("%v event cut short: %v", h.EventType, err))
		}
	}
	s.off += size
	s.ev = Event{Pos: pos, NextPos: change.Position{File: s.base, Offset: uint64(s.off)}, Header: h, Raw: raw}
	ev := &s.ev

	if h.EventType == replication.FORMAT_DESCRIPTION_EVENT {
		fde, err := decodeFDE(raw[HeaderSize:])
		if err != nil {
			return nil, &Error{Pos: pos, Err: err}
		}
		s.fde = fde
		s.checksum = fde.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32
		s.inUse = h.Flags&replication.LOG_EVENT_BINLOG_IN_USE_F != 0
	} else if s.fde == nil {
		return nil, &Error{Pos: pos, Err: fmt.Errorf("%v event before any FORMAT_DESCRIPTION_EVENT", h.EventType),
			Hint: "start at offset 4 or at an event boundary of a complete binlog file"}
	}
	ev.Body = raw[HeaderSize:]
	if s.checksum {
		if err := verifyCRC32(raw); err != nil {
			return nil, &Error{Pos: pos, Err: err, Hint: "the file is corrupt at this event; events before it were read"}
		}
		ev.Body = raw[HeaderSize : len(raw)-checksumLen]
	}
	if err := s.checkLogPos(pos, h); err != nil {
		return nil, err
	}
	if h.EventType == replication.ROTATE_EVENT {
		if name, ok := rotateName(ev.Body); ok {
			s.rotatedTo = name
		}
	}
	s.lastType = h.EventType
	return ev, nil
}

// checkLogPos checks that the event at pos, which ends at s.off, says so:
// a server writes in every event header's log_pos where the next event
// starts. A deleted, duplicated or moved event (each with its CRC32
// intact) breaks that at the first event after the change.
//
// Events with log_pos 0 carry no position (MariaDB 11.4+ with
// binlog_legacy_event_pos=OFF writes 0 inside transactions; the events
// flattened out of a MySQL TRANSACTION_PAYLOAD are not read here): the
// next event that carries one is checked. A relay log, which holds events
// copied from the source with the source's positions, is recognised by
// the source's artificial ROTATE (log_pos 0) or a second
// FORMAT_DESCRIPTION_EVENT: from there on the positions are not the
// file's and are not checked. Files of servers before MySQL 5.6.1 (no
// checksum algorithm in the FORMAT_DESCRIPTION_EVENT) are not checked
// either: some of their test binlogs carry other positions.
func (s *FileSource) checkLogPos(pos change.Position, h replication.EventHeader) error {
	switch {
	case h.EventType == replication.FORMAT_DESCRIPTION_EVENT && pos.Offset == 4:
		s.posCheck = s.fde.ChecksumAlgorithm != replication.BINLOG_CHECKSUM_ALG_UNDEF
	case h.EventType == replication.FORMAT_DESCRIPTION_EVENT,
		h.EventType == replication.ROTATE_EVENT && h.LogPos == 0:
		s.posCheck = false // a relay log: the source's positions follow
		return nil
	}
	if !s.posCheck || h.LogPos == 0 || int64(h.LogPos) == s.off {
		return nil
	}
	what := "an event before it was deleted, or events were duplicated or reordered"
	if int64(h.LogPos) < s.off {
		what = "an event was duplicated or moved here, or events were reordered"
	}
	return &Error{Pos: pos, Err: fmt.Errorf("the %v event here ends at offset %d, but its header says the next event starts at %d (log_pos): %s", h.EventType, s.off, h.LogPos, what),
		Hint: "the file is damaged: its events are not where the server wrote them (their checksums are intact, so they were moved whole); every complete transaction before this offset was read"}
}

func (s *FileSource) truncated(pos change.Position, err error) error {
	return &Error{Pos: pos, Err: fmt.Errorf("%w: %v", io.ErrUnexpectedEOF, err),
		Hint: "the file is truncated (still being written, or cut short by a copy); every complete event before this offset was read"}
}

// rotateName returns the next file's name from a ROTATE_EVENT body:
//
//	# bytes  field
//	8        position in the next file
//	rest     next file name (no terminator)
func rotateName(body []byte) (string, bool) {
	if len(body) <= 8 {
		return "", false
	}
	return string(body[8:]), true
}

// decodeFDE decodes a FORMAT_DESCRIPTION_EVENT body (with its checksum
// trailer, if any), turning a panic in the decoder into an error.
func decodeFDE(body []byte) (fde *replication.FormatDescriptionEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			fde, err = nil, fmt.Errorf("corrupt FORMAT_DESCRIPTION_EVENT: %v", r)
		}
	}()
	// binlog_version(2) server_version(50) create_timestamp(4) header_length(1)
	if len(body) < 2+50+4+1 {
		return nil, errors.New("corrupt FORMAT_DESCRIPTION_EVENT: too short")
	}
	fde = &replication.FormatDescriptionEvent{}
	if err := fde.Decode(body); err != nil {
		return nil, fmt.Errorf("corrupt FORMAT_DESCRIPTION_EVENT: %w", err)
	}
	if fde.Version != 4 {
		return nil, fmt.Errorf("binlog format version %d is not supported (only v4, MySQL 5.0 and later)", fde.Version)
	}
	// The FDE's own CRC32 is checked only when the FDE says CRC32, and
	// whether it carries a checksum algorithm at all depends on its server
	// version (5.6.1+). So a damaged version or algorithm byte would
	// silently turn checksums off for the whole file, and every event
	// would then be decoded with its CRC as data. Real servers write
	// "major.minor.patch[-suffix]" and algorithm 0 (off) or 1 (CRC32);
	// go-mysql reports 255 for servers before 5.6.1.
	if !validServerVersion(fde.ServerVersion) {
		return nil, fmt.Errorf("corrupt FORMAT_DESCRIPTION_EVENT: server version %q", strings.TrimRight(fde.ServerVersion, "\x00"))
	}
	switch fde.ChecksumAlgorithm {
	case replication.BINLOG_CHECKSUM_ALG_OFF, replication.BINLOG_CHECKSUM_ALG_CRC32, replication.BINLOG_CHECKSUM_ALG_UNDEF:
	default:
		return nil, fmt.Errorf("corrupt FORMAT_DESCRIPTION_EVENT: unknown checksum algorithm %d", fde.ChecksumAlgorithm)
	}
	return fde, nil
}

// validServerVersion reports whether v starts like a server version:
// three dot-separated numbers ("8.0.26", "10.5.15-MariaDB-log").
func validServerVersion(v string) bool {
	for part := 0; part < 3; part++ {
		n := 0
		for n < len(v) && v[n] >= '0' && v[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		v = v[n:]
		if part < 2 {
			if v == "" || v[0] != '.' {
				return false
			}
			v = v[1:]
		}
	}
	return true
}
