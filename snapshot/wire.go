package snapshot

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// This file reads a SELECT's result set straight from the connection,
// through one buffer, for selectText: go-mysql's packet reader copied
// each packet three times (its bufio.Reader, its copy buffer, the
// caller's) and took two pooled buffers per packet: a quarter of the
// snapshot's client CPU in pprof.

// maxPayload is the largest payload of one packet; a payload of exactly
// this size goes on in the next packet.
const maxPayload = 1<<24 - 1

// wireBufSize is the reader's buffer: a packet that fits is returned in
// place.
const wireBufSize = 256 << 10

// wireReader reads packets from r (the connection under go-mysql's
// reader, which holds nothing between two commands: the server sends
// nothing unasked).
type wireReader struct {
	r        io.Reader
	buf      []byte
	pos, end int // unread bytes: buf[pos:end]
	seq      uint8
	big      []byte // a packet larger than buf, or one in several parts
	drained  bool   // the last read found less than drainedRead bytes
}

// drainedRead: a read that returns fewer bytes found the socket drained,
// the client faster than the server. The next read then waits a moment
// (catchUpPause) before it asks again, rather than parking in the Go
// netpoller to be woken by the next 16 KiB the server sends (see the
// commit that added it for the measurements).
const drainedRead = 32 << 10

// next returns the next packet's payload, valid until the next call.
func (w *wireReader) next() ([]byte, error) {
	n, err := w.header()
	if err != nil {
		return nil, err
	}
	if n < maxPayload && n <= len(w.buf) {
		if err := w.fill(n); err != nil {
			return nil, err
		}
		p := w.buf[w.pos : w.pos+n : w.pos+n]
		w.pos += n
		return p, nil
	}
	// A large packet, maybe in several parts: assembled in w.big.
	w.big = w.big[:0]
	for {
		for m := n; m > 0; {
			if w.pos == w.end {
				if err := w.fill(1); err != nil {
					return nil, err
				}
			}
			k := min(m, w.end-w.pos)
			w.big = append(w.big, w.buf[w.pos:w.pos+k]...)
			w.pos += k
			m -= k
		}
		if n < maxPayload {
			return w.big, nil
		}
		if n, err = w.header(); err != nil {
			return nil, err
		}
	}
}

// header reads a packet header and returns the payload's length.
func (w *wireReader) header() (int, error) {
	if err := w.fill(4); err != nil {
		return 0, err
	}
	h := w.buf[w.pos : w.pos+4]
	if h[3] != w.seq {
		return 0, fmt.Errorf("packet out of order: sequence number %d, want %d: %w", h[3], w.seq, mysql.ErrMalformPacket)
	}
	w.seq++
	w.pos += 4
	return int(h[0]) | int(h[1])<<8 | int(h[2])<<16, nil
}

// fill makes k bytes (k <= len(w.buf)) readable at w.pos.
func (w *wireReader) fill(k int) error {
	if w.end-w.pos >= k {
		return nil
	}
	if w.pos > 0 {
		w.end = copy(w.buf, w.buf[w.pos:w.end])
		w.pos = 0
	}
	for w.end < k {
		if w.drained {
			catchUpPause() // pause_linux.go
		}
		m, err := w.r.Read(w.buf[w.end:])
		w.drained = m < drainedRead
		w.end += m
		if err != nil && w.end < k {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// wireSelect runs q and reads its result set itself; ok is false when it
// cannot (a compressed connection), and nothing was sent.
func wireSelect(c *client.Conn, q string, ncols int, fn func([]textCell) error) (ok bool, err error) {
	if c.Compression != mysql.MYSQL_COMPRESS_NONE || c.Conn == nil || c.Conn.Conn == nil {
		return false, nil
	}
	deprecateEOF := strings.Contains(c.CapabilityString(), "CLIENT_DEPRECATE_EOF")
	data := make([]byte, 5, 5+len(q))
	data[4] = mysql.COM_QUERY
	data = append(data, q...)
	c.ResetSequence()
	if err := c.WritePacket(data); err != nil {
		return true, err
	}
	w := &wireReader{r: c.Conn.Conn, buf: make([]byte, wireBufSize), seq: c.Sequence}
	defer func() { c.Sequence = w.seq }()
	p, err := w.next()
	if err != nil {
		return true, err
	}
	switch {
	case len(p) == 0:
		return true, mysql.ErrMalformPacket
	case p[0] == mysql.ERR_HEADER:
		return true, c.HandleErrorPacket(append([]byte(nil), p...))
	case p[0] == mysql.OK_HEADER:
		return true, fmt.Errorf("the query returned no result set")
	}
	n, isNull, _ := mysql.LengthEncodedInt(p)
	if isNull || n != uint64(ncols) {
		return true, fmt.Errorf("the query returned %d columns, not %d", n, ncols)
	}
	// The column definitions (loadSchema read them already), and their
	// EOF packet unless CLIENT_DEPRECATE_EOF.
	skip := ncols
	if !deprecateEOF {
		skip++
	}
	for i := 0; i < skip; i++ {
		if p, err = w.next(); err != nil {
			return true, err
		}
		if len(p) > 0 && p[0] == mysql.ERR_HEADER {
			return true, c.HandleErrorPacket(append([]byte(nil), p...))
		}
	}
	return true, readTextRows(w.next, c, ncols, fn)
}
