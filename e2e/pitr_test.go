package e2e

// Point-in-time restore: a mariadb-backup taken during a workload,
// restored into a fresh server, then one 'binlogcdc read ARCHIVE --to'
// from the backup's binlog position up to just before a bad statement.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestPITR restores to just before a DROP TABLE (start by the backup's
// GTID) and a DELETE without WHERE (start by its file and position); the
// restored server equals the source as it was right before the bad
// statement, row for row (HEX of every column) and by CHECKSUM TABLE.
func TestPITR(t *testing.T) {
	for _, tc := range []struct {
		name, bad, stop string
		byGTID          bool
	}{
		{"drop", "DROP TABLE db.orders", "DROP TABLE db.orders", true},
		{"delete", "DELETE FROM db.orders", "DELETE db.orders", false},
	} {
		t.Run(tc.name, func(t *testing.T) { pitr(t, tc.bad, tc.stop, tc.byGTID) })
	}
}

func pitr(t *testing.T, bad, stop string, byGTID bool) {
	backupTool := pitrTool(t, "mariadb-backup")
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE db",
		"CREATE TABLE db.orders (id INT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(40) CHARACTER SET utf8mb4, amount DECIMAL(12,2), note TEXT, at DATETIME(6), flags SET('a','b','c'), data BLOB, f DOUBLE)",
		"CREATE TABLE db.items (order_id INT, n INT, qty SMALLINT UNSIGNED, label VARCHAR(20), PRIMARY KEY (order_id, n))",
		"INSERT INTO db.orders (customer, amount, note, at, flags, data, f) SELECT CONCAT('c', seq), seq * 1.25, REPEAT('n', seq % 50), '2024-01-01 00:00:00' + INTERVAL seq SECOND, 'a,c', UNHEX(REPEAT('ab', seq % 20)), seq / 3 FROM db.seq_1_to_200",
		"INSERT INTO db.items SELECT seq, 1, seq % 7, CONCAT('l', seq) FROM db.seq_1_to_200")
	tmp := t.TempDir()
	adir := filepath.Join(tmp, "arch")
	ar := arStart(t, tmp, "archive", "--source", src.DSN(), "--dir", adir, "--from", "earliest", "--heartbeat", "1s")
	stPoll(t, time.Minute, ar, "the archiver to connect", ar.ready)

	// The workload: one transaction per round, on its own connection;
	// holding pause stops it between two transactions.
	var pause sync.Mutex
	conn := src.Conn(t)
	stopW := make(chan struct{})
	var werr atomic.Value
	var afterBad atomic.Bool // db.orders may be gone: leave it alone
	wdone, rounds := rpUntil(stopW, func(i int) {
		pause.Lock()
		defer pause.Unlock()
		qs := []string{"BEGIN"}
		if !afterBad.Load() {
			qs = append(qs,
				fmt.Sprintf("INSERT INTO db.orders (customer, amount, note, at, flags, data, f) VALUES ('w%d', %d.%02d, REPEAT('é', %d), NOW(6), 'b', UNHEX('%02x00ff'), %d.5)", i, i, i%100, i%30, i%256, i),
				fmt.Sprintf("UPDATE db.orders SET amount = amount + 1, flags = 'a,b' WHERE id = %d", 1+i%150))
		}
		qs = append(qs,
			fmt.Sprintf("INSERT INTO db.items VALUES (%d, %d, %d, 'w') ON DUPLICATE KEY UPDATE qty = qty + 1", 1+i%150, 2+i, i%60000),
			fmt.Sprintf("DELETE FROM db.items WHERE order_id = %d AND n = %d", 1+(i+147)%150, i-1), // inserted 3 rounds ago
			"COMMIT")
		if i%40 == 39 {
			qs = append(qs, "FLUSH BINARY LOGS")
		}
		for _, q := range qs {
			if r, err := conn.Execute(q); err != nil {
				werr.CompareAndSwap(nil, fmt.Errorf("%s: %w", q, err))
				return
			} else {
				r.Close()
			}
		}
	})
	waitRounds := func(n int64) {
		t.Helper()
		target := rounds.Load() + n
		stPoll(t, 2*time.Minute, ar, fmt.Sprintf("%d workload transactions", n), func() bool {
			if e := werr.Load(); e != nil {
				t.Fatal(e)
			}
			return rounds.Load() >= target
		})
	}
	waitRounds(50)

	// The backup, taken while the workload runs.
	backup := filepath.Join(tmp, "backup")
	pitrRun(t, backupTool, "--no-defaults", "--backup", "--target-dir="+backup, "--datadir="+src.Dir,
		"--host=127.0.0.1", fmt.Sprintf("--port=%d", src.Port), "--user=root")
	waitRounds(60)

	// Right before the bad statement: the state to get back.
	pause.Lock()
	want := pitrState(t, src)
	src.Exec(t, bad)
	afterBad.Store(true)
	pause.Unlock()
	waitRounds(20) // transactions after the bad one: not to be restored
	close(stopW)
	<-wdone
	if e := werr.Load(); e != nil {
		t.Fatal(e)
	}
	arWaitWhole(t, ar, src, adir) // the archiver keeps running: its last file is open

	// Restore the backup into a fresh server.
	pitrRun(t, backupTool, "--no-defaults", "--prepare", "--target-dir="+backup)
	rdata := filepath.Join(t.TempDir(), "data")
	pitrRun(t, backupTool, "--no-defaults", "--copy-back", "--target-dir="+backup, "--datadir="+rdata)
	dst := testserver.Start(t, testserver.Options{Datadir: rdata})

	file, pos, gtid := pitrBinlogInfo(t, backup)
	args := []string{"read", adir, "--stop-before", stop, "--to", dst.DSN() + "/"}
	if byGTID {
		args = append(args, "--start-gtid", gtid)
	} else {
		args = append(args, "--start-position", fmt.Sprintf("%s:%s", file, pos))
	}
	_, stderr, code := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("binlogcdc %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	if !strings.Contains(stderr, "stopping before the transaction at binlog.") {
		t.Errorf("stderr does not name where it stopped:\n%s", stderr)
	}
	got := pitrState(t, dst)
	if got != want {
		t.Fatalf("the restored server differs from the source before %q:\n%s", bad, firstDiff(got, want))
	}
	t.Logf("backup at %s:%s (%s); stderr:\n%s", file, pos, gtid, stderr)

	// Run again (as after an interruption): it resumes at the target's
	// checkpoint, right before the bad transaction, and applies nothing.
	_, stderr, code = runCLI(t, nil, args...)
	if code != 0 || !strings.Contains(stderr, "applied 0 rows") {
		t.Fatalf("the same command again: exit %d\n%s", code, stderr)
	}
	if got := pitrState(t, dst); got != want {
		t.Fatalf("after the second run the restored server differs:\n%s", firstDiff(got, want))
	}
	if byGTID {
		return
	}
	// A target already past the bad transaction (everything applied,
	// by mistake) is refused, not stopped at a later match.
	all := []string{"read", adir, "--start-position", fmt.Sprintf("%s:%s", file, pos), "--to", dst.DSN() + "/"}
	if _, stderr, code := runCLI(t, nil, all...); code != 0 {
		t.Fatalf("read without a stop: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runCLI(t, nil, args...)
	if code == 0 || !strings.Contains(stderr, "it was applied already; nothing was written now") {
		t.Fatalf("--stop-before on a target past it: exit %d\n%s", code, stderr)
	}
}

// pitrTool finds a MariaDB tool (scripts/test.sh installs it).
func pitrTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: apt-get install -y %s (scripts/test.sh installs it)", name, name)
	}
	return p
}

