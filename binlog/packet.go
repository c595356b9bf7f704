package binlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// maxPacket is the largest payload of one protocol packet. A payload of
// exactly this size says that the message goes on in the next packet.
const maxPacket = 1<<24 - 1

// dumpReader reads the packets a server sends after COM_BINLOG_DUMP (or
// COM_BINLOG_DUMP_GTID): each an OK byte (0x00) and one whole event, an
// ERR packet, or an EOF packet. It reads them in the caller's goroutine
// through one buffer: an event that fits in it is returned in place (no
// copy); a larger one, which may span several packets (16 MiB each), is
// assembled in a second buffer of the event's size, checked against the
// size in its header before anything is allocated.
type dumpReader struct {
	r   *bufio.Reader
	seq uint8 // sequence number of the next packet
	// skip: bytes of the last packet, returned in place, that the next
	// read discards (so the event stays valid until then).
	skip int
	big  []byte
}

// newDumpReader reads packets from r through a buffer of size bytes; seq
// is the sequence number of the first packet (1 after the dump command).
func newDumpReader(r io.Reader, size int, seq uint8) *dumpReader {
	return &dumpReader{r: bufio.NewReaderSize(r, max(size, 64)), seq: seq}
}

// errDumpEnded: the server ended the dump with an EOF packet (it sends one
// to a dump that asked not to block; binlogcdc's never does).
var errDumpEnded = fmt.Errorf("the server ended the binlog dump: %w", io.ErrUnexpectedEOF)

// protocolError is a packet that breaks the replication protocol; the
// caller adds the position.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func protoErrorf(format string, args ...any) error {
	return &protocolError{msg: fmt.Sprintf(format, args...)}
}

// event returns the next event, without the OK byte. It stays valid until
// the next call. A server's ERR packet comes back as a *mysql.MyError; a
// broken connection as the read's error (io.ErrUnexpectedEOF for a
// connection closed inside a packet); a packet that makes no sense as a
// *protocolError.
func (d *dumpReader) event() ([]byte, error) {
	if d.skip > 0 {
		d.r.Discard(d.skip)
		d.skip = 0
	}
	hdr, err := d.r.Peek(4)
	if err != nil {
		if len(hdr) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n, err := d.header(hdr)
	if err != nil {
		return nil, err
	}
	if n < maxPacket && 4+n <= d.r.Size() {
		p, err := d.r.Peek(4 + n)
		if err != nil {
			return nil, cutShort(err)
		}
		d.skip = 4 + n
		return d.payload(p[4:])
	}
	d.r.Discard(4)
	return d.large(n)
}

// header checks a packet header's sequence number and returns its length.
func (d *dumpReader) header(hdr []byte) (int, error) {
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	if hdr[3] != d.seq {
		return 0, protoErrorf("packet out of order: sequence number %d, want %d", hdr[3], d.seq)
	}
	d.seq++
	return n, nil
}

// payload interprets a whole packet that fits in the buffer.
func (d *dumpReader) payload(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, protoErrorf("empty packet in the binlog dump")
	}
	switch p[0] {
	case mysql.OK_HEADER:
		return p[1:], nil
	case mysql.ERR_HEADER:
		return nil, errPacket(p)
	case mysql.EOF_HEADER:
		if len(p) < 9 {
			return nil, errDumpEnded
		}
	}
	return nil, protoErrorf("unexpected packet in the binlog dump: %d bytes starting with 0x%02x", len(p), p[0])
}

// errPacket decodes an ERR packet (0xff, code, '#' and SQL state with
// CLIENT_PROTOCOL_41, message) into a MyError that owns its strings.
func errPacket(p []byte) error {
	if len(p) < 3 {
		return protoErrorf("error packet of %d bytes", len(p))
	}
	e := &mysql.MyError{Code: binary.LittleEndian.Uint16(p[1:3])}
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.State = string(rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

// large reads a packet that does not fit in the buffer (its header read,
// n its length) and the packets that continue it: one event, assembled
// in d.big.
func (d *dumpReader) large(n int) ([]byte, error) {
	var head [1 + HeaderSize]byte
	if n < len(head) {
		return nil, protoErrorf("packet of %d bytes", n) // only when the buffer is tiny
	}
	if _, err := io.ReadFull(d.r, head[:]); err != nil {
		return nil, cutShort(err)
	}
	if head[0] == mysql.ERR_HEADER && n <= 64<<10 {
		p := make([]byte, n)
		copy(p, head[:])
		if _, err := io.ReadFull(d.r, p[len(head):]); err != nil {
			return nil, cutShort(err)
		}
		return nil, errPacket(p)
	}
	if head[0] != mysql.OK_HEADER {
		return nil, protoErrorf("unexpected packet in the binlog dump: %d bytes starting with 0x%02x", n, head[0])
	}
	size := int(binary.LittleEndian.Uint32(head[1+9:]))
	if size < HeaderSize || size > MaxEventSize {
		return nil, protoErrorf("corrupt event header: event size %d is impossible", size)
	}
	// The payloads hold the OK byte and the event: 1+size bytes in all.
	if n > 1+size || (n < maxPacket && n != 1+size) {
		return nil, protoErrorf("corrupt event header: event size %d, but its packet holds %d bytes", size, n-1)
	}
	// The buffer grows with the bytes that came, not with the size the
	// header claims: a damaged header costs no more than what was sent.
	d.grow(HeaderSize, 0, size)
	copy(d.big, head[1:])
	got := HeaderSize
	if err := d.fill(got, n-len(head), size); err != nil {
		return nil, err
	}
	got = n - 1
	for last := n; last == maxPacket; {
		var hdr [4]byte
		if _, err := io.ReadFull(d.r, hdr[:]); err != nil {
			return nil, cutShort(err)
		}
		m, err := d.header(hdr[:])
		if err != nil {
			return nil, err
		}
		if got+m > size {
			return nil, protoErrorf("corrupt event: its packets hold more than the %d bytes its header says", size)
		}
		if err := d.fill(got, m, size); err != nil {
			return nil, err
		}
		got += m
		last = m
	}
	if got != size {
		return nil, protoErrorf("corrupt event: its packets hold %d bytes, its header says %d", got, size)
	}
	return d.big[:size], nil
}

// fill reads the next m bytes of an event into d.big from offset got, in
// steps of at most 1 MiB, growing d.big as they come.
func (d *dumpReader) fill(got, m, size int) error {
	for m > 0 {
		k := min(m, 1<<20)
		d.grow(got+k, got, size)
		if _, err := io.ReadFull(d.r, d.big[got:got+k]); err != nil {
			return cutShort(err)
		}
		got += k
		m -= k
	}
	return nil
}

// grow makes d.big hold at least need bytes (at most size), keeping its
// first keep bytes; it at least doubles, so an event is copied O(1) times.
func (d *dumpReader) grow(need, keep, size int) {
	if cap(d.big) >= need {
		d.big = d.big[:cap(d.big)]
		return
	}
	nb := make([]byte, max(need, min(size, 2*cap(d.big))))
	copy(nb, d.big[:keep])
	d.big = nb
}

// buffered reports whether a whole packet is in the buffer: event would
// return without reading from the connection.
func (d *dumpReader) buffered() bool {
	have := d.r.Buffered() - d.skip
	if have < 4 {
		return false
	}
	p, err := d.r.Peek(d.skip + 4) // in the buffer: Peek does not read
	if err != nil {
		return false
	}
	p = p[d.skip:]
	n := int(p[0]) | int(p[1])<<8 | int(p[2])<<16
	return n < maxPacket && 4+n <= have
}

// cutShort is the error of a connection that ended inside a packet.
func cutShort(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
