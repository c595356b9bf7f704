package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/change"
)

// fakeArchive writes an archive of complete files, each with its own
// bytes, times one hour apart and GTIDs 0-1-(10i+1) … 0-1-(10i+10).
func fakeArchive(t testing.TB, n int) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	m := &Manifest{Format: 1}
	t0 := time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		name := "binlog.00000" + string(rune('1'+i))
		data := []byte(strings.Repeat(name, 10+i))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		m.Files = append(m.Files, &FileEntry{Name: name, Size: uint64(len(data)), Complete: true, End: "rotate", SHA256: hex.EncodeToString(sum[:]),
			FirstGTID: "0-1-" + itoa(10*i+1), LastGTID: "0-1-" + itoa(10*i+10),
			FirstTime: t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339), LastTime: t0.Add(time.Duration(i)*time.Hour + 59*time.Minute).Format(time.RFC3339)})
	}
	writeManifest(t, dir, m)
	return dir, m
}

func writeManifest(t testing.TB, dir string, m *Manifest) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func names(p *ReadPlan) string {
	var s []string
	for _, f := range p.Files {
		s = append(s, filepath.Base(f))
	}
	return strings.Join(s, " ")
}

func TestPlanReadBounds(t *testing.T) {
	dir, _ := fakeArchive(t, 5)
	at := func(h int, m int) time.Time { return time.Date(2024, 6, 15, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		r    ReadRange
		want string
		more bool
	}{
		{ReadRange{}, "binlog.000001 binlog.000002 binlog.000003 binlog.000004 binlog.000005", false},
		{ReadRange{StartFile: "binlog.000003"}, "binlog.000003 binlog.000004 binlog.000005", false},
		{ReadRange{StopFile: "binlog.000002"}, "binlog.000001 binlog.000002 binlog.000003", true},
		{ReadRange{StartTime: at(2, 30)}, "binlog.000003 binlog.000004 binlog.000005", false},
		{ReadRange{StartTime: at(2, 0)}, "binlog.000002 binlog.000003 binlog.000004 binlog.000005", false},
		{ReadRange{StartTime: at(1, 10), StopTime: at(2, 30)}, "binlog.000002 binlog.000003 binlog.000004", true},
		{ReadRange{StartGTID: "0-1-25"}, "binlog.000003 binlog.000004 binlog.000005", false},
		{ReadRange{StartGTID: "0-1-30"}, "binlog.000004 binlog.000005", false},
		{ReadRange{StartGTID: "0-1-0"}, "binlog.000001 binlog.000002 binlog.000003 binlog.000004 binlog.000005", false},
	} {
		p, err := PlanRead(dir, tc.r)
		if err != nil {
			t.Fatalf("%+v: %v", tc.r, err)
		}
		if got := names(p); got != tc.want || p.More != tc.more {
			t.Errorf("%+v: %s (more %v), want %s (more %v)", tc.r, got, p.More, tc.want, tc.more)
		}
	}
	p, err := PlanRead(dir, ReadRange{StartGTID: "0-1-50"})
	if err != nil || !p.Empty {
		t.Errorf("start at the archive's last GTID: %+v, %v; want an empty plan", p, err)
	}
	if p, _ := PlanRead(dir, ReadRange{StartGTID: "0-1-25"}); !p.Skip(change.Position{}, "0-1-25") || p.Skip(change.Position{}, "0-1-26") || p.Skip(change.Position{}, "1-1-3") {
		t.Error("Skip does not skip exactly the transactions up to the start")
	}
}

func TestPlanReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string, m *Manifest)
		r     ReadRange
		want  string
	}{
		{"not an archive", func(t *testing.T, dir string, m *Manifest) { os.Remove(filepath.Join(dir, manifestName)) }, ReadRange{}, "is not an archive of binlogcdc"},
		{"missing files", func(t *testing.T, dir string, m *Manifest) {
			os.Remove(filepath.Join(dir, "binlog.000002"))
			os.Remove(filepath.Join(dir, "binlog.000004"))
		}, ReadRange{StartFile: "binlog.000005"}, "lacks binlog.000002, binlog.000004"},
		{"damaged", func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, "binlog.000003")
			b, _ := os.ReadFile(p)
			b[5] ^= 1
			os.WriteFile(p, b, 0o644)
		}, ReadRange{}, "binlog.000003 is damaged: its SHA-256 is"},
		{"start file", nil, ReadRange{StartFile: "binlog.000009"}, "the start file binlog.000009 is not in the archive"},
		{"gtid before", nil, ReadRange{StartGTID: "0-1-"}, "takes a MariaDB GTID position"},
		{"gtid gap", func(t *testing.T, dir string, m *Manifest) {
			m.Files[0].FirstGTID = "0-1-5"
			writeManifest(t, dir, m)
		}, ReadRange{StartGTID: "0-1-2"}, "is not in the archive"},
		{"gtid past", nil, ReadRange{StartGTID: "0-1-51"}, "the archive's last transaction of domain 0 is 0-1-50"},
		{"gtid other domain", nil, ReadRange{StartGTID: "1-1-20"}, "says nothing of domain 0"},
		{"mysql gtid", nil, ReadRange{StartGTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5"}, "takes a MariaDB GTID position"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, m := fakeArchive(t, 5)
			if tc.setup != nil {
				tc.setup(t, dir, m)
			}
			_, err := PlanRead(dir, tc.r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPlanReadCompressed: a file archived compressed is found and its
// SHA-256 is checked over its decompressed bytes.
func TestPlanReadCompressed(t *testing.T) {
	dir, _ := fakeArchive(t, 3)
	p := filepath.Join(dir, "binlog.000002")
	data, _ := os.ReadFile(p)
	w, _ := zstd.NewWriter(nil)
	if err := os.WriteFile(p+".zst", w.EncodeAll(data, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	plan, err := PlanRead(dir, ReadRange{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(plan); got != "binlog.000001 binlog.000002.zst binlog.000003" {
		t.Fatal(got)
	}
	data[0] ^= 1
	os.WriteFile(p+".zst", w.EncodeAll(data, nil), 0o644)
	if _, err := PlanRead(dir, ReadRange{}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged compressed file: %v", err)
	}
}

// FuzzPlanRead: any manifest is read, or refused with an error; never a
// panic.
func FuzzPlanRead(f *testing.F) {
	dir, _ := fakeArchive(f, 3)
	good, _ := os.ReadFile(filepath.Join(dir, manifestName))
	f.Add(good, "0-1-15", "binlog.000002")
	f.Add([]byte(`{"format":1,"files":[{"name":"binlog.000001","complete":false}]}`), "", "")
	f.Add([]byte(`{"format":1,"files":[{"name":"../x","complete":true}]}`), "0-1-1", "")
	f.Fuzz(func(t *testing.T, manifest []byte, gtid, startFile string) {
		d := t.TempDir()
		for _, n := range []string{"binlog.000001", "binlog.000002", "binlog.000003"} {
			os.WriteFile(filepath.Join(d, n), []byte(n), 0o644)
		}
		os.WriteFile(filepath.Join(d, manifestName), manifest, 0o644)
		p, err := PlanRead(d, ReadRange{StartGTID: gtid, StartFile: startFile, StopTime: time.Unix(1e9, 0)})
		if err == nil && !p.Empty && len(p.Files) == 0 {
			t.Fatal("a plan with no file and not empty")
		}
	})
}

// TestPlanReadExpired: files --keep-days/--keep-size removed do not stop a
// read that does not need them; one that does names them.
func TestPlanReadExpired(t *testing.T) {
	dir, m := fakeArchive(t, 5)
	for _, e := range m.Files[:2] {
		e.Expired = true
		os.Remove(filepath.Join(dir, e.Name))
	}
	writeManifest(t, dir, m)
	for _, tc := range []struct {
		r    ReadRange
		want string
	}{
		{ReadRange{}, "binlog.000003 binlog.000004 binlog.000005"},
		{ReadRange{StartFile: "binlog.000004"}, "binlog.000004 binlog.000005"},
		{ReadRange{StartGTID: "0-1-25"}, "binlog.000003 binlog.000004 binlog.000005"},
	} {
		p, err := PlanRead(dir, tc.r)
		if err != nil {
			t.Fatalf("%+v: %v", tc.r, err)
		}
		if got := names(p); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.r, got, tc.want)
		}
	}
	for _, r := range []ReadRange{{StartFile: "binlog.000001"}, {StartGTID: "0-1-5"}} {
		_, err := PlanRead(dir, r)
		if err == nil || !strings.Contains(err.Error(), "needs binlog.000001, binlog.000002, which the archive") || !strings.Contains(err.Error(), "expired") {
			t.Errorf("%+v: %v, want an error naming the expired files", r, err)
		}
	}
	// Stopped while it switched to another server: history-2 not begun,
	// this history is whole.
	m.Next = "history-2"
	writeManifest(t, dir, m)
	if p, err := PlanRead(dir, ReadRange{}); err != nil || names(p) != "binlog.000003 binlog.000004 binlog.000005" {
		t.Errorf("an archive whose next history is not begun: %v", err)
	}
}
