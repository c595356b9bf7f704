package binlog_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogPosZero: MariaDB 11.4+ (binlog_legacy_event_pos=OFF) writes
// log_pos 0 in the events inside a transaction. Such a file reads as it
// is; an event deleted among them is caught at the next event that
// carries its position.
func TestLogPosZero(t *testing.T) {
	shop, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	want, err := readAll(t, "../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Clone(shop)
	var spans [][2]int
	zeroed := 0
	for off := 4; off < len(b); {
		size := int(binary.LittleEndian.Uint32(b[off+9:]))
		spans = append(spans, [2]int{off, off + size})
		switch b[off+4] {
		case 19, 23, 24, 25, 30, 31, 32, 160: // TABLE_MAP, rows v1/v2, ANNOTATE_ROWS
			binary.LittleEndian.PutUint32(b[off+13:], 0)
			binary.LittleEndian.PutUint32(b[off+size-4:], crc32.ChecksumIEEE(b[off:off+size-4]))
			zeroed++
		}
		off += size
	}
	if zeroed < 5 {
		t.Fatalf("only %d events inside transactions", zeroed)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.binlog")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("log_pos 0 inside transactions: %v; output equal: %v", err, bytes.Equal(got, want))
	}
	// Delete the first zeroed event: the event after it, or the next one
	// with a position, no longer ends where its header says.
	for _, sp := range spans {
		if binary.LittleEndian.Uint32(b[sp[0]+13:]) != 0 {
			continue
		}
		cut := append(bytes.Clone(b[:sp[0]]), b[sp[1]:]...)
		if err := os.WriteFile(path, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readAll(t, path)
		if err == nil || !strings.Contains(err.Error(), "log_pos") {
			t.Errorf("event at %d deleted: %v, want a log_pos mismatch", sp[0], err)
		}
		break
	}
}
