package e2e

// read --to --parallel N: the target must end up equal to the source
// (ordered HEX rows, CHECKSUM TABLE) however the transactions were spread
// over the connections, and after kill -9 at random points and restarts.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/schemahist"
)

// rpParallelWorkload writes transactions whose result depends on their
// order: each appends its number to the rows it touches (CONCAT), on the
// same few keys, one-row and several-row transactions interleaved, keys
// moved, rows deleted and inserted again; a parent/child pair with ON
// DELETE CASCADE (applied serially), a table keyed by text (serial), an
// ALTER in the middle and a transaction too large to hand over whole.
func rpParallelWorkload(t *testing.T, src *testserver.Server, g *rpGen) {
	t.Helper()
	src.Exec(t,
		"CREATE DATABASE pa",
		"CREATE TABLE pa.h (id INT PRIMARY KEY, hist TEXT NOT NULL, n BIGINT NOT NULL DEFAULT 0)",
		"CREATE TABLE pa.b (k VARBINARY(16) PRIMARY KEY, hist TEXT NOT NULL)",
		"CREATE TABLE pa.txt (k VARCHAR(10) PRIMARY KEY, hist TEXT NOT NULL)",
		"CREATE TABLE pa.parent (id INT PRIMARY KEY, hist TEXT NOT NULL)",
		"CREATE TABLE pa.child (id INT PRIMARY KEY, pid INT, hist TEXT NOT NULL, FOREIGN KEY (pid) REFERENCES pa.parent (id) ON DELETE CASCADE)")
	step := func(seq int) []string {
		var stmts []string
		for k := 1 + g.pick(3); k > 0; k-- {
			id := g.pick(40)
			hid := id * 100 // integer keys go to workers in blocks of 256: spread them
			switch g.pick(9) {
			case 0, 1, 2:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO pa.h (id, hist, n) VALUES (%d, '%d', 1) ON DUPLICATE KEY UPDATE hist = CONCAT(hist, ',', %d), n = (n * 3 + %d) %% 1000000007", hid, seq, seq, seq%7))
			case 3:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM pa.h WHERE id = %d", hid))
			case 4:
				stmts = append(stmts, fmt.Sprintf("UPDATE IGNORE pa.h SET id = %d, hist = CONCAT(hist, ',m', %d) WHERE id = %d", (40+g.pick(10))*100, seq, hid))
			case 5:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO pa.b VALUES (UNHEX('%02x00'), '%d') ON DUPLICATE KEY UPDATE hist = CONCAT(hist, ',', %d)", id%10, seq, seq))
			case 6:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO pa.txt VALUES ('%s', '%d') ON DUPLICATE KEY UPDATE hist = CONCAT(hist, ',', %d)", []string{"a", "A", "b"}[g.pick(3)], seq, seq))
			case 7:
				p := id % 5
				stmts = append(stmts, fmt.Sprintf("INSERT INTO pa.parent VALUES (%d, '%d') ON DUPLICATE KEY UPDATE hist = CONCAT(hist, ',', %d)", p, seq, seq),
					fmt.Sprintf("INSERT INTO pa.child VALUES (%d, %d, '%d') ON DUPLICATE KEY UPDATE hist = CONCAT(hist, ',', %d)", id, p, seq, seq))
			case 8:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM pa.parent WHERE id = %d", id%5))
			}
		}
		if len(stmts) > 1 || g.chance(0.3) {
			stmts = append(append([]string{"BEGIN"}, stmts...), "COMMIT")
		}
		return stmts
	}
	for seq := 1; seq <= 700; seq++ {
		src.Exec(t, step(seq)...)
		switch seq {
		case 300:
			src.Exec(t, "ALTER TABLE pa.h ADD COLUMN extra VARCHAR(5) DEFAULT 'x' AFTER id")
		case 400:
			// Larger than a worker is handed whole: applied as it comes.
			var vals []string
			for i := 0; i < 1500; i++ {
				vals = append(vals, fmt.Sprintf("(%d, 'x', 'big', %d)", 100000+i, i))
			}
			src.Exec(t, "BEGIN", "INSERT INTO pa.h (id, extra, hist, n) VALUES "+strings.Join(vals, ","), "UPDATE pa.h SET hist = CONCAT(hist, ',big') WHERE id < 4000", "COMMIT")
		}
	}
}

