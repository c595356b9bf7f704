package binlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// wirePackets frames payloads as a server sends them, from sequence
// number seq: each split into packets of at most maxPacket bytes, with an
// empty packet after one that fills the last exactly.
func wirePackets(seq uint8, payloads ...[]byte) []byte {
	var b []byte
	for _, p := range payloads {
		for {
			n := min(len(p), maxPacket)
			b = append(b, byte(n), byte(n>>8), byte(n>>16), seq)
			b = append(b, p[:n]...)
			seq++
			p = p[n:]
			if n < maxPacket {
				break
			}
		}
	}
	return b
}

// dumpEvent is an OK packet's payload: the OK byte and an event of size
// bytes whose header says so, filled with a pattern of fill.
func dumpEvent(size int, fill byte) []byte {
	p := make([]byte, 1+size)
	for i := range p {
		p[i] = fill + byte(i)
	}
	p[0] = 0
	binary.LittleEndian.PutUint32(p[1+9:], uint32(size))
	return p
}

// readAll reads events until an error; it returns copies and the error.
func readAll(d *dumpReader) ([][]byte, error) {
	var evs [][]byte
	for {
		ev, err := d.event()
		if err != nil {
			return evs, err
		}
		evs = append(evs, bytes.Clone(ev))
	}
}

func TestDumpReaderEvents(t *testing.T) {
	errPkt := append([]byte{0xff, 0xd4, 0x04, '#'}, "HY000Could not find first log file name in binary log index file"...)
	payloads := [][]byte{dumpEvent(19, 1), dumpEvent(100, 2), dumpEvent(40, 3), dumpEvent(300, 4)}
	stream := wirePackets(1, append(payloads, errPkt)...)
	for _, size := range []int{64, 256 << 10} { // 64: the events over 59 bytes take the large path
		d := newDumpReader(bytes.NewReader(stream), size, 1)
		evs, err := readAll(d)
		if len(evs) != len(payloads) {
			t.Fatalf("buffer %d: %d events, want %d (err %v)", size, len(evs), len(payloads), err)
		}
		for i, ev := range evs {
			if !bytes.Equal(ev, payloads[i][1:]) {
				t.Errorf("buffer %d: event %d differs", size, i)
			}
		}
		var me *mysql.MyError
		if !errors.As(err, &me) || me.Code != 1236 || me.State != "HY000" || !strings.HasPrefix(me.Message, "Could not find first log") {
			t.Errorf("buffer %d: error %#v, want ER 1236 with its state and message", size, err)
		}
	}

	d := newDumpReader(bytes.NewReader(wirePackets(1, dumpEvent(19, 1), []byte{0xfe, 0, 0, 2, 0})), 1024, 1)
	if _, err := readAll(d); !errors.Is(err, errDumpEnded) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("EOF packet: %v, want errDumpEnded", err)
	}
	d = newDumpReader(bytes.NewReader(wirePackets(1, dumpEvent(19, 1))), 1024, 1)
	if evs, err := readAll(d); len(evs) != 1 || err != io.EOF {
		t.Errorf("clean end: %d events, %v; want 1, io.EOF", len(evs), err)
	}
}

// TestDumpReaderMultiPacket: events of 16 MiB and more arrive in several
// packets, the last one empty when they fill the previous exactly.
func TestDumpReaderMultiPacket(t *testing.T) {
	payloads := [][]byte{
		dumpEvent(maxPacket-1, 1), // fills one packet: an empty one follows
		dumpEvent(30, 2),
		dumpEvent(maxPacket, 3), // one byte into a second packet
		dumpEvent(2*maxPacket+5, 4),
		dumpEvent(19, 5),
	}
	d := newDumpReader(bytes.NewReader(wirePackets(1, payloads...)), 256<<10, 1)
	evs, err := readAll(d)
	if err != io.EOF || len(evs) != len(payloads) {
		t.Fatalf("%d events, %v; want %d, io.EOF", len(evs), err, len(payloads))
	}
	for i, ev := range evs {
		if !bytes.Equal(ev, payloads[i][1:]) {
			t.Errorf("event %d (%d bytes) differs", i, len(payloads[i])-1)
		}
	}
	if c := cap(d.big); c > 2*maxPacket+5 {
		t.Errorf("assembly buffer of %d bytes for events of at most %d", c, 2*maxPacket+5)
	}
}

