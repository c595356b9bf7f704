package archive

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReadList builds an archive of two histories from a test binlog:
// the first holds it up to the end of its third transaction (and a cut
// one after), the second holds the whole file (as a promoted replica's
// first file repeats what came before the switch). ReadList reads the
// first up to the switch and the second from the first transaction
// after it; an expired file is left out.
func TestReadList(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "shop.binlog"))
	if err != nil {
		t.Fatal(err)
	}
	var txs []*txInfo
	if _, err := trackFile(filepath.Join("..", "testdata", "shop.binlog"), 0, func(tx *txInfo) error { txs = append(txs, tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(txs) < 5 {
		t.Fatalf("%d transactions", len(txs))
	}
	top := t.TempDir()
	write := func(dir string, m *Manifest, files map[string][]byte) {
		os.MkdirAll(dir, 0o755)
		for n, b := range files {
			os.WriteFile(filepath.Join(dir, n), b, 0o644)
		}
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(dir, manifestName), b, 0o644)
	}
	sw := txs[2]
	after := sw.before.clone()
	after.add(sw.gtid)
	write(top, &Manifest{Format: 1, Next: "history-2", Files: []*FileEntry{
		{Name: "binlog.000001", Complete: true, Expired: true},
		{Name: "binlog.000002", Complete: true, End: "failover"},
	}}, map[string][]byte{"binlog.000002": data[:txs[3].end-1]})
	write(filepath.Join(top, "history-2"), &Manifest{Format: 1, Files: []*FileEntry{{Name: "binlog.000007"}},
		Switch: &Switch{PrevFile: "binlog.000002", PrevEnd: sw.end, After: after.String(), LastGTID: sw.gtid.String(), FirstFile: "binlog.000007"}},
		map[string][]byte{"binlog.000007": data})
	segs, err := ReadList(top)
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{
		{Path: filepath.Join(top, "binlog.000002"), Name: "binlog.000002", From: 4, To: sw.end, History: 1},
		{Path: filepath.Join(top, "history-2", "binlog.000007"), Name: "binlog.000007", From: txs[3].start, History: 2},
	}
	if len(segs) != len(want) {
		t.Fatalf("segments %+v, want %+v", segs, want)
	}
	for i := range want {
		if segs[i] != want[i] {
			t.Errorf("segment %d: %+v, want %+v", i, segs[i], want[i])
		}
	}
	if _, err := ReadList(t.TempDir()); err == nil {
		t.Error("a directory without a manifest was taken")
	}
}
