package e2e

// binlogcdc read s3://bucket/prefix and recover s3://…: an archive read
// from the store 'archive --upload' sends to (gofakes3, in this
// process), with the archive's directory gone.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// s3Gets counts the GETs of each object (not the listings) a fake store
// serves.
type s3Gets struct {
	mu sync.Mutex
	n  map[string]int
	h  http.Handler
}

func (g *s3Gets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.RawQuery == "" {
		g.mu.Lock()
		g.n[r.URL.Path]++
		g.mu.Unlock()
	}
	g.h.ServeHTTP(w, r)
}

func (g *s3Gets) take() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.n
	g.n = map[string]int{}
	return n
}

// TestArchiveReadS3: an archive of several rotated files, compressed and
// uploaded, then its directory removed: read s3://… gives what read DIR
// gave (JSON lines, --format sql, --start-gtid, which downloads none of
// the files before the start), --to replays it into a fresh server that
// then equals the source (HEX of every column, CHECKSUM TABLE), recover
// s3://… rebuilds a dropped table as from DIR, and a damaged object, a
// missing one, and a prefix without an archive are refused by name with
// nothing written.
func TestArchiveReadS3(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 20, 6)
	srv.Exec(t, "CREATE TABLE db.u (id INT PRIMARY KEY, w VARCHAR(20))", "INSERT INTO db.u VALUES (1, 'a'), (2, 'b')")
	srv.FlushLogs(t)
	arWrite(t, srv, 20, 12, 6)
	srv.Exec(t, "DROP TABLE db.u")
	srv.FlushLogs(t) // the file left open holds no transaction: the bucket has every one

	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	gets := &s3Gets{n: map[string]int{}, h: gofakes3.New(back).Server()}
	store := httptest.NewServer(gets)
	defer store.Close()
	env := []string{"AWS_ACCESS_KEY_ID=binlogcdc-test", "AWS_SECRET_ACCESS_KEY=s3cr3t-never-printed", "AWS_REGION=us-east-1"}
	dir := filepath.Join(t.TempDir(), "arch")
	if _, errs, code := runCLI(t, env, "archive", "--source", srv.DSN(), "--dir", dir, "--from", "earliest", "--stop-at-end",
		"--compress", "zstd", "--upload", "s3://binlogs/db1", "--upload-endpoint", store.URL); code != 0 {
		t.Fatalf("archive: exit %d\n%s", code, errs)
	}
	m := arReadManifest(t, dir)
	if len(m.Files) < 5 {
		t.Fatalf("want several files: %+v", m.Files)
	}
	// The bucket's manifest lists the files uploaded: not the open one.
	obj, err := back.GetObject("binlogs", "db1/binlogcdc-archive.json", nil)
	if err != nil {
		t.Fatalf("no manifest in the bucket: %v", err)
	}
	bm, _ := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	last := m.Files[len(m.Files)-1].Name
	if !bytes.Contains(bm, []byte(`"`+m.Files[len(m.Files)-2].Name+`"`)) || bytes.Contains(bm, []byte(`"`+last+`"`)) || bytes.Contains(bm, []byte(`"uploaded"`)) {
		t.Errorf("the bucket's manifest:\n%s", bm)
	}
	gtid := m.Files[2].LastGTID

	run := func(args ...string) ([]byte, string, int) {
		t.Helper()
		for i, a := range args {
			if a == "S3" {
				args = append(append(append([]string(nil), args[:i]...), "s3://binlogs/db1", "--s3-endpoint", store.URL), args[i+1:]...)
				break
			}
		}
		out, errs, code := runCLI(t, env, args...)
		if strings.Contains(errs, "s3cr3t") {
			t.Errorf("%v printed the secret:\n%s", args, errs)
		}
		return out, errs, code
	}
	ok := func(args ...string) []byte {
		t.Helper()
		out, errs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		return out
	}
	want := ok("read", dir)
	wantSQL := ok("read", dir, "--format", "sql")
	wantBack := ok("read", dir, "--flashback")
	wantGTID := ok("read", dir, "--start-gtid", gtid)
	wantU := ok("recover", "--table", "db.u", dir)
	if len(want) == 0 || len(wantGTID) == 0 || len(wantGTID) >= len(want) || !bytes.Contains(wantU, []byte("'b'")) {
		t.Fatalf("read DIR: %d bytes, from %s %d; recover:\n%s", len(want), gtid, len(wantGTID), wantU)
	}
	// Expired here by --keep-size after their upload: the files stay in
	// the bucket, and its manifest lists them as before.
	if _, errs, code := runCLI(t, env, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end",
		"--compress", "zstd", "--upload", "s3://binlogs/db1", "--upload-endpoint", store.URL, "--keep-size", "1"); code != 0 || !strings.Contains(errs, "expired ") {
		t.Fatalf("archive --keep-size 1: exit %d\n%s", code, errs)
	}
	obj, err = back.GetObject("binlogs", "db1/binlogcdc-archive.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	bm2, _ := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	if !bytes.Equal(bm2, bm) || !arKeepManifest(t, dir)[0].Expired {
		t.Errorf("the bucket's manifest after the local expiry:\n%s", bm2)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}

	gets.take()
	stSameOutput(t, "read s3://", ok("read", "S3"), want)
	// Each file twice: checked, then read (no more).
	all := gets.take()
	for _, f := range m.Files[:len(m.Files)-1] {
		if n := all["/binlogs/db1/"+f.Name+".zst"]; n != 2 {
			t.Errorf("%s: %d GETs, want 2 (check, read)", f.Name, n)
		}
	}
	stSameOutput(t, "read s3:// --format sql", ok("read", "S3", "--format", "sql"), wantSQL)
	stSameOutput(t, "read s3:// --flashback", ok("read", "S3", "--flashback"), wantBack)
	gets.take()
	stSameOutput(t, "read s3:// --start-gtid", ok("read", "S3", "--start-gtid", gtid), wantGTID)
	n := gets.take()
	for i, f := range m.Files[:len(m.Files)-1] {
		got := n["/binlogs/db1/"+f.Name+".zst"]
		if i <= 2 && got != 0 || i > 2 && got == 0 {
			t.Errorf("--start-gtid %s (the last of %s): %s downloaded %d times", gtid, m.Files[2].Name, f.Name, got)
		}
	}
	stSameOutput(t, "recover s3://", ok("recover", "--table", "db.u", "S3"), wantU)

	// --to: a fresh server gets what the source has.
	dst := testserver.Start(t, testserver.Options{})
	ok("read", "S3", "--to", dst.DSN()+"/")
	if got, want := pitrState(t, dst), pitrState(t, srv); got != want {
		t.Errorf("the target after read s3:// --to:\n%s\nthe source:\n%s", got, want)
	}

	// Refused, by name, with nothing written.
	if out, errs, code := run("read", "s3://binlogs/nothing", "--s3-endpoint", store.URL); code == 0 || len(out) > 0 || !strings.Contains(errs, "s3://binlogs/nothing/ holds no archive of binlogcdc") {
		t.Errorf("no archive: exit %d, %d bytes\n%s", code, len(out), errs)
	}
	key := "db1/" + m.Files[1].Name + ".zst"
	obj, err = back.GetObject("binlogs", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	if _, err := back.PutObject("binlogs", key, map[string]string{}, bytes.NewReader(bad), int64(len(bad)), nil); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run("read", "S3")
	t.Logf("damaged:\n%s", errs)
	if code == 0 || len(out) > 0 || !strings.Contains(errs, "s3://binlogs/"+key+" is damaged") {
		t.Errorf("damaged: exit %d, %d bytes\n%s", code, len(out), errs)
	}
	if _, err := back.DeleteObject("binlogs", key); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := run("read", "S3"); code == 0 || len(out) > 0 || !strings.Contains(errs, "lacks "+m.Files[1].Name+", which its manifest lists") {
		t.Errorf("missing: exit %d, %d bytes\n%s", code, len(out), errs)
	}
}

