package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hash/crc32"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/zeebo/xxh3"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// fileEvents splits a binlog file into its events.
func fileEvents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var evs [][]byte
	for off := 4; off < len(data); {
		n := int(binary.LittleEndian.Uint32(data[off+9:]))
		evs = append(evs, data[off:off+n])
		off += n
	}
	return evs
}

// fakeRotate is the artificial ROTATE a dump starts with.
func fakeRotate(name string, pos uint64) []byte {
	b := make([]byte, binlog.HeaderSize, binlog.HeaderSize+8+len(name))
	b[4] = byte(replication.ROTATE_EVENT)
	binary.LittleEndian.PutUint32(b[9:], uint32(binlog.HeaderSize+8+len(name)))
	binary.LittleEndian.PutUint16(b[17:], replication.LOG_EVENT_ARTIFICIAL_F)
	b = binary.LittleEndian.AppendUint64(b, pos)
	return append(b, name...)
}

// newTestState is a dump of name from offset 4 into a new archive.
func newTestState(t *testing.T, name string) (*dumpState, string) {
	t.Helper()
	tmp := t.TempDir()
	a := &archiver{cfg: Config{Dir: tmp, Logf: t.Logf}, d: &dir{path: tmp, m: &Manifest{Format: 1}}}
	if err := a.startFile(name); err != nil {
		t.Fatal(err)
	}
	return &dumpState{a: a, plan: plan{file: name, from: 4}}, filepath.Join(tmp, name)
}

// TestDumpWritesTheFile: what a dump sends (an artificial ROTATE, the
// FDE with its in-use flag cleared, the events, a heartbeat) becomes the
// file: with the in-use flag set while it is open, cleared at its ROTATE,
// and then the manifest says it is complete, with its checksum (XXH3-64
// by default).
func TestDumpWritesTheFile(t *testing.T) {
	data, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	evs := fileEvents(t, data)
	st, path := newTestState(t, "binlog.000001")
	hb := make([]byte, binlog.HeaderSize)
	hb[4] = byte(replication.HEARTBEAT_EVENT)
	binary.LittleEndian.PutUint32(hb[9:], binlog.HeaderSize)
	in := append([][]byte{fakeRotate("binlog.000001", 4)}, evs[:3]...)
	in = append(in, hb)
	in = append(in, evs[3:]...)
	for i, raw := range in {
		if err := st.event(bytes.Clone(raw)); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if st.a.cur != nil {
		t.Fatal("the file is still open after its ROTATE")
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, data) {
		t.Fatalf("the archived file differs from the server's (%d and %d bytes)", len(got), len(data))
	}
	e := st.a.d.m.Files[0]
	if sum := fmt.Sprintf("xxh3-64:%016x", xxh3.Hash(data)); !e.Complete || e.End != "rotate" || e.Sum != sum || e.SHA256 != "" || e.Size != uint64(len(data)) {
		t.Errorf("manifest entry %+v", e)
	}
	// While open, the copy says "in use", as the server's does.
	st, path = newTestState(t, "binlog.000001")
	for _, raw := range append([][]byte{fakeRotate("binlog.000001", 4)}, evs[:len(evs)-1]...) {
		if err := st.event(bytes.Clone(raw)); err != nil {
			t.Fatal(err)
		}
	}
	st.a.flush(true)
	got, _ = os.ReadFile(path)
	want := bytes.Clone(data[:len(got)])
	want[4+flagsOffset] |= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
	if len(got) != len(data)-len(evs[len(evs)-1]) || !bytes.Equal(got, want) {
		t.Fatalf("the open file is not the server's open file: %d bytes", len(got))
	}
}

// TestDumpChecksEvents: an event whose CRC32 or log_pos is wrong stops
// the archive before it is written.
func TestDumpChecksEvents(t *testing.T) {
	data, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	evs := fileEvents(t, data)
	if crc, _ := binlog.FDEChecksum(evs[0]); !crc {
		t.Fatal("shop.binlog has no checksums")
	}
	for _, c := range []struct {
		name string
		bad  func([]byte)
		msg  string
	}{
		{"checksum", func(b []byte) { b[len(b)/2] ^= 1 }, "checksum mismatch"},
		{"log_pos", func(b []byte) { binary.LittleEndian.PutUint32(b[13:], binary.LittleEndian.Uint32(b[13:])+1) }, "the stream skipped or repeated bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, path := newTestState(t, "binlog.000001")
			for _, raw := range append([][]byte{fakeRotate("binlog.000001", 4)}, evs[:2]...) {
				if err := st.event(bytes.Clone(raw)); err != nil {
					t.Fatal(err)
				}
			}
			bad := bytes.Clone(evs[2])
			c.bad(bad)
			if c.name == "log_pos" {
				// With a CRC32 made valid again: only log_pos is wrong.
				fixCRC(bad)
			}
			err := st.event(bad)
			var be *binlog.Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want a *binlog.Error saying %q", err, c.msg)
			}
			st.a.flush(true)
			got, _ := os.ReadFile(path)
			if want := 4 + len(evs[0]) + len(evs[1]); len(got) != want {
				t.Errorf("the file has %d bytes, want %d (the bad event not written)", len(got), want)
			}
		})
	}
}

func fixCRC(b []byte) {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
}
