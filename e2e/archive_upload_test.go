package e2e

// binlogcdc archive --upload s3://…: complete files sent to an
// S3-compatible store (gofakes3, in this process), checked, and only then
// expired.

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestArchiveUpload: with the store down, --keep-size expires nothing (no
// file is uploaded) and a warning says so; with it up, the restart
// compresses, uploads (each object the server's file once decompressed)
// and then expires every complete file (the open one stays). A file damaged
// while it waited is reported, and not uploaded. The secret key is
// in the environment only, and never printed.
func TestArchiveUpload(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 20, 5)
	dir := filepath.Join(t.TempDir(), "arch")
	env := []string{"AWS_ACCESS_KEY_ID=binlogcdc-test", "AWS_SECRET_ACCESS_KEY=s3cr3t-never-printed", "AWS_REGION=us-east-1"}
	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	store := httptest.NewServer(gofakes3.New(back).Server())
	defer store.Close()
	down := httptest.NewServer(nil)
	down.Close() // nothing listens there now

	run := func(endpoint string) string {
		t.Helper()
		_, errs, code := runCLI(t, env, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end",
			"--upload", "s3://binlogs/db1/", "--upload-endpoint", endpoint, "--keep-size", "1", "--compress", "zstd")
		if code != 0 || strings.Contains(errs, "s3cr3t") {
			t.Fatalf("exit %d; stderr:\n%s", code, errs)
		}
		return errs
	}
	errs := run(down.URL)
	if !strings.Contains(errs, "is not uploaded (") || strings.Contains(errs, "expired ") {
		t.Errorf("stderr:\n%s", errs)
	}
	for _, f := range arKeepManifest(t, dir) {
		if f.Expired {
			t.Errorf("%s expired before it was uploaded", f.Name)
		}
	}

	// A file damaged while it waited for its upload is found, not sent.
	z1 := filepath.Join(dir, "binlog.000001.zst")
	good, _ := os.ReadFile(z1)
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	os.WriteFile(z1, bad, 0o644)
	_, errs, code := runCLI(t, env, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end",
		"--upload", "s3://binlogs/db1/", "--upload-endpoint", store.URL, "--compress", "zstd")
	if code != 1 || !strings.Contains(errs, "the archive's "+z1+" is damaged: its XXH3-64 is") || !strings.Contains(errs, "it is not uploaded") {
		t.Errorf("exit %d; stderr:\n%s", code, errs)
	}
	if _, err := back.HeadObject("binlogs", "db1/binlog.000001.zst"); err == nil {
		t.Error("the damaged file was uploaded")
	}
	os.WriteFile(z1, good, 0o644)

	errs = run(store.URL)
	files := arKeepManifest(t, dir)
	for i, f := range files {
		if !f.Complete {
			continue
		}
		key := "db1/" + f.Name + ".zst"
		obj, err := back.GetObject("binlogs", key, nil)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		z, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		d, _ := zstd.NewReader(bytes.NewReader(z))
		plain, err := io.ReadAll(d)
		d.Close()
		want, _ := os.ReadFile(filepath.Join(srv.Dir, f.Name))
		if err != nil || !bytes.Equal(plain, want) {
			t.Errorf("%s: %d bytes decompressed (%v), the server's file %d", key, len(plain), err, len(want))
		}
		newest := i == len(files)-1 // the open file, or the newest complete one without it
		if f.Expired == newest {
			t.Errorf("%s: expired %v", f.Name, f.Expired)
		}
	}
	if !strings.Contains(errs, "uploaded ") || !strings.Contains(errs, "expired ") {
		t.Errorf("stderr:\n%s", errs)
	}
	_, errs, code = runCLI(t, env, "archive", "--source", srv.DSN(), "--dir", dir, "--upload", "http://binlogs/x")
	if code != 2 || !strings.Contains(errs, "want s3://bucket/prefix") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// s3Parts concatenates the objects under prefix (in key order) of bucket.
func s3Parts(t *testing.T, back *s3mem.Backend, bucket, prefix string) ([]byte, int) {
	t.Helper()
	p := gofakes3.NewPrefix(&prefix, nil)
	l, err := back.ListBucket(bucket, &p, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(l.Contents))
	for _, c := range l.Contents {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	var out []byte
	for _, k := range keys {
		obj, err := back.GetObject(bucket, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		out = append(out, b...)
	}
	return out, len(keys)
}

// TestArchiveUploadOpen: with --upload-open-every, the open file goes up
// in parts (NAME.part-OFFSET) as it grows: put end to end they are the
// server's open binlog file, byte for byte, once the archive caught up;
// again after more transactions, and after a kill -9 and a restart. Once
// the file is complete and uploaded whole, its parts are removed from
// the store, also when a kill left them (the manifest's "parts").
func TestArchiveUploadOpen(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 5, 0)
	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	store := httptest.NewServer(gofakes3.New(back).Server())
	defer store.Close()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "arch")
	env := []string{"AWS_ACCESS_KEY_ID=binlogcdc-test", "AWS_SECRET_ACCESS_KEY=s3cr3t-never-printed", "AWS_REGION=us-east-1"}
	start := func(tag string) *stRun {
		return stStartWith(t, tmp, tag, func(c *exec.Cmd) {
			c.Args = append([]string{c.Args[0], "archive"}, c.Args[2:]...)
			c.Env = append(os.Environ(), env...)
		}, "--source", srv.DSN(), "--dir", dir, "--heartbeat", "1s",
			"--upload", "s3://binlogs/db1", "--upload-endpoint", store.URL, "--upload-open-every", "100ms")
	}
	uploaded := func(r *stRun) {
		t.Helper()
		stPoll(t, time.Minute, r, "the parts of binlog.000001 to be the server's file", func() bool {
			want, _ := os.ReadFile(filepath.Join(srv.Dir, "binlog.000001"))
			got, _ := s3Parts(t, back, "binlogs", "db1/binlog.000001.part-")
			return bytes.Equal(got, want)
		})
	}
	r := start("a")
	uploaded(r)
	arWrite(t, srv, 5, 5, 0)
	uploaded(r)
	r.kill9()
	arWrite(t, srv, 10, 5, 0)
	r = start("b")
	uploaded(r)
	// At least two parts: the file went up as it grew. (A kill before the
	// manifest recorded a part makes the next run send that part again,
	// longer, under the same key: how many parts there are depends on
	// when the kill came.)
	_, n := s3Parts(t, back, "binlogs", "db1/binlog.000001.part-")
	if n < 2 {
		t.Errorf("%d parts; stderr:\n%s", n, r.errText())
	}
	// Once the file is complete and uploaded whole, its parts go.
	whole := func(r *stRun, what string) {
		t.Helper()
		stPoll(t, time.Minute, r, what, func() bool {
			_, n := s3Parts(t, back, "binlogs", "db1/binlog.000001.part-")
			got, _ := s3Parts(t, back, "binlogs", "db1/binlog.000001")
			want, _ := os.ReadFile(filepath.Join(srv.Dir, "binlog.000001"))
			f := arWorkerManifest(t, dir)[0]
			return n == 0 && bytes.Equal(got, want) && f.Uploaded && !f.Parts && f.UploadedUpto == 0
		})
	}
	srv.FlushLogs(t)
	whole(r, "binlog.000001 uploaded whole and its parts removed")
	// Parts left by a kill between the upload and their removal (the
	// manifest says so) are removed by the next start.
	r.kill9()
	for _, off := range []int{4, 900} {
		key := fmt.Sprintf("db1/binlog.000001.part-%012d", off)
		if _, err := back.PutObject("binlogs", key, nil, strings.NewReader("left"), 4, nil); err != nil {
			t.Fatal(err)
		}
	}
	mpath := filepath.Join(dir, "binlogcdc-archive.json")
	mb, _ := os.ReadFile(mpath)
	os.WriteFile(mpath, bytes.Replace(mb, []byte(`"uploaded": true`), []byte(`"uploaded": true, "parts": true`), 1), 0o644)
	if !arWorkerManifest(t, dir)[0].Parts {
		t.Fatal("could not mark binlog.000001's parts in the manifest")
	}
	r = start("c")
	whole(r, "the parts a kill left removed at the next start")
	r.kill9()
	if strings.Contains(r.errText(), "s3cr3t") {
		t.Errorf("stderr:\n%s", r.errText())
	}
}
