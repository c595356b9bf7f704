package binlog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// inUseCopy returns shop.binlog as the server's current file: its
// FORMAT_DESCRIPTION_EVENT with the in-use flag, its
// closing ROTATE or STOP dropped.
func inUseCopy(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte(nil), b...)
	// The server computes the FORMAT_DESCRIPTION_EVENT's CRC32 with the
	// flag clear: it stays as it is.
	binary.LittleEndian.PutUint16(b[4+17:], binary.LittleEndian.Uint16(b[4+17:])|0x1)
	last := 4
	for off := 4; off < len(b); off += int(binary.LittleEndian.Uint32(b[off+9:])) {
		last = off
	}
	if typ := b[last+4]; typ != 4 && typ != 3 {
		t.Fatalf("shop.binlog ends with an event of type %d, not ROTATE or STOP", typ)
	}
	return b[:last]
}

// TestReadFileGrowing: a file the server appends to while it is read (the
// current binlog of a live server: MariaDB writes BINLOG_CHECKPOINT from a
// background thread after FLUSH BINARY LOGS) is read as it was when opened.
// Before, the header of an event appended after the open was read, and
// checked against the size seen at the open: "MariadbBinLogCheckPointEvent
// event of 23 bytes, but only 0 bytes are left in the file", exit 4 (the
// flaky TestReadMultiFile).
func TestReadFileGrowing(t *testing.T) {
	b := inUseCopy(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "binlog.000001")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := readAll(t, name)
	if err != nil || len(want) == 0 {
		t.Fatalf("in-use copy of shop.binlog: %v, %d bytes", err, len(want))
	}
	// A BINLOG_CHECKPOINT (type 161) as MariaDB writes it: header, name
	// length, name, CRC32.
	ev := make([]byte, 19, 64)
	ev[4] = 161
	ev = binary.LittleEndian.AppendUint32(ev, uint32(len("binlog.000001")))
	ev = append(ev, "binlog.000001"...)
	binary.LittleEndian.PutUint32(ev[9:], uint32(len(ev)+4))
	binary.LittleEndian.PutUint32(ev[13:], uint32(len(b)+len(ev)+4))
	ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	for _, n := range []int{len(ev), 19, 1} { // the whole event, its header, a byte
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := binlog.OpenFiles([]string{name}, change.Position{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sk := jsonl.New(&out, jsonl.Options{})
		first := true
		err = pipeline.New(hookSource{src, func() {
			if first { // the file is open: the server appends
				first = false
				f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(ev[:n])
				f.Close()
			}
		}}, sk, pipeline.Options{}).Run(context.Background())
		sk.Close(context.Background())
		src.Close()
		if err != nil || !bytes.Equal(out.Bytes(), want) {
			t.Errorf("%d bytes appended while reading: %v; %d bytes of output, want %d", n, err, out.Len(), len(want))
		}
	}
}

type hookSource struct {
	*binlog.FileSource
	after func()
}

func (h hookSource) Next(ctx context.Context) (*binlog.Event, error) {
	ev, err := h.FileSource.Next(ctx)
	h.after()
	return ev, err
}

// TestReadLiveFileCut: the current file cut at every offset of its last
// 800 bytes (its last transactions; the server was writing an event, or
// crashed): each read stops at the same place as
// the complete file would, or with a truncation error (exit code 4) whose
// output is the complete file's output up to a transaction boundary.
func TestReadLiveFileCut(t *testing.T) {
	b := inUseCopy(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "binlog.000001")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := readAll(t, name)
	if err != nil {
		t.Fatal(err)
	}
	clean := 0
	for cut := len(b) - 1; cut >= len(b)-800; cut-- {
		if err := os.WriteFile(name, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := readAll(t, name)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v, want a truncation error or none", cut, err)
		}
		if !bytes.HasPrefix(want, out) || (len(out) > 0 && out[len(out)-1] != '\n') {
			t.Fatalf("cut at %d: the output is not a prefix of whole lines of the complete file's", cut)
		}
		if n := len(out); n > 0 && n < len(want) && gtidOf(t, out[bytes.LastIndexByte(out[:n-1], '\n')+1:]) == gtidOf(t, want[n:]) {
			t.Fatalf("cut at %d: the output ends inside transaction %s", cut, gtidOf(t, want[n:]))
		}
		if err == nil {
			clean++
		}
	}
	if clean == 0 {
		t.Errorf("no cut at an event boundary read cleanly")
	}
}

// gtidOf returns the GTID of the first JSON line in b.
func gtidOf(t *testing.T, b []byte) string {
	t.Helper()
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	var l struct {
		GTID string `json:"gtid"`
	}
	if err := json.Unmarshal(b, &l); err != nil || l.GTID == "" {
		t.Fatalf("no GTID in %.100q: %v", b, err)
	}
	return l.GTID
}
