package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// Tests of 'read --source' and 'recover --source': a server's binlogs read
// over the replication protocol must give what reading its files gives,
// byte for byte, and the run must end at the end of the binlog as it was
// when it started.

// rmRead runs 'binlogcdc read' and wants exit 0.
func rmRead(t *testing.T, args ...string) []byte {
	t.Helper()
	out, _ := rpRun(t, 0, append([]string{"read"}, args...)...)
	return out
}

// TestRemoteReadEqualsFiles: a workload over every column type with DDL,
// spread over several binlog files by rotations, read from the server from
// the earliest binlog, from a position, to a position and after a GTID.
func TestRemoteReadEqualsFiles(t *testing.T) {
	t.Parallel()
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 150, true)
	src.FlushLogs(t)
	rpWorkload(t, src, g, 150, true)
	src.FlushLogs(t)
	midGTID := stLastGTID(t, src)
	midFile, midOff := stTxEnd(t, src, midGTID)
	rpWorkload(t, src, g, 150, true)
	src.FlushLogs(t)
	src.Exec(t, "CREATE TABLE rp.last_t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO rp.last_t VALUES (1, 'last')")
	if n := len(src.BinlogFiles(t)); n < 4 {
		t.Fatalf("%d binlog files, want at least 4", n)
	}
	dsn := src.DSN()
	index := src.BinlogIndex()

	want := rmRead(t, "--ddl", index)
	got := rmRead(t, "--ddl", "--source", dsn, "--from", "earliest")
	stSameOutput(t, "read --source --from earliest", got, want)
	if !bytes.Contains(got, []byte(`"last"`)) {
		t.Fatal("the last transaction is missing")
	}

	// The other outputs too: SQL, the SQL that undoes it, Maxwell's JSON
	// (Debezium's and Canal's carry the time they were written).
	for _, extra := range [][]string{{"--format", "sql"}, {"--flashback", "--tables", "rp.types"}, {"--format", "maxwell"}} {
		want := rmRead(t, append(extra, index)...)
		got := rmRead(t, append(extra, "--source", dsn, "--from", "earliest")...)
		stSameOutput(t, fmt.Sprintf("read --source %q", extra), got, want)
	}

	start := fmt.Sprintf("%s:%d", midFile, midOff)
	want = rmRead(t, "--ddl", "--start-position", start, index)
	got = rmRead(t, "--ddl", "--source", dsn, "--start-position", start)
	stSameOutput(t, "read --source --start-position "+start, got, want)

	want = rmRead(t, "--stop-position", start, index)
	got = rmRead(t, "--source", dsn, "--from", "earliest", "--stop-position", start)
	stSameOutput(t, "read --source --stop-position "+start, got, want)

	// After a GTID the server skips the transactions before it without
	// sending them, DDL included: compare the row changes.
	want = rmRead(t, "--start-position", start, index)
	got = rmRead(t, "--source", dsn, "--start-gtid", midGTID)
	stSameOutput(t, "read --source --start-gtid "+midGTID, got, want)

	// At the end already: nothing to read, and no wait for events.
	file, off := stMasterPos(t, src)
	end := fmt.Sprintf("%s:%d", file, off)
	if got := rmRead(t, "--source", dsn, "--start-position", end); len(got) != 0 {
		t.Errorf("read --source --start-position %s (the end): %d bytes of output, want none", end, len(got))
	}
	// After the last GTID: the server sends nothing more; the heartbeat of
	// an idle server says the dump is at the end.
	if got := rmRead(t, "--source", dsn, "--start-gtid", stLastGTID(t, src)); len(got) != 0 {
		t.Errorf("read --source --start-gtid (the last one): %d bytes of output, want none", len(got))
	}
}

// TestRemoteReadWhileWriting: with other clients writing, read --source
// stops at the end of the binlog as it was when it started, at a
// transaction boundary, and exits 0; what it printed is the beginning of
// what reading the files gives later, and holds every transaction
// committed before it started.
func TestRemoteReadWhileWriting(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE w", "CREATE TABLE w.t (id INT PRIMARY KEY, v VARCHAR(40))")
	for i := 1; i <= 200; i++ {
		src.Exec(t, fmt.Sprintf("INSERT INTO w.t VALUES (%d, 'before %d')", i, i))
		if i%70 == 0 {
			src.FlushLogs(t)
		}
	}
	beforeFile, beforeOff := stMasterPos(t, src)

	conn := src.Conn(t)
	defer conn.Close()
	var committed atomic.Int64
	stopWriting := make(chan struct{})
	done := stWorkload(conn, "w", 1<<30, &committed, nil,
		func(i int, maxID *int) []string {
			select {
			case <-stopWriting:
				return []string{"SELECT no_such_column"} // ends the workload
			default:
			}
			*maxID = 1000 + i
			return []string{"BEGIN", fmt.Sprintf("INSERT INTO w.t VALUES (%d, 'during')", 1000+i),
				fmt.Sprintf("UPDATE w.t SET v = 'updated %d' WHERE id = %d", i, 1+i%200), "COMMIT"}
		})
	for committed.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	got := rmRead(t, "--source", src.DSN(), "--from", "earliest")
	atEnd := committed.Load()
	close(stopWriting)
	<-done
	if committed.Load() <= atEnd {
		t.Logf("the workload committed nothing after read ended")
	}

	full := rmRead(t, src.BinlogIndex())
	if !bytes.HasPrefix(full, got) {
		stSameOutput(t, "read --source while writing (a prefix of read FILES)", got, full[:min(len(got), len(full))])
	}
	upTo := rmRead(t, "--stop-position", fmt.Sprintf("%s:%d", beforeFile, beforeOff), src.BinlogIndex())
	if !bytes.HasPrefix(got, upTo) {
		t.Fatalf("read --source lacks transactions committed before it started (%d bytes, %d before the start)", len(got), len(upTo))
	}
	// It ended at a transaction boundary: the next line of the files'
	// output (if any) belongs to another transaction.
	if len(got) < len(full) {
		lines := strings.SplitAfter(string(got), "\n")
		last := lines[len(lines)-2]
		next, _, _ := strings.Cut(string(full[len(got):]), "\n")
		_, g1, _ := stLinePos(strings.TrimSuffix(last, "\n"))
		_, g2, _ := stLinePos(next)
		if g1 == "" || g1 == g2 {
			t.Fatalf("read --source ended inside transaction %q:\n last: %s\n next: %s", g1, clip(last), clip(next))
		}
	}
}