func pitrRun(t *testing.T, tool string, args ...string) {
	t.Helper()
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, tail(out))
	}
}

// pitrBinlogInfo reads the backup's binlog info file: the
// binlog file, position and GTID position at the backup's point.
func pitrBinlogInfo(t *testing.T, backup string) (file, pos, gtid string) {
	t.Helper()
	// MariaDB 10.11 names it xtrabackup_binlog_info, later versions
	// mariadb_backup_binlog_info.
	b, err := os.ReadFile(filepath.Join(backup, "mariadb_backup_binlog_info"))
	if os.IsNotExist(err) {
		b, err = os.ReadFile(filepath.Join(backup, "xtrabackup_binlog_info"))
	}
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		t.Fatalf("mariadb_backup_binlog_info: %q", b)
	}
	return f[0], f[1], f[2]
}

// pitrState is every table of db: CHECKSUM TABLE, then every row in
// primary key order as the HEX() of every column.
func pitrState(t *testing.T, srv *testserver.Server) string {
	t.Helper()
	var sb strings.Builder
	for _, row := range srv.QueryStrings(t, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'db' ORDER BY table_name") {
		tbl := *row[0]
		cs := srv.QueryStrings(t, "CHECKSUM TABLE db."+tbl)
		fmt.Fprintf(&sb, "table %s checksum %s\n", tbl, pitrStr(cs[0][1]))
		cols := tableColumns(t, srv, "db", tbl)
		hex := make([]string, len(cols))
		for i, c := range cols {
			hex[i] = fmt.Sprintf("IFNULL(HEX(`%s`), 'NULL')", c)
		}
		pk := strings.Join(primaryKey(t, srv, "db", tbl), ", ")
		for _, r := range srv.QueryStrings(t, fmt.Sprintf("SELECT CONCAT_WS(',', %s) FROM db.%s ORDER BY %s", strings.Join(hex, ", "), tbl, pk)) {
			sb.WriteString(pitrStr(r[0]) + "\n")
		}
	}
	return sb.String()
}

func pitrStr(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}
