package snapshot

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunkReader returns at most n bytes per Read, as a socket may.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// appendPackets appends payload as the server sends it: parts of at most
// maxPayload bytes (an empty last part when it is a multiple), each with
// its header.
func appendPackets(b []byte, seq *uint8, payload []byte) []byte {
	for {
		n := min(len(payload), maxPayload)
		b = append(b, byte(n), byte(n>>8), byte(n>>16), *seq)
		*seq++
		b = append(b, payload[:n]...)
		payload = payload[n:]
		if n < maxPayload {
			return b
		}
	}
}

func TestWireReader(t *testing.T) {
	var payloads [][]byte
	for _, n := range []int{0, 1, 100, wireBufSize - 1, wireBufSize, wireBufSize + 1, 3 << 20, maxPayload - 1, maxPayload, maxPayload + 5, 2 * maxPayload, 7} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i*7 + n)
		}
		payloads = append(payloads, p)
	}
	var stream []byte
	seq := uint8(1)
	for _, p := range payloads {
		stream = appendPackets(stream, &seq, p)
	}
	for _, step := range []int{1 << 20, 7777} {
		w := &wireReader{r: chunkReader{bytes.NewReader(stream), step}, buf: make([]byte, wireBufSize), seq: 1}
		for i, want := range payloads {
			p, err := w.next()
			if err != nil {
				t.Fatalf("step %d, packet %d (%d bytes): %v", step, i, len(want), err)
			}
			if !bytes.Equal(p, want) {
				t.Fatalf("step %d, packet %d: %d bytes, want %d", step, i, len(p), len(want))
			}
		}
		if _, err := w.next(); !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			t.Fatalf("step %d: after the last packet: %v", step, err)
		}
	}
	// Byte by byte.
	w := &wireReader{r: chunkReader{bytes.NewReader(appendPackets(nil, new(uint8), []byte("abc"))), 1}, buf: make([]byte, 64)}
	if p, err := w.next(); err != nil || string(p) != "abc" {
		t.Fatalf("byte by byte: %q, %v", p, err)
	}
	// Out of order, and cut short inside a packet.
	bad := appendPackets(nil, new(uint8), []byte("x"))
	w = &wireReader{r: bytes.NewReader(bad), buf: make([]byte, 64), seq: 1}
	if _, err := w.next(); err == nil {
		t.Fatal("a packet out of order was read")
	}
	w = &wireReader{r: bytes.NewReader(bad[:4]), buf: make([]byte, 64)}
	if _, err := w.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a packet cut short: %v", err)
	}
}
