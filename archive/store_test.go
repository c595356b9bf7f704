package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// memStore is an archive in a store (Local false), in memory; opens
// counts the opens of each file.
type memStore struct {
	files    map[string][]byte
	opens    map[string]int
	failRead string // a file whose reads fail half way
}

func (s *memStore) String() string          { return "mem://a/" }
func (s *memStore) Path(name string) string { return "mem://a/" + name }
func (s *memStore) Local() bool             { return false }

func (s *memStore) ReadFile(_ context.Context, name string) ([]byte, error) {
	b, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return b, nil
}

func (s *memStore) List(_ context.Context, sub string) (map[string]bool, error) {
	names := map[string]bool{}
	for k := range s.files {
		if path.Dir(k) == sub || sub == "" && !strings.Contains(k, "/") {
			names[path.Base(k)] = true
		}
	}
	return names, nil
}

func (s *memStore) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	b, err := s.ReadFile(ctx, name)
	if err != nil {
		return nil, err
	}
	s.opens[name]++
	if name == s.failRead {
		return io.NopCloser(io.MultiReader(bytes.NewReader(b[:len(b)/2]), iotest.ErrReader(errors.New("connection reset")))), nil
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// storeOf is the archive in dir as a memStore.
func storeOf(t testing.TB, dir string) *memStore {
	t.Helper()
	s := &memStore{files: map[string][]byte{}, opens: map[string]int{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s.files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlanReadStore: a store's archive is planned as the same DIR is;
// the parts open through the store, only the files picked are opened
// (once, to check them), and a damaged or missing one, or one listed as
// not complete, is refused by its name in the store.
func TestPlanReadStore(t *testing.T) {
	dir, m := fakeArchive(t, 5)
	for _, r := range []ReadRange{{}, {StartGTID: "0-1-25"}, {StartFile: "binlog.000004"}, {StopFile: "binlog.000002"}} {
		want, err := PlanRead(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		st := storeOf(t, dir)
		got, err := PlanReadStore(context.Background(), st, r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if names(got) != names(want) || got.More != want.More || got.Open || len(got.Parts) != len(want.Parts) {
			t.Fatalf("%+v: %s (more %v), want %s", r, names(got), got.More, names(want))
		}
		for i, p := range got.Parts {
			if p.Open == nil || p.Path != "mem://a/"+filepath.Base(want.Files[i]) || p.Name != want.Parts[i].Name {
				t.Errorf("%+v: part %+v", r, p)
			}
		}
		for _, e := range m.Files {
			picked := strings.Contains(names(got), e.Name)
			if n := st.opens[e.Name]; picked != (n == 1) || n > 1 {
				t.Errorf("%+v: %s opened %d times (picked: %v)", r, e.Name, n, picked)
			}
		}
	}

	st := storeOf(t, dir)
	st.files["binlog.000002"] = append([]byte("x"), st.files["binlog.000002"][1:]...)
	if _, err := PlanReadStore(context.Background(), st, ReadRange{}); err == nil || !strings.Contains(err.Error(), "the archive's mem://a/binlog.000002 is damaged") {
		t.Errorf("damaged: %v", err)
	}
	st.failRead = "binlog.000002"
	if _, err := PlanReadStore(context.Background(), st, ReadRange{}); err == nil || !strings.Contains(err.Error(), "cannot read mem://a/binlog.000002 to check it: connection reset") || strings.Contains(err.Error(), "damaged") {
		t.Errorf("a read error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a signal while the file is checked
	if _, err := PlanReadStore(ctx, st, ReadRange{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	delete(st.files, "binlog.000002")
	if _, err := PlanReadStore(context.Background(), st, ReadRange{}); err == nil || !strings.Contains(err.Error(), "lacks binlog.000002, which its manifest lists") {
		t.Errorf("missing: %v", err)
	}
	m.Files[4].Complete = false
	writeManifest(t, dir, m)
	if _, err := PlanReadStore(context.Background(), storeOf(t, dir), ReadRange{}); err == nil || !strings.Contains(err.Error(), "lists binlog.000005 as not complete") {
		t.Errorf("open file: %v", err)
	}
	if _, err := PlanReadStore(context.Background(), &memStore{files: map[string][]byte{}}, ReadRange{}); err == nil || !strings.Contains(err.Error(), "holds no archive of binlogcdc") {
		t.Errorf("no manifest: %v", err)
	}
}

// TestBucketManifest: the store's manifest lists the files uploaded, up
// to the first one pending; those expired after their upload as there,
// one expired before as expired; the next history only when every file
// is listed; no upload bookkeeping.
func TestBucketManifest(t *testing.T) {
	f := func(name string, complete, uploaded, expired bool) *FileEntry {
		return &FileEntry{Name: name, Complete: complete, Uploaded: uploaded, Expired: expired, Parts: true, UploadedUpto: 7, Stored: name + ".zst"}
	}
	m := &Manifest{Format: 1, Next: "history-2", Files: []*FileEntry{
		f("binlog.000001", true, false, true), // expired before --upload
		f("binlog.000002", true, true, true),  // uploaded, then expired here
		f("binlog.000003", true, true, false),
		f("binlog.000004", true, false, false), // pending
		f("binlog.000005", false, false, false),
	}}
	bm := bucketManifest(m)
	var got []string
	for _, e := range bm.Files {
		got = append(got, fmt.Sprintf("%s expired=%v", e.Name, e.Expired))
		if e.Uploaded || e.Parts || e.UploadedUpto != 0 {
			t.Errorf("%s keeps upload bookkeeping: %+v", e.Name, e)
		}
	}
	if want := "binlog.000001 expired=true,binlog.000002 expired=false,binlog.000003 expired=false"; strings.Join(got, ",") != want || bm.Next != "" {
		t.Errorf("%s (next %q), want %s", strings.Join(got, ","), bm.Next, want)
	}
	if !m.Files[1].Expired || !m.Files[0].Parts {
		t.Error("bucketManifest changed the manifest")
	}
	m.Files = m.Files[:3]
	if bm := bucketManifest(m); len(bm.Files) != 3 || bm.Next != "history-2" {
		t.Errorf("every file uploaded: %d files, next %q", len(bm.Files), bm.Next)
	}
	b, _ := json.Marshal(bucketManifest(m))
	if _, err := parseManifest(b, "x"); err != nil {
		t.Error(err)
	}
}

// FuzzPlanReadStore: any manifests a bucket holds (the first history's
// and a second's) are read, or refused with an error; never a panic.
func FuzzPlanReadStore(f *testing.F) {
	dir, m := fakeArchive(f, 3)
	good, _ := os.ReadFile(filepath.Join(dir, manifestName))
	m.Next = "history-2"
	next, _ := json.Marshal(m)
	h2, _ := json.Marshal(&Manifest{Format: 1, Switch: &Switch{PrevFile: "binlog.000002", PrevEnd: 40, After: "0-1-15"}, Files: m.Files[:1]})
	f.Add(good, []byte(nil), "0-1-15")
	f.Add(next, h2, "")
	f.Add([]byte(`{"format":1,"files":[null]}`), []byte(nil), "")
	f.Add([]byte(`{"format":1,"next":"..","files":[{"name":"binlog.000001","complete":true}]}`), []byte(nil), "")
	f.Fuzz(func(t *testing.T, top, second []byte, gtid string) {
		st := storeOf(t, dir)
		st.files[manifestName] = top
		if second != nil {
			for _, n := range []string{"binlog.000001", "binlog.000002"} {
				st.files["history-2/"+n] = st.files[n]
			}
			st.files["history-2/"+manifestName] = second
		}
		p, err := PlanReadStore(context.Background(), st, ReadRange{StartGTID: gtid})
		if err == nil && !p.Empty && len(p.Files) == 0 {
			t.Fatal("a plan with no file and not empty")
		}
	})
}
