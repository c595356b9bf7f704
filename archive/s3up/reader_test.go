package s3up

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/zeebo/xxh3"
)

// fakeStore starts gofakes3 with the bucket "binlogs" and sets the
// credentials in the environment.
func fakeStore(t testing.TB) (*s3mem.Backend, string) {
	t.Helper()
	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(back).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "binlogcdc-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
	t.Setenv("AWS_REGION", "us-east-1")
	return back, srv.URL
}

func put(t testing.TB, tg *Target, key string, b []byte) {
	t.Helper()
	if err := tg.PutSection(context.Background(), key, bytes.NewReader(b), 0, int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// TestReader: objects read whole or streamed, listed one level deep, a
// missing one is fs.ErrNotExist, a bucket that is not there says so, and
// an object replaced after it was first opened (checked) is refused the
// second time rather than read.
func TestReader(t *testing.T) {
	_, url := fakeStore(t)
	ctx := context.Background()
	tg, err := New("s3://binlogs/db1", url)
	if err != nil {
		t.Fatal(err)
	}
	put(t, tg, "binlogcdc-archive.json", []byte(`{"format":1}`))
	put(t, tg, "binlog.000001.zst", []byte("one"))
	put(t, tg, "history-2/binlog.000007", []byte("seven"))
	r, err := NewReader("s3://binlogs/db1/", url)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile(ctx, "binlogcdc-archive.json"); err != nil || string(b) != `{"format":1}` {
		t.Fatalf("%q %v", b, err)
	}
	names, err := r.List(ctx, "")
	if err != nil || len(names) != 2 || !names["binlog.000001.zst"] || !names["binlogcdc-archive.json"] {
		t.Errorf("List: %v %v", names, err)
	}
	if names, err := r.List(ctx, "history-2"); err != nil || len(names) != 1 || !names["binlog.000007"] {
		t.Errorf("List history-2: %v %v", names, err)
	}
	if _, err := r.Open(ctx, "binlog.000002"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://binlogs/db1/binlog.000002") {
		t.Errorf("missing: %v", err)
	}
	rc, err := r.Open(ctx, "binlog.000001.zst")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); string(b) != "one" {
		t.Errorf("%q", b)
	}
	rc.Close()
	put(t, tg, "binlog.000001.zst", []byte("ONE"))
	if _, err := r.Open(ctx, "binlog.000001.zst"); err == nil || !strings.Contains(err.Error(), "s3://binlogs/db1/binlog.000001.zst was replaced since it was checked") {
		t.Errorf("replaced: %v", err)
	}
	nb, _ := NewReader("s3://nosuch/p", url)
	if _, err := nb.ReadFile(ctx, "binlogcdc-archive.json"); err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "the bucket nosuch does not exist") {
		t.Errorf("no bucket: %v", err)
	}
}

// BenchmarkCheckThenRead: what a read does with one 32 MiB file before
// and while it outputs it: a pass that hashes it (the check), then a
// pass that reads it. "s3-2get": two GETs from the fake store (what read
// s3:// does); "s3-spool": one GET copied to a temporary file while it
// is hashed, then the file read (the alternative); "dir": two passes
// over a local file (read DIR, page cache). MB/s are of the file.
func BenchmarkCheckThenRead(b *testing.B) {
	data := make([]byte, 32<<20)
	rand.New(rand.NewSource(1)).Read(data)
	_, url := fakeStore(b)
	tg, _ := New("s3://binlogs/db1", url)
	put(b, tg, "f", data)
	tmp := b.TempDir()
	path := filepath.Join(tmp, "f")
	os.WriteFile(path, data, 0o644)
	r, _ := NewReader("s3://binlogs/db1", url)
	get := func() (io.ReadCloser, error) { return r.Open(context.Background(), "f") }
	file := func() (io.ReadCloser, error) { return os.Open(path) }
	pass := func(b *testing.B, open func() (io.ReadCloser, error), w io.Writer) {
		rc, err := open()
		if err != nil {
			b.Fatal(err)
		}
		defer rc.Close()
		if n, err := io.Copy(w, rc); err != nil || n != int64(len(data)) {
			b.Fatal(n, err)
		}
	}
	b.Run("s3-2get", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			pass(b, get, xxh3.New())
			pass(b, get, io.Discard)
		}
	})
	b.Run("s3-spool", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			f, err := os.CreateTemp(tmp, "spool-")
			if err != nil {
				b.Fatal(err)
			}
			pass(b, get, io.MultiWriter(f, xxh3.New()))
			f.Close()
			pass(b, func() (io.ReadCloser, error) { return os.Open(f.Name()) }, io.Discard)
			os.Remove(f.Name())
		}
	})
	b.Run("dir", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			pass(b, file, xxh3.New())
			pass(b, file, io.Discard)
		}
	})
}