// TestArchiveReadS3Failover: an archive with a later server history
// (history-2, after a failover), uploaded: the bucket holds both
// histories' manifests, and read s3://… (also from the switch's GTID
// position) gives what read DIR gave, every transaction of the promoted
// replica's binlog once.
func TestArchiveReadS3Failover(t *testing.T) {
	a, r := foPair(t, true)
	arWrite(t, a, 0, 12, 5)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "arch")
	run := arStart(t, tmp, "a", "--source", a.DSN(), "--dir", dir, "--heartbeat", "1s")
	arWaitWhole(t, run, a, dir)
	run.kill9()
	arWrite(t, a, 12, 6, 3) // not archived before A dies
	foCatchUp(t, a, r)
	foPromote(t, a, r)
	arWrite(t, r, 18, 8, 4)
	r.FlushLogs(t)

	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	store := httptest.NewServer(gofakes3.New(back).Server())
	defer store.Close()
	env := []string{"AWS_ACCESS_KEY_ID=binlogcdc-test", "AWS_SECRET_ACCESS_KEY=s3cr3t-never-printed", "AWS_REGION=us-east-1"}
	if _, errs, code := runCLI(t, env, "archive", "--source", r.DSN(), "--dir", dir, "--stop-at-end",
		"--upload", "s3://binlogs/db1", "--upload-endpoint", store.URL); code != 0 {
		t.Fatalf("archive: exit %d\n%s", code, errs)
	}
	for _, key := range []string{"db1/binlogcdc-archive.json", "db1/history-2/binlogcdc-archive.json"} {
		if _, err := back.HeadObject("binlogs", key); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	var m struct {
		Switch struct {
			After string `json:"after"`
		} `json:"switch"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "history-2", "binlogcdc-archive.json"))
	if err := json.Unmarshal(b, &m); err != nil || m.Switch.After == "" {
		t.Fatalf("history-2's switch: %v\n%s", err, b)
	}
	want := arRun(t, "read", "--ddl", dir)
	wantAfter := arRun(t, "read", "--ddl", dir, "--start-gtid", m.Switch.After)
	foSame(t, "read DIR across the failover", want, stRead(t, r, "--ddl"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	s3 := func(args ...string) []byte {
		t.Helper()
		out, errs, code := runCLI(t, env, append([]string{"read", "--ddl", "s3://binlogs/db1", "--s3-endpoint", store.URL}, args...)...)
		if code != 0 {
			t.Fatalf("read s3:// %v: exit %d\n%s", args, code, errs)
		}
		if !strings.Contains(errs, "across 2 server histories") && len(args) == 0 {
			t.Errorf("stderr:\n%s", errs)
		}
		return out
	}
	stSameOutput(t, "read s3:// across the failover", s3(), want)
	stSameOutput(t, "read s3:// --start-gtid at the switch", s3("--start-gtid", m.Switch.After), wantAfter)
}
