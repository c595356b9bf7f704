package e2e

// binlogcdc archive --keep-days, --keep-size: the oldest complete files
// expire; the open file and the newest never do.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

type arKeepEntry struct {
	Name     string `json:"name"`
	Size     uint64 `json:"size"`
	Complete bool   `json:"complete"`
	Expired  bool   `json:"expired"`
	LastTime string `json:"last_time"`
}

func arKeepManifest(t *testing.T, dir string) []arKeepEntry {
	t.Helper()
	var m struct {
		Files []arKeepEntry `json:"files"`
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

// arKeptRead checks that reading the archive (ReadList) gives what the
// server's binlog holds from the archive's oldest kept file on.
func arKeptRead(t *testing.T, srv *testserver.Server, dir string, files []arKeepEntry) {
	t.Helper()
	first := ""
	for _, f := range files {
		if !f.Expired {
			first = f.Name
			break
		}
	}
	want, errs, code := runCLI(t, nil, "read", "--ddl", filepath.Join(srv.Dir, first))
	if code != 0 {
		t.Fatalf("read: exit %d: %s", code, errs)
	}
	stSameOutput(t, "the archive's kept files", arReadArchive(t, dir), want)
}

// TestArchiveKeep writes transactions dated ten days back (SET
// timestamp), then current ones; --keep-days 5 expires the old files
// only, --keep-size the oldest until the archive fits, never the newest
// complete file or the open one; an expired file a kill left in DIR is
// removed at the restart; what is kept reads as the server's binlog.
func TestArchiveKeep(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "SET timestamp = UNIX_TIMESTAMP() - 864000")
	arWrite(t, srv, 0, 16, 4)
	srv.Exec(t, "SET timestamp = DEFAULT")
	srv.FlushLogs(t)
	arWrite(t, srv, 16, 12, 4)
	tmp := t.TempDir()

	dir := filepath.Join(tmp, "days")
	errs := arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", dir, "--stop-at-end", "--keep-days", "5")
	files := arKeepManifest(t, dir)
	limit := time.Now().Add(-5 * 24 * time.Hour)
	n := 0
	for _, f := range files {
		ts, _ := time.Parse(time.RFC3339, f.LastTime)
		_, statErr := os.Stat(filepath.Join(dir, f.Name))
		switch {
		case f.Expired != ts.Before(limit):
			t.Errorf("%s: last event %s, expired %v", f.Name, f.LastTime, f.Expired)
		case f.Expired && !os.IsNotExist(statErr):
			t.Errorf("expired %s is still there (%v)", f.Name, statErr)
		case !f.Expired && statErr != nil:
			t.Errorf("kept %s: %v", f.Name, statErr)
		}
		if f.Expired {
			n++
		}
	}
	if n < 3 || !strings.Contains(errs, "(older than --keep-days)") {
		t.Fatalf("%d files expired; stderr:\n%s", n, errs)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "binlog.index"))
	if strings.Contains(string(idx), files[0].Name) {
		t.Errorf("the index lists the expired %s:\n%s", files[0].Name, idx)
	}
	arKeptRead(t, srv, dir, files)

	dir = filepath.Join(tmp, "size")
	arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", dir, "--stop-at-end")
	files = arKeepManifest(t, dir)
	var total uint64
	for _, f := range files {
		total += f.Size
	}
	limitSize := total / 2
	arWrite(t, srv, 28, 3, 0)
	errs = arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", dir, "--stop-at-end", "--keep-size", strconv.FormatUint(limitSize, 10))
	files = arKeepManifest(t, dir)
	total, n = 0, 0
	for i, f := range files {
		if f.Expired {
			n++
			if i > 0 && !files[i-1].Expired {
				t.Errorf("%s expired after a newer file was kept", f.Name)
			}
			continue
		}
		total += f.Size
	}
	if n == 0 || total > limitSize+files[len(files)-1].Size+files[len(files)-2].Size || !strings.Contains(errs, "larger than --keep-size") {
		t.Errorf("%d expired, %d bytes kept for --keep-size %d; stderr:\n%s", n, total, limitSize, errs)
	}
	// A kill between the manifest and the removal: the file comes back.
	for _, f := range files {
		if f.Expired {
			b, _ := os.ReadFile(filepath.Join(srv.Dir, f.Name))
			os.WriteFile(filepath.Join(dir, f.Name), b, 0o644)
			break
		}
	}
	arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", dir, "--stop-at-end")
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f.Name)); f.Expired && err == nil {
			t.Errorf("the expired %s is still there after a restart", f.Name)
		}
	}
	if d := arDiffEnd(srv, dir); d != "" && !strings.Contains(d, "the server only") {
		t.Log(d)
	}
	arKeptRead(t, srv, dir, files)
	arRefused(t, 2, []string{"--keep-size \"10XB\": want a size"}, "--source", srv.DSN(), "--dir", dir, "--keep-size", "10XB")
}
