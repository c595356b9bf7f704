package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamXAPreparedAcrossRestart: an XA transaction prepared before a
// reconnect (a KILL of the dump thread) or a kill -9 and restart, and
// committed after it, is emitted at its XA COMMIT, once. Its changes are
// logged at XA PREPARE and held in memory until then: a reconnect used to
// start a new pipeline without them, and the checkpoint moved past the
// XA PREPARE, so that a restart never read them: both printed a warning
// and lost the committed transaction. Now the held changes survive a
// reconnect, and the checkpoint stays before the XA PREPARE while it is
// pending (a restart reads it again; -o is cut back to that checkpoint).
func TestStreamXAPreparedAcrossRestart(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE sx", "CREATE TABLE sx.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dir := t.TempDir()
	id := 0
	insert := func(v string) string {
		id++
		srv.Exec(t, fmt.Sprintf("INSERT INTO sx.t VALUES (%d, '%s')", id, v))
		return stLastGTID(t, srv)
	}
	for _, how := range []string{"reconnect", "kill9"} {
		cp, out := filepath.Join(dir, how+".cp.json"), filepath.Join(dir, how+".jsonl")
		args := []string{"--source", srv.DSN(), "--from", "now", "--checkpoint", cp, "--output", out}
		r := stStart(t, dir, how+"-0", nil, args...)
		stPoll(t, time.Minute, r, "the start point's checkpoint", func() bool {
			c, err := checkpoint.Load(cp)
			return err == nil && c != nil && r.ready()
		})
		start := stLoadCP(t, cp)
		first := insert("before")
		stPoll(t, time.Minute, r, "the first row", func() bool { return stHasGTID(out, first) })

		// Prepared on a session of its own, which then disconnects: the
		// transaction stays prepared, for XA COMMIT from another session.
		xid := "x-" + how
		xc := srv.Conn(t)
		id++
		for _, q := range []string{"XA START '" + xid + "'", fmt.Sprintf("INSERT INTO sx.t VALUES (%d, 'xa')", id), "XA END '" + xid + "'", "XA PREPARE '" + xid + "'"} {
			if _, err := xc.Execute(q); err != nil {
				t.Fatal(err)
			}
		}
		xc.Close()
		between := insert("between")
		stPoll(t, time.Minute, r, "the row after XA PREPARE", func() bool { return stHasGTID(out, between) })
		if how == "reconnect" {
			for _, th := range stDumpThreads(t, srv) {
				srv.Exec(t, "KILL "+th)
			}
			stPoll(t, time.Minute, r, "the reconnect", func() bool { return strings.Contains(r.errText(), "reconnecting") })
		} else {
			r.kill9()
			r = stStart(t, dir, how+"-1", nil, args...)
			stPoll(t, time.Minute, r, "the restart to connect", r.ready)
		}
		srv.Exec(t, "XA COMMIT '"+xid+"'")
		last := insert("after")
		stPoll(t, time.Minute, r, "the last row", func() bool { return stHasGTID(out, last) })
		r.signal(syscall.SIGTERM)
		stWant(t, r, 0, nil, []string{"not emitted"})
		got, _ := os.ReadFile(out)
		want := stRead(t, srv, "--start-position", fmt.Sprintf("%s:%d", start.File, start.Offset))
		stSameOutput(t, how+": -o after XA PREPARE, a "+how+", XA COMMIT", got, want)
		stCheckCPAtEnd(t, srv, cp, last, srv.Addr())
	}
}
