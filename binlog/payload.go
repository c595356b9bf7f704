package binlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/internal/wire"
)

// Field types of a TRANSACTION_PAYLOAD_EVENT's header.
const (
	payloadHeaderEnd        = 0
	payloadSizeField        = 1
	payloadCompressionField = 2
	payloadUncompressedSize = 3

	compressionZSTD = 0
	compressionNone = 255
)

// payloadReader yields the events inside a TRANSACTION_PAYLOAD_EVENT one at
// a time, decompressing as it goes, so a large transaction never sits in
// memory whole.
//
// The payload event body:
//
//	# bytes   field
//	varint    field type   } repeated until type 0 (end mark)
//	varint    field length }
//	length    field value  }
//	rest      payload: the transaction's events, compressed, without checksums
type payloadReader struct {
	outer    Event // header and positions of the payload event (Raw/Body not kept)
	checksum bool
	r        *bufio.Reader
	dec      *zstd.Decoder
	left     uint64 // uncompressed bytes still expected
	buf      []byte
	n        int // events yielded
}

func newPayloadReader(ev *Event, checksum bool) (*payloadReader, error) {
	fail := func(err error) error {
		return &Error{Pos: ev.Pos, Err: fmt.Errorf("TRANSACTION_PAYLOAD_EVENT: %w", err)}
	}
	body := ev.Body
	var compression, uncompressed uint64 = compressionNone, 0
	haveSize := false
	for {
		typ, n := wire.LenEncInt(body)
		if n == 0 {
			return nil, fail(errors.New("header cut short"))
		}
		body = body[n:]
		if typ == payloadHeaderEnd {
			break
		}
		l, n := wire.LenEncInt(body)
		if n == 0 || uint64(len(body)-n) < l {
			return nil, fail(errors.New("header field cut short"))
		}
		val := body[n : n+int(l)]
		body = body[n+int(l):]
		v, _ := wire.LenEncInt(val)
		switch typ {
		case payloadCompressionField:
			compression = v
		case payloadUncompressedSize:
			uncompressed, haveSize = v, true
		}
	}
	p := &payloadReader{outer: *ev, checksum: checksum}
	p.outer.Raw, p.outer.Body = nil, nil
	payload := append([]byte(nil), body...) // the source's buffer is reused
	switch compression {
	case compressionZSTD:
		dec, err := zstd.NewReader(bytes.NewReader(payload), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fail(err)
		}
		p.dec = dec
		p.r = bufio.NewReaderSize(dec, 64<<10)
	case compressionNone:
		p.r = bufio.NewReaderSize(bytes.NewReader(payload), 64<<10)
		uncompressed, haveSize = uint64(len(payload)), true
	default:
		return nil, fail(fmt.Errorf("unknown compression type %d", compression))
	}
	if !haveSize {
		uncompressed = MaxEventSize * 4
	}
	p.left = uncompressed
	return p, nil
}

// next returns the next inner event, or nil at the end of the payload.
// Inner events are framed like the file's events: when the file has
// checksums, a (zero) checksum trailer is added and the size patched, so
// every event downstream has one shape.
func (p *payloadReader) next() (*Event, error) {
	fail := func(err error) error {
		p.close()
		return &Error{Pos: p.outer.Pos, Err: fmt.Errorf("TRANSACTION_PAYLOAD_EVENT, inner event %d: %w", p.n, err),
			Hint: "the compressed transaction is damaged"}
	}
	if cap(p.buf) < HeaderSize {
		p.buf = make([]byte, HeaderSize, 4<<10)
	}
	hdr := p.buf[:HeaderSize]
	n, err := io.ReadFull(p.r, hdr)
	if err == io.EOF {
		p.close()
		return nil, nil
	}
	if err != nil {
		return nil, fail(fmt.Errorf("header cut short after %d bytes: %v", n, err))
	}
	h := parseHeader(hdr)
	size := uint64(h.EventSize)
	if size < HeaderSize || size > MaxEventSize || size > p.left {
		return nil, fail(fmt.Errorf("impossible event size %d", size))
	}
	p.left -= size
	total := size
	if p.checksum {
		total += checksumLen
	}
	if uint64(cap(p.buf)) < total {
		nb := make([]byte, total)
		copy(nb, hdr)
		p.buf = nb
	}
	raw := p.buf[:total]
	if _, err := io.ReadFull(p.r, raw[HeaderSize:size]); err != nil {
		return nil, fail(fmt.Errorf("%v event cut short: %v", h.EventType, err))
	}
	if p.checksum {
		clear(raw[size:])
		binary.LittleEndian.PutUint32(raw[9:], uint32(total))
		h.EventSize = uint32(total)
	}
	p.n++
	ev := &Event{Pos: p.outer.Pos, NextPos: p.outer.Pos, Header: h, Raw: raw, Body: raw[HeaderSize:size], InPayload: true}
	// Resuming is only possible after the whole payload event.
	if h.EventType == replication.XID_EVENT || h.EventType == replication.QUERY_EVENT {
		ev.NextPos = p.outer.NextPos
	}
	return ev, nil
}

func (p *payloadReader) close() {
	if p.dec != nil {
		p.dec.Close()
		p.dec = nil
	}
}