func TestReplayParallel(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	rpParallelWorkload(t, src, g)
	end := rpMasterPos(t, src)
	index := src.BinlogIndex()
	workerRows := func(t *testing.T, dst *testserver.Server) []string {
		var out []string
		for _, r := range dst.QueryStrings(t, "SELECT CONCAT(replica, ' ', file, ':', pos) FROM binlogcdc.checkpoint ORDER BY replica") {
			out = append(out, *r[0])
		}
		return out
	}
	wantRows := func(n int) []string {
		var want []string
		for k := 0; k < n; k++ {
			name := "default"
			if k > 0 {
				name += fmt.Sprintf("#%d", k)
			}
			want = append(want, name+" "+end)
		}
		return want
	}

	// The schema history: one row per worker, all as of the common
	// checkpoint after a normal end, with pa.h as the ALTER left it (a
	// history that went with a later checkpoint than the one resumed
	// from would see the ALTER twice, and lose the table).
	history := func(t *testing.T, dst *testserver.Server, workers int) {
		t.Helper()
		if got := stVal(t, dst, "SELECT CONCAT(COUNT(*), ' ', COUNT(DISTINCT history)) FROM binlogcdc.schema_history"); got != fmt.Sprintf("%d 1", workers) {
			t.Errorf("binlogcdc.schema_history: %s rows and distinct histories, want %d 1", got, workers)
		}
		h, err := schemahist.Decode([]byte(stVal(t, dst, "SELECT history FROM binlogcdc.schema_history WHERE replica = 'default'")), "binlogcdc.schema_history")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := shCols(h.Table("pa", "h")), "id extra='x' hist n=0"; got != want {
			t.Errorf("the schema history has pa.h as %s, want %s", got, want)
		}
	}

	t.Run("to", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		_, errOut := rpRun(t, 0, "read", index, "--to", dst.DSN()+"/", "--parallel", "4", "--group-rows", "20")
		t.Log(strings.TrimSpace(errOut))
		rpCompare(t, src, dst, "read --to --parallel 4")
		if got, want := strings.Join(workerRows(t, dst), "; "), strings.Join(wantRows(4), "; "); got != want {
			t.Errorf("checkpoint rows %q, want %q", got, want)
		}
		history(t, dst, 4)
		_, errOut = rpRun(t, 0, "read", index, "--to", dst.DSN()+"/", "--parallel", "4")
		if !strings.Contains(errOut, "applied 0 rows") {
			t.Errorf("second run applied something:\n%s", errOut)
		}
		// Stopped cleanly: another --parallel is fine, and serial too.
		_, errOut = rpRun(t, 0, "read", index, "--to", dst.DSN()+"/", "--parallel", "2")
		if !strings.Contains(errOut, "applied 0 rows") {
			t.Errorf("run with --parallel 2 applied something:\n%s", errOut)
		}
		if got, want := strings.Join(workerRows(t, dst), "; "), strings.Join(wantRows(2), "; "); got != want {
			t.Errorf("checkpoint rows after --parallel 2: %q, want %q", got, want)
		}
		history(t, dst, 2)
		rpCompare(t, src, dst, "read --to --parallel 4, then 2")

		// Workers left apart (as by a crash): only the same N may go on;
		// a serial replay or another N would not know what each applied.
		dst.Exec(t, "UPDATE binlogcdc.checkpoint SET pos = pos - 1 WHERE replica = 'default#1'")
		for _, n := range []string{"1", "3"} {
			_, errOut := rpRun(t, 1, "read", index, "--to", dst.DSN()+"/", "--parallel", n)
			if !strings.Contains(errOut, "stopped in the middle of a parallel apply") {
				t.Errorf("--parallel %s after workers were left apart: %s", n, errOut)
			}
		}
		dst.Exec(t, "UPDATE binlogcdc.checkpoint SET pos = pos + 1 WHERE replica = 'default#1'")
		// Stopped cleanly: a serial replay drops the worker rows.
		_, errOut = rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "applied 0 rows") {
			t.Errorf("serial run applied something:\n%s", errOut)
		}
		if got, want := strings.Join(workerRows(t, dst), "; "), strings.Join(wantRows(1), "; "); got != want {
			t.Errorf("checkpoint rows after a serial run: %q, want %q", got, want)
		}
		history(t, dst, 1)
	})

	t.Run("kill9", func(t *testing.T) {
		dst := testserver.Start(t, testserver.Options{})
		args := []string{"read", index, "--to", dst.DSN() + "/", "--parallel", "3", "--group-rows", "7", "--group-time", "5ms"}
		runs, kills := rpKillLoop(t, g, args, 12, 15, 120)
		t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
		if kills < 8 {
			t.Errorf("only %d kills landed while replaying (want ≥ 8): make the workload bigger", kills)
		}
		rpCompare(t, src, dst, "read --to --parallel 3 with kill -9")
		if got, want := strings.Join(workerRows(t, dst), "; "), strings.Join(wantRows(3), "; "); got != want {
			t.Errorf("checkpoint rows %q, want %q", got, want)
		}
		history(t, dst, 3)
	})
}

