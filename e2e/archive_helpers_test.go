package e2e

// Helpers of the archive tests (archive_test.go): running 'binlogcdc
// archive', and comparing the archive with the server's own binlog files.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arStart starts 'binlogcdc archive args...' (stdout and stderr in files
// in dir named after tag).
func arStart(t testing.TB, dir, tag string, args ...string) *stRun {
	t.Helper()
	return stStartWith(t, dir, tag, func(c *exec.Cmd) {
		c.Args = append([]string{c.Args[0], "archive"}, c.Args[2:]...)
	}, args...)
}

// arManifest is the part of binlogcdc-archive.json the tests read.
type arManifest struct {
	Source string `json:"source"`
	Files  []struct {
		Name      string `json:"name"`
		Size      uint64 `json:"size"`
		Complete  bool   `json:"complete"`
		End       string `json:"end"`
		SHA256    string `json:"sha256"`
		Sum       string `json:"sum"`
		FirstGTID string `json:"first_gtid"`
		LastGTID  string `json:"last_gtid"`
		FirstTime string `json:"first_time"`
		LastTime  string `json:"last_time"`
	} `json:"files"`
}

func arReadManifest(t testing.TB, dir string) *arManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := &arManifest{}
	if err := json.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// arServerFiles returns the server's binlog file names, oldest first.
func arServerFiles(t testing.TB, srv *testserver.Server) []string {
	t.Helper()
	var names []string
	for _, p := range srv.BinlogFiles(t) {
		names = append(names, filepath.Base(p))
	}
	return names
}

// arDiff compares the archive in dir with the server's binlog files from
// the archive's first file on: every server file there but the newest
// must be archived whole, byte for byte; the newest archived file must be
// a prefix of the server's (all of it when whole). It returns "" when
// they agree, else what differs. Files the server purged are compared
// with want, the server's bytes saved before (nil: not compared).
func arDiff(srv *testserver.Server, dir string, whole bool, saved map[string][]byte) string {
	data, err := os.ReadFile(filepath.Join(srv.Dir, "binlog.index"))
	if err != nil {
		return err.Error()
	}
	var server []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		server = append(server, filepath.Base(strings.TrimSpace(l)))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var archived []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "binlog.0") {
			archived = append(archived, e.Name())
		}
	}
	if len(archived) == 0 {
		return "no file archived yet"
	}
	i := 0
	for i < len(server) && server[i] != archived[0] {
		i++
	}
	if i == len(server) {
		// The archive starts before the server's oldest file.
		for len(archived) > 0 && archived[0] < server[0] {
			if want, ok := saved[archived[0]]; ok {
				got, _ := os.ReadFile(filepath.Join(dir, archived[0]))
				if !bytes.Equal(got, want) {
					return archived[0] + " differs from the server's copy saved before it was purged"
				}
			}
			archived = archived[1:]
		}
		i = 0
	}
	want := server[i:]
	if len(archived) > len(want) {
		return fmt.Sprintf("the archive holds %v, the server only %v", archived, want)
	}
	if whole && len(archived) != len(want) {
		return fmt.Sprintf("the archive holds %v, the server %v", archived, want)
	}
	for j, name := range archived {
		if name != want[j] {
			return fmt.Sprintf("archived file %d is %s, the server's %s", j, name, want[j])
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err.Error()
		}
		srvb, err := os.ReadFile(filepath.Join(srv.Dir, name))
		if err != nil {
			return err.Error()
		}
		last := j == len(archived)-1
		switch {
		case !last || (whole && j == len(want)-1):
			if !bytes.Equal(got, srvb) {
				return fmt.Sprintf("%s: archived %d bytes, the server's %d; first difference at %d", name, len(got), len(srvb), firstByteDiff(got, srvb))
			}
		default:
			// The archive's copy is open: its in-use flag (the
			// FORMAT_DESCRIPTION_EVENT's flags, at 21) is set, while the
			// server may have closed its file since.
			if len(got) > 21 && len(srvb) > 21 {
				got, srvb = bytes.Clone(got), bytes.Clone(srvb)
				got[21] &^= 1
				srvb[21] &^= 1
			}
			if !bytes.HasPrefix(srvb, got) {
				return fmt.Sprintf("%s: archived %d bytes are not a prefix of the server's %d; first difference at %d", name, len(got), len(srvb), firstByteDiff(got, srvb))
			}
		}
	}
	return ""
}

func firstByteDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// arWaitWhole waits until the archive holds all of the server's binlog.
func arWaitWhole(t testing.TB, r *stRun, srv *testserver.Server, dir string) {
	t.Helper()
	var last string
	stPoll(t, 2*time.Minute, r, "the archive to hold all of the server's binlog", func() bool {
		last = arDiff(srv, dir, true, nil)
		return last == ""
	})
}

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

// arSumOK reports whether b has the checksum a manifest gives: sum
// ("xxh3-64:HEX"), or else sha (SHA-256, hex).
func arSumOK(b []byte, sha, sum string) bool {
	if sum != "" {
		return sum == fmt.Sprintf("xxh3-64:%016x", xxh3.Hash(b))
	}
	s := sha256.Sum256(b)
	return sha != "" && sha == hex.EncodeToString(s[:])
}

// arDiffEnd is arDiff for an archive that stopped (--stop-at-end, or
// stopped once whole): the server's files must all be archived, the
// newest as a prefix, since the server may have logged more since (such
// as MariaDB's BINLOG_CHECKPOINT_EVENT, written in the background after a
// rotation).
func arDiffEnd(srv *testserver.Server, dir string) string {
	if d := arDiff(srv, dir, false, nil); d != "" {
		return d
	}
	files, _ := os.ReadDir(dir)
	data, _ := os.ReadFile(filepath.Join(srv.Dir, "binlog.index"))
	newest := filepath.Base(strings.TrimSpace(string(data[strings.LastIndexByte(strings.TrimSpace(string(data)), '\n')+1:])))
	if _, err := os.Stat(filepath.Join(dir, newest)); err != nil {
		return fmt.Sprintf("the archive lacks the server's newest file %s (it holds %d entries)", newest, len(files))
	}
	return ""
}
