package binlog

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/cputime"
)

// TestCRCIEEE checks crcIEEE against hash/crc32 at every length up to
// 300 bytes (the short events, the tails of the long ones) and over a
// chained start.
func TestCRCIEEE(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 300)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(p); n++ {
		for _, seed := range []uint32{0, 0xdeadbeef} {
			if got, want := crcIEEE(seed, p[:n]), crc32.Update(seed, crc32.IEEETable, p[:n]); got != want {
				t.Fatalf("crcIEEE(%#x, %d bytes) = %08x, hash/crc32 gives %08x", seed, n, got, want)
			}
		}
	}
}

// BenchmarkVerifyCRC32 checks the events of one row of bench/gen.sh's
// workload.binlog, at their sizes there: GTID 42, TABLE_MAP 151, ANNOTATE
// 250, WRITE_ROWS 300, XID 31 bytes.
func BenchmarkVerifyCRC32(b *testing.B) {
	var evs [][]byte
	total := 0
	for _, n := range []int{42, 151, 250, 300, 31} {
		ev := make([]byte, n)
		for i := range ev {
			ev[i] = byte(i * 7)
		}
		ev[4] = 2 // QUERY_EVENT: not a FORMAT_DESCRIPTION_EVENT
		c := crc32.ChecksumIEEE(ev[:n-4])
		ev[n-4], ev[n-3], ev[n-2], ev[n-1] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		evs = append(evs, ev)
		total += n
	}
	b.SetBytes(int64(total))
	defer cputime.Start(b)()
	for b.Loop() {
		for _, ev := range evs {
			if err := verifyCRC32(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
