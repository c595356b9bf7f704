package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamXAToTargetAcrossRestart: stream --to and read --to with an XA
// transaction prepared before a kill -9 (stream) or a stop (read
// --stop-position) and committed after the restart. Its changes are
// logged at XA PREPARE and held in memory until its XA COMMIT; the
// target's checkpoint used to move past the XA PREPARE with the
// transactions committed meanwhile, so the restart never read them and
// the target silently lacked its rows ("its changes are not in the input
// and are not emitted", exit 0). Now the checkpoint also keeps where the
// held XA PREPARE starts (xa_file, xa_pos): the restart reads from there,
// collects it again and applies nothing before the checkpoint. The target
// must equal the source, by ordered rows with HEX of every column and
// CHECKSUM TABLE; a row applied twice would stop the run (a conflict).
func TestStreamXAToTargetAcrossRestart(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE sx", "CREATE TABLE sx.t (id INT PRIMARY KEY, v VARCHAR(20), b VARBINARY(16), n DECIMAL(10,2) NULL)")
	// A checkpoint table as an earlier binlogcdc made it, without xa_file
	// and xa_pos: they are added at the start.
	dst.Exec(t, "CREATE DATABASE binlogcdc", `CREATE TABLE binlogcdc.checkpoint (replica VARCHAR(191) NOT NULL,
  file VARCHAR(255) NOT NULL DEFAULT '', pos BIGINT UNSIGNED NOT NULL DEFAULT 0, gtid VARCHAR(255) NOT NULL DEFAULT '',
  ddl_file VARCHAR(255) NOT NULL DEFAULT '', ddl_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  source_time DATETIME(6) NULL, updated DATETIME(6) NULL, PRIMARY KEY (replica)) ENGINE=InnoDB`)
	id := 0
	insert := func(v string) string {
		id++
		src.Exec(t, fmt.Sprintf("INSERT INTO sx.t VALUES (%d, '%s', X'00ff%02x', %d.25)", id, v, id, id))
		return stLastGTID(t, src)
	}
	// prepare leaves an XA transaction prepared (its session disconnects)
	// that inserts two rows and updates the first row.
	prepare := func(xid string) {
		xc := src.Conn(t)
		defer xc.Close()
		qs := []string{"XA START '" + xid + "'"}
		for range 2 {
			id++
			qs = append(qs, fmt.Sprintf("INSERT INTO sx.t VALUES (%d, 'xa %s', X'00', NULL)", id, xid))
		}
		qs = append(qs, "UPDATE sx.t SET v = 'by "+xid+"' WHERE id = 1", "XA END '"+xid+"'", "XA PREPARE '"+xid+"'")
		for _, q := range qs {
			if _, err := xc.Execute(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	at := func(gtid string) func() bool {
		return func() bool {
			f, end := stTxEnd(t, src, gtid)
			r := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
			return len(r) == 1 && *r[0][0] == fmt.Sprintf("%s:%d", f, end)
		}
	}
	compare := func(what string) {
		t.Helper()
		q := "SELECT id, HEX(id), HEX(v), HEX(b), HEX(CAST(n AS CHAR)) FROM sx.t ORDER BY id"
		want := rpRows(t, src, q) + "\n" + rpRows(t, src, "CHECKSUM TABLE sx.t")
		if got := rpRows(t, dst, q) + "\n" + rpRows(t, dst, "CHECKSUM TABLE sx.t"); got != want {
			t.Errorf("%s: the target differs from the source:\ngot:\n%s\nwant:\n%s", what, got, want)
		}
		if xa := dst.QueryStrings(t, "SELECT CONCAT(xa_file, ':', xa_pos) FROM binlogcdc.checkpoint WHERE replica = 'default'"); len(xa) != 1 || *xa[0][0] != ":0" {
			t.Errorf("%s: the checkpoint still names held XA transactions: %v", what, xa)
		}
	}

	// stream --to, kill -9 after the transactions that followed XA PREPARE
	// were applied.
	dir := t.TempDir()
	args := []string{"--source", src.DSN(), "--from", "earliest", "--to", dst.DSN() + "/", "--group-time", "20ms"}
	first := insert("before")
	r := stStart(t, dir, "0", nil, args...)
	stPoll(t, time.Minute, r, "the first row", at(first))
	prepare("x1")
	insert("between")
	between := insert("between")
	stPoll(t, time.Minute, r, "the rows after XA PREPARE", at(between))
	r.kill9()
	r = stStart(t, dir, "1", nil, args...)
	stPoll(t, time.Minute, r, "the restart to connect", r.ready)
	src.Exec(t, "XA COMMIT 'x1'")
	last := insert("after")
	stPoll(t, time.Minute, r, "the last row", at(last))
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if e := r.errText(); strings.Contains(e, "not emitted") || !strings.Contains(e, "to collect the prepared XA transactions") {
		t.Errorf("the restart lost the XA transaction, or did not read it again:\n%s", e)
	}
	compare("stream --to, kill -9 between XA PREPARE and XA COMMIT")

	// read --to: a run that stops while x2 is prepared, then one that
	// reads on past its XA COMMIT; then a third with nothing left to do.
	prepare("x2")
	mid := insert("between")
	f, end := stTxEnd(t, src, mid)
	src.Exec(t, "XA COMMIT 'x2'")
	insert("after")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--stop-position", fmt.Sprintf("%s:%d", f, end))
	if xa := dst.QueryStrings(t, "SELECT xa_file FROM binlogcdc.checkpoint WHERE replica = 'default'"); len(xa) != 1 || *xa[0][0] == "" {
		t.Fatalf("read --to stopped with x2 prepared: the checkpoint does not keep its XA PREPARE: %v", xa)
	}
	_, errOut := rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	if strings.Contains(errOut, "not emitted") {
		t.Errorf("read --to lost the XA transaction:\n%s", errOut)
	}
	compare("read --to, stopped between XA PREPARE and XA COMMIT")
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	compare("read --to again")
}
