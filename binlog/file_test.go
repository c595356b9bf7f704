package binlog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// withRotateTo returns a copy of a CRC32 binlog whose last event, a
// ROTATE, names next instead.
func withRotateTo(t *testing.T, b []byte, next string) []byte {
	t.Helper()
	off := 4
	for {
		size := int(binary.LittleEndian.Uint32(b[off+9:]))
		if off+size == len(b) {
			break
		}
		off += size
	}
	if b[off+4] != 4 { // ROTATE_EVENT
		t.Fatalf("the last event is of type %d, not ROTATE", b[off+4])
	}
	ev := append([]byte(nil), b[off:off+19+8]...)
	ev = append(ev, next...)
	binary.LittleEndian.PutUint32(ev[9:], uint32(len(ev)+4))
	binary.LittleEndian.PutUint32(ev[13:], uint32(off+len(ev)+4)) // log_pos: where the next event would start
	ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	return append(append([]byte(nil), b[:off]...), ev...)
}

func readAll(t *testing.T, files ...string) ([]byte, error) {
	t.Helper()
	src, err := binlog.OpenFiles(files, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out bytes.Buffer
	sk := jsonl.New(&out, jsonl.Options{})
	err = pipeline.New(src, sk, pipeline.Options{}).Run(context.Background())
	sk.Close(context.Background())
	return out.Bytes(), err
}

// TestRotateStaysInDir: a ROTATE is followed to a file in the same
// directory only; a name with a path in it (no server writes one) is not
// followed out of the directory.
func TestRotateStaysInDir(t *testing.T) {
	shop, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	once, err := readAll(t, "../testdata/shop.binlog")
	if err != nil || len(once) == 0 {
		t.Fatalf("shop.binlog: %v, %d bytes", err, len(once))
	}
	// b/binlog.000002 is a valid binlog that must not be read.
	if err := os.WriteFile(filepath.Join(dir, "b", "binlog.000002"), shop, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../b/binlog.000002", filepath.Join(dir, "b", "binlog.000002")} {
		first := filepath.Join(dir, "a", "binlog.000001")
		if err := os.WriteFile(first, withRotateTo(t, shop, name), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := readAll(t, first)
		if err != nil {
			t.Errorf("ROTATE to %q: %v", name, err)
		}
		if !bytes.Equal(bytes.ReplaceAll(out, []byte(`"binlog.000001"`), []byte(`"shop.binlog"`)), once) {
			t.Errorf("ROTATE to %q was followed out of the directory: %d bytes of output, want %d", name, len(out), len(once))
		}
	}
	// The same name without a path is followed.
	first := filepath.Join(dir, "b", "binlog.000001")
	if err := os.WriteFile(first, withRotateTo(t, shop, "binlog.000002"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := readAll(t, first)
	if err != nil || len(out) <= len(once) {
		t.Errorf("ROTATE to binlog.000002 beside it: %v, %d bytes (want more than %d)", err, len(out), len(once))
	}
}
