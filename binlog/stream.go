package binlog

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// framer turns whole events as a replica receives them (no magic bytes, an
// artificial ROTATE naming the file first, positions in the events'
// log_pos fields) into Events. StreamSource and LiveSource share it.
type framer struct {
	file     string
	fde      bool
	checksum bool
	payload  *payloadReader
	// next is where the next event of file starts, as far as known (0:
	// unknown): for events that do not carry their position.
	next uint64
	ev   Event
}

// pending returns the next event flattened out of a TRANSACTION_PAYLOAD_EVENT,
// or nil when there is none.
func (f *framer) pending() (*Event, error) {
	if f.payload == nil {
		return nil, nil
	}
	ev, err := f.payload.next()
	if ev == nil || err != nil {
		f.payload = nil
	}
	return ev, err
}

// frame checks and frames one whole event. raw must stay valid until the
// next call. A TRANSACTION_PAYLOAD_EVENT is not returned itself: its
// events come from pending (frame returns nil, nil for it).
func (f *framer) frame(raw []byte) (*Event, error) {
	at := change.Position{File: f.file}
	if len(raw) < HeaderSize {
		return nil, &Error{Pos: at, Err: fmt.Errorf("%w: event of %d bytes", io.ErrUnexpectedEOF, len(raw))}
	}
	h := parseHeader(raw)
	if int(h.EventSize) != len(raw) {
		return nil, &Error{Pos: at, Err: fmt.Errorf("corrupt event header: size %d, but %d bytes came", h.EventSize, len(raw))}
	}
	// One Event, reused: like raw, it is valid until the next call.
	ev := &f.ev
	*ev = Event{Header: h, Raw: raw, Body: raw[HeaderSize:]}
	if h.LogPos >= h.EventSize {
		ev.Pos = change.Position{File: f.file, Offset: uint64(h.LogPos - h.EventSize)}
		ev.NextPos = change.Position{File: f.file, Offset: uint64(h.LogPos)}
		f.next = uint64(h.LogPos)
	} else if h.LogPos == 0 && f.next != 0 && h.Flags&replication.LOG_EVENT_ARTIFICIAL_F == 0 && inFile(h.EventType) {
		// A real event without its position: MariaDB 11.4+ (with the
		// default binlog_legacy_event_pos=OFF) writes log_pos 0 in the
		// events inside a transaction (ANNOTATE_ROWS, TABLE_MAP, rows
		// events), as seen in the MariaDB 11.8.8 stream captured by zongji.
		// Events follow each other in the file, so the event starts where
		// the previous one ended.
		ev.Pos = change.Position{File: f.file, Offset: f.next}
		f.next += uint64(h.EventSize)
		ev.NextPos = change.Position{File: f.file, Offset: f.next}
	} else {
		// Artificial events have log_pos 0 (or the position they announce).
		ev.Pos = change.Position{File: f.file, Offset: uint64(h.LogPos)}
		ev.NextPos = ev.Pos
	}
	switch h.EventType {
	case replication.FORMAT_DESCRIPTION_EVENT:
		fde, err := decodeFDE(ev.Body)
		if err != nil {
			return nil, &Error{Pos: ev.Pos, Err: err}
		}
		f.fde = true
		f.checksum = fde.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32
	case replication.ROTATE_EVENT, replication.HEARTBEAT_EVENT, replication.HEARTBEAT_LOG_EVENT_V2:
	default:
		if !f.fde {
			return nil, &Error{Pos: ev.Pos, Err: fmt.Errorf("%v event before any FORMAT_DESCRIPTION_EVENT", h.EventType)}
		}
	}
	switch {
	case f.checksum:
		if err := verifyCRC32(raw); err != nil {
			return nil, &Error{Pos: ev.Pos, Err: err, Hint: "the stream is corrupt at this event"}
		}
		ev.Body = raw[HeaderSize : len(raw)-checksumLen]
	case !f.fde && h.EventType == replication.ROTATE_EVENT && verifyCRC32(raw) == nil:
		// The first artificial ROTATE comes before the FDE, so whether it
		// has a checksum is not known yet: servers add one when
		// binlog_checksum is on. A valid CRC32 trailer says so.
		ev.Body = raw[HeaderSize : len(raw)-checksumLen]
	}
	if h.EventType == replication.ROTATE_EVENT {
		if name, ok := rotateName(ev.Body); ok {
			f.file = name
			pos := uint64(ev.Body[0]) | uint64(ev.Body[1])<<8 | uint64(ev.Body[2])<<16 | uint64(ev.Body[3])<<24
			ev.NextPos = change.Position{File: name, Offset: pos}
			f.next = pos
		}
	}
	if h.EventType == replication.TRANSACTION_PAYLOAD_EVENT {
		p, err := newPayloadReader(ev, f.checksum)
		if err != nil {
			return nil, err
		}
		f.payload = p
		return nil, nil
	}
	return ev, nil
}

// inFile reports whether events of type t are sent as they sit in the
// binlog file (not made up for the stream, like the FORMAT_DESCRIPTION_EVENT
// resent at the start of a dump, ROTATEs and heartbeats).
func inFile(t replication.EventType) bool {
	switch t {
	case replication.FORMAT_DESCRIPTION_EVENT, replication.ROTATE_EVENT,
		replication.HEARTBEAT_EVENT, replication.HEARTBEAT_LOG_EVENT_V2:
		return false
	}
	return true
}

// StreamSource reads a captured replication event stream from an
// io.Reader (see framer).
type StreamSource struct {
	r   *bufio.Reader
	f   framer
	buf []byte
	err error
}

// NewStreamSource returns a Source over a replication event stream.
func NewStreamSource(r io.Reader) *StreamSource {
	return &StreamSource{r: bufio.NewReaderSize(r, 256<<10)}
}

// Next returns the next event. Artificial events (the fake ROTATE and the
// FORMAT_DESCRIPTION_EVENT resent at the start of a dump) are returned
// too, with the position they describe.
func (s *StreamSource) Next(ctx context.Context) (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		ev, err := s.next(ctx)
		if err != nil {
			s.err = err
			return nil, err
		}
		if ev != nil {
			return ev, nil
		}
	}
}

func (s *StreamSource) next(ctx context.Context) (*Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ev, err := s.f.pending(); ev != nil || err != nil {
		return ev, err
	}
	at := change.Position{File: s.f.file}
	if cap(s.buf) < HeaderSize {
		s.buf = make([]byte, HeaderSize, 64<<10)
	}
	hdr := s.buf[:HeaderSize]
	n, err := io.ReadFull(s.r, hdr)
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, &Error{Pos: at, Err: fmt.Errorf("%w: event header cut short after %d bytes", io.ErrUnexpectedEOF, n)}
	}
	h := parseHeader(hdr)
	if h.EventSize < HeaderSize || h.EventSize > MaxEventSize {
		return nil, &Error{Pos: at, Err: fmt.Errorf("corrupt event header: event size %d is impossible", h.EventSize)}
	}
	size := int(h.EventSize)
	if cap(s.buf) < size {
		nb := make([]byte, size, size+size/4)
		copy(nb, hdr)
		s.buf = nb
	}
	raw := s.buf[:size]
	if _, err := io.ReadFull(s.r, raw[HeaderSize:]); err != nil {
		return nil, &Error{Pos: at, Err: fmt.Errorf("%w: %v event cut short", io.ErrUnexpectedEOF, h.EventType)}
	}
	return s.f.frame(raw)
}

// Close does nothing; the caller owns the reader.
func (s *StreamSource) Close() error { return nil }