// TestReplayParallelFlags: --parallel outside 1..64, or without --to
// mysql://, is refused before anything is read.
func TestReplayParallelFlags(t *testing.T) {
	shop := "../testdata/shop.binlog"
	for _, c := range [][]string{
		{"read", shop, "--parallel", "0", "--to", "mysql://root@127.0.0.1:1/"},
		{"read", shop, "--parallel", "65", "--to", "mysql://root@127.0.0.1:1/"},
		{"read", shop, "--parallel", "2"},
		{"read", shop, "--parallel", "2", "--format", "sql"},
	} {
		out, errText, code := runCLI(t, nil, c...)
		if code != 2 || len(out) != 0 || !strings.Contains(errText, "--parallel") {
			t.Errorf("%q: exit %d, stdout %.200q, stderr %q; want exit 2 naming --parallel", c, code, out, errText)
		}
	}
	if _, errText, code := runCLI(t, nil, "stream", "--parallel", "2"); code != 2 || !strings.Contains(errText, "parallel") {
		t.Errorf("stream --parallel: exit %d, stderr %q; want exit 2 (an unknown flag)", code, errText)
	}
}

// TestReplayParallelManyKeys: a worker that was given more keys than the
// coordinator tracks per worker (262,144) is asked to commit without the
// coordinator waiting for it (sink/mysql/parallel.go, flushAsync); a
// later transaction on another worker that touches one of those keys
// waits for that commit. 600 transactions of 1000 inserts (spread over
// both workers by their position; each worker passes the bound after
// about 525 of them) with, every 5 after the 500th, one-row updates of
// rows inserted just before (on their key's worker): the replay ends
// equal to the source, with every update applied.
func TestReplayParallelManyKeys(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE pk;\nCREATE TABLE pk.t (id INT PRIMARY KEY, v INT NOT NULL);\n")
	updates := 0
	for tx := 0; tx < 600; tx++ {
		lo := tx*1000 + 1
		fmt.Fprintf(&sql, "INSERT INTO pk.t SELECT seq, 0 FROM pk.seq_%d_to_%d;\n", lo, lo+999)
		if tx >= 500 && tx%5 == 4 {
			for j := 0; j < 6; j++ {
				fmt.Fprintf(&sql, "UPDATE pk.t SET v = v + %d WHERE id = %d;\n", j+1, (tx-j%3)*1000+1+150*j)
				updates++
			}
		}
	}
	rpMysql(t, src, []byte(sql.String()))
	dst := testserver.Start(t, testserver.Options{})
	_, errOut := rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--parallel", "2")
	rpCompare(t, src, dst, "after the replay")
	if want := fmt.Sprintf("`pk`.`t`: 600000 inserted, %d updated", updates); !strings.Contains(errOut, want) {
		t.Errorf("the counts are not %q:\n%s", want, errOut)
	}
}

// TestReplayParallelReusedCopies: the coordinator's copies of the rows
// are cut from blocks that are reused once every worker is done with the
// rows cut from them (sink/mysql/parallel_recycle.go), and the buffers of
// changes handed to the workers are reused too. Transactions of 1 to
// 1500 rows (the largest are streamed to worker 0) with text and binary
// values unique to each row, spread over both workers, then updates and
// deletes of rows on both, while the workers lag behind the coordinator:
// a block reused too early would put another row's bytes into the
// target. The replay ends equal to the source, byte for byte.
func TestReplayParallelReusedCopies(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE rc;\nCREATE TABLE rc.t (id INT PRIMARY KEY, s VARCHAR(200) NOT NULL, t TEXT, b VARBINARY(300));\n")
	id := 0
	sizes := []int{1, 7, 300, 1, 1000, 2, 1500, 64}
	for i := 0; i < 240; i++ {
		n := sizes[i%len(sizes)]
		fmt.Fprintf(&sql, "INSERT INTO rc.t SELECT seq, CONCAT('s-', seq, '-', MD5(seq)), REPEAT(SHA1(seq), 1 + seq %% 5), UNHEX(REPEAT(MD5(seq * 7), 1 + seq %% 9)) FROM rc.seq_%d_to_%d;\n", id+1, id+n)
		id += n
		if i%6 == 5 {
			// Rows of recent transactions, on both workers.
			fmt.Fprintf(&sql, "UPDATE rc.t SET s = CONCAT('u-', id, '-', SHA1(id)), b = UNHEX(MD5(id)) WHERE id BETWEEN %d AND %d AND id %% 3 = 0;\n", id-1200, id)
			fmt.Fprintf(&sql, "UPDATE rc.t SET t = NULL WHERE id = %d;\n", id-17)
			fmt.Fprintf(&sql, "DELETE FROM rc.t WHERE id BETWEEN %d AND %d AND id %% 11 = 0;\n", id-900, id-300)
		}
	}
	rpMysql(t, src, []byte(sql.String()))
	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--parallel", "2")
	rpCompare(t, src, dst, "after the replay")
}
