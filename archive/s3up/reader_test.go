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

// BenchmarkFilePass is one pass over a 32 MiB file (hashed, as the
// checksum pass does) from the fake store (GET) and from a local file:
// a read of s3:// makes two passes per file (check, then read), a read
// of DIR two from the disk (or page cache).
func BenchmarkFilePass(b *testing.B) {
	data := make([]byte, 32<<20)
	rand.New(rand.NewSource(1)).Read(data)
	_, url := fakeStore(b)
	tg, _ := New("s3://binlogs/db1", url)
	put(b, tg, "f", data)
	path := filepath.Join(b.TempDir(), "f")
	os.WriteFile(path, data, 0o644)
	pass := func(b *testing.B, open func() (io.ReadCloser, error)) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			rc, err := open()
			if err != nil {
				b.Fatal(err)
			}
			h := xxh3.New()
			if n, err := io.Copy(h, rc); err != nil || n != int64(len(data)) {
				b.Fatal(n, err)
			}
			rc.Close()
		}
	}
	b.Run("s3", func(b *testing.B) {
		r, _ := NewReader("s3://binlogs/db1", url)
		pass(b, func() (io.ReadCloser, error) { return r.Open(context.Background(), "f") })
	})
	b.Run("file", func(b *testing.B) {
		pass(b, func() (io.ReadCloser, error) { return os.Open(path) })
	})
}