func TestDumpReaderBad(t *testing.T) {
	ev := dumpEvent(100, 1)
	short := dumpEvent(100, 1)
	binary.LittleEndian.PutUint32(short[1+9:], 10)
	long := dumpEvent(100, 1)
	binary.LittleEndian.PutUint32(long[1+9:], 200)
	huge := dumpEvent(100, 1)
	binary.LittleEndian.PutUint32(huge[1+9:], 0xffffffff)
	// A full first packet whose event header claims fewer bytes than the
	// packets carry.
	over := dumpEvent(maxPacket+10, 1)
	binary.LittleEndian.PutUint32(over[1+9:], maxPacket+2)
	cases := []struct {
		name  string
		input []byte
		want  string // in the error; "" for io.ErrUnexpectedEOF
	}{
		{"sequence", wirePackets(2, ev), "out of order: sequence number 2, want 1"},
		{"size under a header", wirePackets(1, short), "event size 10 is impossible"},
		{"size over the packet", wirePackets(1, long), "event size 200, but its packet holds 100 bytes"},
		{"size over the limit", wirePackets(1, huge), "event size 4294967295 is impossible"},
		{"packets over the size", wirePackets(1, over), "its packets hold more than the 16777217 bytes"},
		{"empty packet", wirePackets(1, []byte{}), "empty packet"},
		{"not an event", wirePackets(1, []byte{0x07, 1, 2}), "starting with 0x07"},
		{"large, not an event", wirePackets(1, append([]byte{0x07}, make([]byte, 200)...)), "201 bytes starting with 0x07"},
		{"huge error packet", wirePackets(1, append([]byte{0xff}, make([]byte, 70<<10)...)), "71681 bytes starting with 0xff"},
		{"cut in a header", wirePackets(1, ev)[:2], ""},
		{"cut in a packet", wirePackets(1, ev)[:50], ""},
		{"cut in a large packet", wirePackets(1, ev)[:90], ""},
		{"cut between packets", wirePackets(1, dumpEvent(maxPacket, 1))[:maxPacket+4], ""},
	}
	for _, c := range cases {
		d := newDumpReader(bytes.NewReader(c.input), 64, 1)
		_, err := readAll(d)
		var pe *protocolError
		switch {
		case c.want == "" && err != io.ErrUnexpectedEOF:
			t.Errorf("%s: %v, want io.ErrUnexpectedEOF", c.name, err)
		case c.want != "" && (!errors.As(err, &pe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a protocol error with %q", c.name, err, c.want)
		}
	}
}

// TestDumpReaderBuffered: buffered says whether a whole packet is in
// the buffer, and never reads.
func TestDumpReaderBuffered(t *testing.T) {
	pr, pw := io.Pipe()
	d := newDumpReader(pr, 1024, 1)
	two := wirePackets(1, dumpEvent(30, 1), dumpEvent(40, 2))
	go func() {
		pw.Write(two) // one Read takes both
		pw.Write(two[:10])
	}()
	if d.buffered() {
		t.Fatal("buffered before anything came")
	}
	if _, err := d.event(); err != nil {
		t.Fatal(err)
	}
	if !d.buffered() {
		t.Fatal("not buffered with the second packet in the buffer")
	}
	if _, err := d.event(); err != nil {
		t.Fatal(err)
	}
	if d.buffered() {
		t.Fatal("buffered with nothing in the buffer")
	}
	pw.Close()
}

// FuzzDumpReader: any bytes give events or an error, never a panic, and
// the assembly buffer never outgrows twice the bytes that came (plus the
// 1 MiB it reads at a time).
func FuzzDumpReader(f *testing.F) {
	f.Add(wirePackets(1, dumpEvent(19, 1), dumpEvent(100, 2)))
	f.Add(wirePackets(1, dumpEvent(80, 1))[:60])
	f.Add(wirePackets(1, append([]byte{0xff, 1, 2, '#'}, "12345msg"...)))
	f.Add(wirePackets(1, []byte{0xfe, 0, 0, 2, 0}))
	f.Add([]byte{0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x3f})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDumpReader(bytes.NewReader(data), 64, 1)
		for i := 0; i < 1000; i++ {
			ev, err := d.event()
			if err != nil {
				break
			}
			if len(ev) > len(data) {
				t.Fatalf("event of %d bytes from %d bytes", len(ev), len(data))
			}
		}
		if cap(d.big) > 2*len(data)+1<<20 {
			t.Fatalf("assembly buffer of %d bytes from %d bytes of input", cap(d.big), len(data))
		}
	})
}
