package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// failoverArchive builds an archive of two histories from a test binlog
// (as TestReadList): history 1 holds it up to inside its fourth
// transaction and switches after the third; history 2 holds the whole
// file, as a promoted replica's first file repeats what came before the
// switch. compress: both files stored zstd-compressed.
func failoverArchive(t *testing.T, compress bool) (top string, txs []*txInfo) {
	t.Helper()
	src := filepath.Join("..", "testdata", "shop.binlog")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trackFile(src, 0, func(tx *txInfo) error { txs = append(txs, tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(txs) < 6 {
		t.Fatalf("%d transactions", len(txs))
	}
	top = t.TempDir()
	entry := func(dir, name string, b []byte, end string, last *txInfo) *FileEntry {
		sum := sha256.Sum256(b)
		e := &FileEntry{Name: name, Size: uint64(len(b)), Complete: true, End: end, SHA256: hex.EncodeToString(sum[:]),
			FirstGTID: txs[0].gtid.String(), LastGTID: last.gtid.String()}
		if compress {
			z, _ := zstd.NewWriter(nil)
			b = z.EncodeAll(b, nil)
			e.Stored = name + ".zst"
		}
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, e.stored()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return e
	}
	sw := txs[2]
	after := sw.before.clone()
	after.add(sw.gtid)
	writeManifest(t, top, &Manifest{Format: 1, Next: "history-2", Files: []*FileEntry{
		entry(top, "binlog.000002", data[:txs[3].end-1], "failover", txs[2])}})
	h2 := filepath.Join(top, "history-2")
	writeManifest(t, h2, &Manifest{Format: 1, Files: []*FileEntry{entry(h2, "binlog.000007", data, "rotate", txs[len(txs)-1])},
		Switch: &Switch{PrevFile: "binlog.000002", PrevEnd: sw.end, After: after.String(), LastGTID: sw.gtid.String(), FirstFile: "binlog.000007"}})
	return top, txs
}

// starts reads the plan's parts from start and returns where each
// transaction (its GTID event) starts, the plan's Skip applied.
func starts(t *testing.T, p *ReadPlan, start change.Position) []change.Position {
	t.Helper()
	src, err := binlog.OpenParts(p.Parts, start)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []change.Position
	for {
		ev, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type() == replication.MARIADB_GTID_EVENT {
			out = append(out, ev.Pos)
		}
	}
}

// TestPlanReadAcrossFailover: an archive with a history-2 is read in one
// plan: history 1 up to the switch point, history 2 (named history-2/…
// in positions) from its first transaction after the switch, so every
// transaction comes once; start and stop bounds work on either side;
// zstd-compressed files are read as they decompress.
func TestPlanReadAcrossFailover(t *testing.T) {
	for _, compress := range []bool{false, true} {
		top, txs := failoverArchive(t, compress)
		p, err := PlanRead(top, ReadRange{})
		if err != nil {
			t.Fatal(err)
		}
		h1, h2 := "binlog.000002", "history-2/binlog.000007"
		want := []binlog.Part{
			{Path: p.Files[0], Name: h1, From: 4, To: txs[2].end},
			{Path: p.Files[1], Name: h2, From: txs[3].start},
		}
		if len(p.Parts) != 2 || !samePart(p.Parts[0], want[0]) || !samePart(p.Parts[1], want[1]) || p.Open || p.More {
			t.Fatalf("compress %v: %+v, want %+v", compress, p, want)
		}
		var all []change.Position
		for i, tx := range txs {
			f := h1
			if i > 2 {
				f = h2
			}
			all = append(all, change.Position{File: f, Offset: uint64(tx.start)})
		}
		got := starts(t, p, change.Position{})
		if len(got) != len(all) {
			t.Fatalf("compress %v: read %v, want %v", compress, got, all)
		}
		for i := range all {
			if got[i] != all[i] {
				t.Errorf("transaction %d at %v, want %v", i, got[i], all[i])
			}
			if i > 0 && !all[i-1].Before(all[i]) {
				t.Errorf("%v is not before %v", all[i-1], all[i])
			}
		}
		// A start on either side of the switch.
		for _, i := range []int{1, 4} {
			got := starts(t, p, all[i])
			if len(got) != len(all)-i || got[0] != all[i] {
				t.Errorf("from %v: %v", all[i], got)
			}
		}
		// The end of history 1 (a checkpoint after its last transaction).
		if got := starts(t, p, change.Position{File: h1, Offset: uint64(txs[2].end)}); len(got) != len(all)-3 || got[0] != all[3] {
			t.Errorf("from the switch point: %v", got)
		}
		if p, err := PlanRead(top, ReadRange{StartFile: h2}); err != nil || len(p.Parts) != 1 || p.Parts[0].Name != h2 {
			t.Errorf("start in history 2: %+v, %v", p, err)
		}
		if p, err := PlanRead(top, ReadRange{StopFile: h1}); err != nil || len(p.Parts) != 2 {
			t.Errorf("stop in history 1: %+v, %v", p, err)
		}
		// What history 2 repeats is skipped, not what history 1 holds.
		if !p.Skip(all[4], txs[1].gtid.String()) || p.Skip(all[1], txs[1].gtid.String()) || p.Skip(all[4], txs[4].gtid.String()) {
			t.Error("Skip does not skip exactly what history 2 repeats")
		}
		// A start GTID on either side.
		for _, i := range []int{1, 4} {
			st := txs[i].before.clone()
			p, err := PlanRead(top, ReadRange{StartGTID: st.String()})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, pos := range starts(t, p, change.Position{}) {
				if !p.Skip(pos, txs[indexOf(all, pos)].gtid.String()) {
					n++
				}
			}
			if n != len(all)-i {
				t.Errorf("--start-gtid %s: %d transactions, want %d", st, n, len(all)-i)
			}
		}
	}
}

func indexOf(all []change.Position, p change.Position) int {
	for i, q := range all {
		if q == p {
			return i
		}
	}
	return -1
}

func samePart(a, b binlog.Part) bool {
	return a.Path == b.Path && a.Name == b.Name && a.From == b.From && a.To == b.To && (a.Open == nil) == (b.Open == nil)
}
