package e2e

// Text as the source holds it in `stream --to`, through every sink that
// wraps the replay: the initial snapshot (--snapshot), the incremental
// snapshots (--signal-table) and the live verification (--verify-every).
// Each wrapper used to hide that the replay takes text unchecked, so
// MariaDB's utf8mb4 surrogates became U+FFFD on the target, silently
// (the snapshot's rows, or every row of the binlog behind the wrapper).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

func TestSurrogateTextStream(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE su", "CREATE DATABASE ctl",
		"CREATE TABLE ctl.signal (id INT AUTO_INCREMENT PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
		"CREATE TABLE su.t (id INT PRIMARY KEY, v VARCHAR(40) CHARACTER SET utf8mb4, x TEXT CHARACTER SET utf8mb3,"+
			" c TEXT COMPRESSED CHARACTER SET utf8mb4)",
		"INSERT INTO su.t VALUES (1, X'EDA080', X'EDBFBF', REPEAT(X'EDA080', 50)), (2, CONCAT('a', X'EDB080', 'b'), 'plain', X'EDBFBF')",
	)
	state := func(srv *testserver.Server) string {
		if n := srv.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'su' AND TABLE_NAME = 't'"); *n[0][0] == "0" {
			return "(no su.t)"
		}
		return rpRows(t, srv, "SELECT id, HEX(v), HEX(x), HEX(c) FROM su.t ORDER BY id") + "\n" +
			rpRows(t, srv, "CHECKSUM TABLE su.t")
	}
	next := 10
	change := func(t *testing.T) {
		next++
		src.Exec(t,
			fmt.Sprintf("INSERT INTO su.t VALUES (%d, CONCAT(X'EDA081', '%d'), X'EDB0BF', REPEAT(X'EDB0BF', %d))", next, next, next),
			fmt.Sprintf("UPDATE su.t SET v = CONCAT(v, X'EDA180') WHERE id = %d", next))
	}
	// equal waits for the target to hold the source's rows, which hold
	// the surrogate sur.
	equal := func(t *testing.T, r *stRun, dst *testserver.Server, what, sur string) {
		t.Helper()
		want := state(src)
		if !strings.Contains(want, sur) {
			t.Fatalf("the source does not hold the surrogate %s:\n%s", sur, want)
		}
		stPoll(t, time.Minute, r, what, func() bool { return state(dst) == want })
	}
	for _, c := range []struct {
		name string
		args []string
		then func(t *testing.T, r *stRun)
	}{
		{"snapshot", []string{"--snapshot"}, nil},
		{"verify-every", []string{"--from", "earliest", "--verify-every", "50ms", "--verify-on-diff", "stop"}, nil},
		{"signal-table", []string{"--from", "earliest", "--signal-table", "ctl.signal"}, func(t *testing.T, r *stRun) {
			src.Exec(t, "INSERT INTO ctl.signal (type, data) VALUES ('snapshot', 'su.t')")
			stPoll(t, time.Minute, r, "the incremental snapshot of su.t", func() bool {
				return strings.Contains(r.errText(), "incremental snapshot of `su`.`t` done")
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			r := stStart(t, t.TempDir(), c.name, nil, append([]string{"--source", src.DSN(), "--to", dst.DSN() + "/", "--heartbeat", "1s"}, c.args...)...)
			defer r.kill9()
			equal(t, r, dst, "the target to hold the source's rows", "EDA080")
			if c.then != nil {
				c.then(t, r)
			}
			change(t)
			equal(t, r, dst, "the rows changed while the stream runs", fmt.Sprintf("EDA081%X", fmt.Sprint(next)))
			if r.exited() {
				t.Fatalf("the stream stopped:\n%s", r.errText())
			}
		})
	}
}
