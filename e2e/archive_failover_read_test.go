package e2e

// Reading an archive across a failover in one run: read DIR, its start
// and stop bounds on either side of the switch, and a replay resumed on
// either side.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arRun runs binlogcdc and returns its stdout; a non-zero exit fails.
func arRun(t *testing.T, args ...string) []byte {
	t.Helper()
	out, errs, code := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, errs)
	}
	return out
}

// arCrossFailover checks 'read DIR' on an archive with a history-2 (r:
// the promoted replica, whose binlog holds every transaction): one run
// reads what r's binlog holds; it is byte for byte the two halves read
// separately (--stop-position at the switch point; --start-position
// history-2/FILE:POS, or --start-gtid at the switch's GTID position);
// and a replay stopped at the switch, then inside history 2, then run to
// the end (each run resuming from the target's checkpoint) leaves the
// target equal to r. recoverU: recover DIR rebuilds db.u, created before
// the switch and dropped after it, as from r's binlog.
func arCrossFailover(t *testing.T, r *testserver.Server, dir string, recoverU bool) {
	t.Helper()
	segs, err := archive.ReadList(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sw1, sw2 archive.Segment
	for i := 1; i < len(segs); i++ {
		if segs[i-1].History == 1 && segs[i].History == 2 {
			sw1, sw2 = segs[i-1], segs[i]
		}
	}
	if sw2.History != 2 || sw1.To == 0 {
		t.Fatalf("no switch in %+v", segs)
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
	stop := fmt.Sprintf("%s:%d", sw1.Name, sw1.To)
	start2 := fmt.Sprintf("history-2/%s:%d", sw2.Name, sw2.From)

	whole := arRun(t, "read", "--ddl", dir)
	foSame(t, "read DIR across the failover", whole, stRead(t, r, "--ddl"))
	first := arRun(t, "read", "--ddl", dir, "--stop-position", stop)
	second := arRun(t, "read", "--ddl", dir, "--start-position", start2)
	if len(first) == 0 || len(second) == 0 {
		t.Fatalf("a half is empty: %d and %d bytes", len(first), len(second))
	}
	stSameOutput(t, "read DIR = the two halves", whole, append(append([]byte(nil), first...), second...))
	stSameOutput(t, "--start-gtid at the switch", arRun(t, "read", "--ddl", dir, "--start-gtid", m.Switch.After), second)
	if !bytes.Contains(second, []byte(`"file":"history-2/`+sw2.Name+`"`)) || bytes.Contains(first, []byte(`history-2/`)) {
		t.Errorf("history 2's positions are not named history-2/%s:\n%s", sw2.Name, firstLine(second))
	}

	if recoverU {
		// recover DIR: db.u, created before the switch and dropped after.
		// (Its comments name positions: the archive's, the replica's.)
		got := arRun(t, "recover", "--table", "db.u", dir)
		stSameOutput(t, "recover DIR across the failover", arNoComments(got), arNoComments(arRun(t, "recover", "--table", "db.u", r.BinlogIndex())))
		if !bytes.Contains(got, []byte("'c'")) || !bytes.Contains(got, []byte("'d'")) {
			t.Errorf("recover DIR:\n%s", got)
		}
	}

	dst := testserver.Start(t, testserver.Options{})
	to := dst.DSN() + "/"
	arRun(t, "read", dir, "--to", to, "--stop-position", stop)
	arRun(t, "read", dir, "--to", to, "--stop-position", fmt.Sprintf("history-2/%s:%d", sw2.Name, sw2.From+1))
	arRun(t, "read", dir, "--to", to)
	if got, want := pitrState(t, dst), pitrState(t, r); got != want {
		t.Errorf("the target after a replay across the failover:\n%s\nthe replica:\n%s", got, want)
	}
	// Once more: nothing is applied twice.
	arRun(t, "read", dir, "--to", to)
	if got, want := pitrState(t, dst), pitrState(t, r); got != want {
		t.Errorf("the target after a second replay:\n%s\nthe replica:\n%s", got, want)
	}
}

// arNoComments drops SQL comment lines.
func arNoComments(b []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("--")) {
			out = append(out, l...)
		}
	}
	return out
}
