package e2e

// Stream and checkpoint safety (issue 12): source restarts under stream
// --to, checkpoints from another server, two processes on one
// checkpoint, local write failures, and -o after a failed write.

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestReplayStreamSourceRestart: stream --to mysql:// lives through
// restarts of the source, a crash (SIGKILL) and a clean stop, each in the
// middle of a workload over two tables. The target's column names, looked
// up once, used to be kept in memory go-mysql reuses for later results:
// the first new TABLE_MAP after the reconnect then failed with "column
// `id`, `k` does not exist on the target".
func TestReplayStreamSourceRestart(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE rs",
		"CREATE TABLE rs.t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE rs.u (x INT PRIMARY KEY, y VARCHAR(20))",
		"INSERT INTO rs.t VALUES (1, 1), (2, 2)", "INSERT INTO rs.u VALUES (1, 'a')")
	dir := t.TempDir()
	r := stStart(t, dir, "s", nil, "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/", "--group-time", "20ms")
	caughtUp := func() bool {
		if len(dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'")) == 0 {
			return false
		}
		rows := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(rows) == 1 && *rows[0][0] == rpMasterPos(t, src)
	}
	stPoll(t, time.Minute, r, "the stream to catch up", caughtUp)
	id := 100
	for i := 0; i < 4; i++ {
		var committed atomic.Int64
		done := stWorkload(src.Conn(t), "rs", 1<<30, &committed, nil, func(j int, _ *int) []string {
			id++
			if j%2 == 0 {
				return []string{fmt.Sprintf("INSERT INTO rs.t VALUES (%d, %d)", id, j)}
			}
			return []string{"BEGIN", fmt.Sprintf("INSERT INTO rs.u VALUES (%d, 'w')", id), "UPDATE rs.t SET k = k + 1 WHERE id = 1", "COMMIT"}
		})
		stPoll(t, time.Minute, r, "the workload", func() bool { return committed.Load() >= 100 })
		if i%2 == 0 {
			src.Kill(t)
		} else {
			src.Stop(t)
		}
		<-done // ends with the lost connection
		src.Restart(t)
		src.Exec(t, fmt.Sprintf("INSERT INTO rs.t VALUES (%d, %d)", 10+i, i), "UPDATE rs.t SET k = k + 1 WHERE id = 2")
		stPoll(t, time.Minute, r, fmt.Sprintf("the stream to catch up after source restart %d", i+1), caughtUp)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	rpCompare(t, src, dst, "stream --to through source restarts")
}