// TestRemoteRecoverAndReplay: recover --source prints what recover of the
// files prints, and read --source --to makes a copy that verify finds
// equal to the source.
func TestRemoteRecoverAndReplay(t *testing.T) {
	t.Parallel()
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 200, false)
	src.FlushLogs(t)
	rpWorkload(t, src, g, 100, false)

	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/")
	rpRun(t, 0, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/")
	// Run again: the target's checkpoint is at the end; nothing to apply.
	_, errOut := rpRun(t, 0, "read", "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/")
	if !strings.Contains(errOut, "nothing to apply") && !strings.Contains(errOut, "applied 0 rows of 0 transactions") {
		t.Errorf("second read --source --to: want nothing applied, stderr:\n%s", errOut)
	}

	before := recSnapshot(t, src, "SELECT * FROM rp.types ORDER BY id")
	beforeSum := *src.QueryStrings(t, "CHECKSUM TABLE rp.types")[0][1]
	if len(before) == 0 {
		t.Fatal("the workload left rp.types empty")
	}
	src.Exec(t, "DROP TABLE rp.types")
	src.FlushLogs(t)
	src.Exec(t, "INSERT INTO rp.comp (a, b, v) VALUES (99, 'after', 1)")
	want, _ := rpRun(t, 0, "recover", "--table", "rp.types", src.BinlogIndex())
	got, _ := rpRun(t, 0, "recover", "--table", "rp.types", "--source", src.DSN(), "--from", "earliest")
	stSameOutput(t, "recover --source", got, want)
	if !bytes.Contains(got, []byte("INSERT INTO")) {
		t.Fatalf("recover printed no rows:\n%s", clip(string(got)))
	}
	// Restored into a server (--to), all over the network.
	rpRun(t, 0, "recover", "--table", "rp.types", "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/", "--as", "rp.types_back")
	recSameRows(t, "recover --source --to", recSnapshot(t, dst, "SELECT * FROM rp.types_back ORDER BY id"), before)
	if sum := *dst.QueryStrings(t, "CHECKSUM TABLE rp.types_back")[0][1]; sum != beforeSum {
		t.Errorf("CHECKSUM TABLE: %s recovered, %s before the drop", sum, beforeSum)
	}
	wantList, _ := rpRun(t, 0, "recover", "--table", "rp.types", "--list", src.BinlogIndex())
	gotList, _ := rpRun(t, 0, "recover", "--table", "rp.types", "--list", "--source", src.DSN(), "--from", "earliest")
	stSameOutput(t, "recover --list --source", gotList, wantList)
}

// TestRemoteReadArgs: arguments are checked before connecting.
func TestRemoteReadArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--source", "mysql://u@127.0.0.1:1", "binlog.000001"}, "FILE arguments"},
		{[]string{"read", "--source", "mysql://u@127.0.0.1:1"}, "needs a start"},
		{[]string{"read", "--source", "mysql://u@127.0.0.1:1", "--from", "now"}, "want earliest"},
		{[]string{"read", "--source", "mysql://u@127.0.0.1:1", "--from", "earliest", "--start-position", "b.000001:4"}, "one start"},
		{[]string{"read", "--source", "mysql://u@127.0.0.1:1", "--start-gtid", "nonsense"}, "not a GTID set"},
		{[]string{"read", "--start-gtid", "0-1-1", "binlog.000001"}, "--start-gtid needs --source"},
		{[]string{"read", "--source", "nodsn", "--from", "earliest"}, "not a DSN"},
		{[]string{"recover", "--table", "a.b", "--source", "mysql://u@127.0.0.1:1", "binlog.000001"}, "FILE arguments"},
		{[]string{"recover", "--table", "a.b", "--from", "earliest", "binlog.000001"}, "--from needs --source"},
	} {
		_, errText, code := runCLI(t, nil, c.args...)
		if code != 2 || !strings.Contains(errText, c.want) {
			t.Errorf("binlogcdc %q: exit %d, want 2 with %q; stderr:\n%s", c.args, code, c.want, errText)
		}
	}
}
