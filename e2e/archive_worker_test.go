package e2e

// Compression, upload and expiry run beside the archiving (worker.go): a
// store that hangs or fails never holds back the live binlog's copy.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// storeGate wraps an S3 handler: while held, each PUT of a whole binlog
// file waits (and says so on blocked) until release; while failing,
// each such PUT gets a 500.
type storeGate struct {
	h       http.Handler
	held    atomic.Bool
	failing atomic.Bool
	blocked chan string
	mu      sync.Mutex
	release chan struct{}
}

func newStoreGate(h http.Handler) *storeGate {
	return &storeGate{h: h, blocked: make(chan string, 100), release: make(chan struct{})}
}

func (g *storeGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/binlog.") && !strings.Contains(r.URL.Path, ".part-") {
		if g.failing.Load() {
			http.Error(w, "<Error><Code>InternalError</Code></Error>", http.StatusInternalServerError)
			return
		}
		if g.held.Load() {
			g.mu.Lock()
			rel := g.release
			g.mu.Unlock()
			select {
			case g.blocked <- r.URL.Path:
			default:
			}
			select {
			case <-rel:
			case <-r.Context().Done():
				return
			}
		}
	}
	g.h.ServeHTTP(w, r)
}

// open lets the held PUTs go on, and the next ones too.
func (g *storeGate) open() {
	g.held.Store(false)
	g.mu.Lock()
	close(g.release)
	g.release = make(chan struct{})
	g.mu.Unlock()
}

type arWorkerEntry struct {
	Name         string `json:"name"`
	Complete     bool   `json:"complete"`
	Expired      bool   `json:"expired"`
	Uploaded     bool   `json:"uploaded"`
	Parts        bool   `json:"parts"`
	UploadedUpto int64  `json:"uploaded_upto"`
}

func arWorkerManifest(t *testing.T, dir string) []arWorkerEntry {
	t.Helper()
	var m struct {
		Files []arWorkerEntry `json:"files"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Files
}

// arAllUploaded reports whether every complete file is uploaded and
// expired (--keep-size 1; the open file stays, and the newest complete
// one when there is no open file).
func arAllUploaded(t *testing.T, dir string) bool {
	files := arWorkerManifest(t, dir)
	for i, f := range files {
		if f.Complete && (!f.Uploaded || f.Expired != (i < len(files)-1)) {
			return false
		}
	}
	return true
}

// TestArchiveUploadSlowStore: while the store holds an upload (it
// hangs), and then while it fails every upload, the archive goes on
// with the server's binlog (every file, the live one current) and
// expires nothing not uploaded; once the store works, every complete
// file is uploaded and then expired, without a restart.
func TestArchiveUploadSlowStore(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 6, 3)
	back := s3mem.New()
	if err := back.CreateBucket("binlogs"); err != nil {
		t.Fatal(err)
	}
	gate := newStoreGate(gofakes3.New(back).Server())
	gate.held.Store(true)
	store := httptest.NewServer(gate)
	defer store.Close()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "arch")
	env := []string{"AWS_ACCESS_KEY_ID=binlogcdc-test", "AWS_SECRET_ACCESS_KEY=s3cr3t-never-printed", "AWS_REGION=us-east-1"}
	r := stStartWith(t, tmp, "a", func(c *exec.Cmd) {
		c.Args = append([]string{c.Args[0], "archive"}, c.Args[2:]...)
		c.Env = append(os.Environ(), env...)
	}, "--source", srv.DSN(), "--dir", dir, "--heartbeat", "1s",
		"--upload", "s3://binlogs/db1", "--upload-endpoint", store.URL, "--keep-size", "1")
	defer r.kill9()
	select {
	case p := <-gate.blocked:
		t.Logf("the store holds %s", p)
	case <-time.After(2 * time.Minute):
		t.Fatalf("no upload reached the store; stderr:\n%s", r.errText())
	}
	current := func(what string) {
		t.Helper()
		stPoll(t, time.Minute, r, what, func() bool { return arDiff(srv, dir, true, nil) == "" })
		for _, f := range arWorkerManifest(t, dir) {
			if f.Expired && !f.Uploaded {
				t.Fatalf("%s expired before it was uploaded", f.Name)
			}
		}
	}
	arWrite(t, srv, 6, 9, 3)
	current("the archive to be the server's binlog while an upload hangs")

	gate.open()
	stPoll(t, time.Minute, r, "every complete file uploaded, the older ones expired", func() bool { return arAllUploaded(t, dir) })

	gate.failing.Store(true)
	arWrite(t, srv, 15, 6, 3)
	current("the archive to be the server's binlog while uploads fail")
	stPoll(t, time.Minute, r, "a failed upload reported", func() bool {
		e := r.errText()
		return strings.Contains(e, "is not uploaded (") && strings.Contains(e, "tried again in")
	})
	gate.failing.Store(false)
	stPoll(t, 2*time.Minute, r, "the files uploaded once the store works", func() bool { return arAllUploaded(t, dir) })
	if e := r.errText(); strings.Contains(e, "s3cr3t") {
		t.Errorf("stderr:\n%s", e)
	}
}
