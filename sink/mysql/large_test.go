package mysqlsink

import (
	"bufio"
	"bytes"
	"testing"
)

// TestPacketWriter: a command written in pieces is framed as the protocol
// splits it: packets of at most 2^24-1 bytes with consecutive sequence
// numbers, and an empty packet after a full last one.
func TestPacketWriter(t *testing.T) {
	for _, size := range []int{1, maxPacket - 1, maxPacket, maxPacket + 1, 2 * maxPacket} {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i * 31)
		}
		var out bytes.Buffer
		w := packetWriter{w: bufio.NewWriter(&out), left: size}
		// In uneven pieces, as execStreamed writes a header and values.
		for p := payload; len(p) > 0; {
			n := min(len(p), 7777777)
			w.write(p[:n])
			p = p[n:]
		}
		w.finish()
		if err := w.w.Flush(); err != nil || w.err != nil {
			t.Fatal(err, w.err)
		}
		var got []byte
		b := out.Bytes()
		seq, last := 0, -1
		for len(b) > 0 {
			n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
			if int(b[3]) != seq || len(b) < 4+n {
				t.Fatalf("size %d: packet %d has sequence %d and %d bytes, %d left", size, seq, b[3], n, len(b)-4)
			}
			got = append(got, b[4:4+n]...)
			b = b[4+n:]
			seq++
			last = n
		}
		if !bytes.Equal(got, payload) || last == maxPacket || int(w.seq) != seq {
			t.Errorf("size %d: %d bytes in %d packets (last %d, next sequence %d)", size, len(got), seq, last, w.seq)
		}
		if want := size/maxPacket + 1; seq != want {
			t.Errorf("size %d: %d packets, want %d", size, seq, want)
		}
	}
}
