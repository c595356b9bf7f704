package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// With --load-data, long insert runs go to the target as LOAD DATA LOCAL INFILE
// (sink/mysql/bulk.go). TestReplay checks every column type through it;
// these check conflicts, a target that refuses it, and kill -9.

// stStatus is a global status counter of srv.
func stStatus(t testing.TB, srv *testserver.Server, name string) string {
	t.Helper()
	r := srv.QueryStrings(t, "SHOW GLOBAL STATUS LIKE '"+name+"'")
	if len(r) != 1 || r[0][1] == nil {
		t.Fatalf("no status variable %s", name)
	}
	return *r[0][1]
}

func stCount(t testing.TB, srv *testserver.Server, name string) int {
	t.Helper()
	n, err := strconv.Atoi(stStatus(t, srv, name))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bkInserts is a transaction of n inserts into bk.t from id first on,
// one statement each, with text, binary and NULL values.
func bkInserts(first, n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN;\n")
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "INSERT INTO bk.t VALUES (%d, 'row\\t%d\\\\N', X'%02x005c0a09ff', %s);\n", i, i, i%256, []string{"NULL", "'é'", "''"}[i%3])
	}
	b.WriteString("COMMIT;\n")
	return []byte(b.String())
}

// TestReplayBulkConflict: a duplicate key inside a LOAD DATA batch stops
// the run with the very message INSERT gives (the batch is undone and run
// again as INSERTs), on a target that takes LOAD DATA LOCAL and on one
// that refuses it (local_infile=0: multi-row INSERTs, with a note); after
// the fix, both end equal to the source.
func TestReplayBulkConflict(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	bulk := testserver.Start(t, testserver.Options{})
	plain := testserver.Start(t, testserver.Options{})
	plain.Exec(t, "SET GLOBAL local_infile = 0")
	rpMysql(t, src, []byte("CREATE DATABASE bk;\nCREATE TABLE bk.t (id INT PRIMARY KEY, s VARCHAR(30), b VARBINARY(10), u VARCHAR(5) CHARACTER SET utf8mb4);\n"))
	rpMysql(t, src, bkInserts(1, 300))
	for _, dst := range []*testserver.Server{bulk, plain} {
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--load-data")
		rpCompare(t, src, dst, "the first inserts")
	}
	if n := stCount(t, bulk, "Com_load"); n < 1 {
		t.Fatalf("the 300 inserts did not go as LOAD DATA (Com_load %d)", n)
	}

	// Behind binlogcdc's back: row 450 is there already.
	for _, dst := range []*testserver.Server{bulk, plain} {
		dst.Exec(t, "INSERT INTO bk.t VALUES (450, 'theirs', NULL, NULL)")
	}
	rpMysql(t, src, bkInserts(301, 300))
	loads, rollbacks := stCount(t, bulk, "Com_load"), stCount(t, bulk, "Com_rollback_to_savepoint")
	re := regexp.MustCompile("(?m)^.*conflict: insert of `bk`.`t` \\(`id`=450\\) at binlog\\.\\d+:\\d+ row 0 gtid 0-1-\\d+: duplicate key on the target: Duplicate entry '450' for key 'PRIMARY'.*$")
	var msgs []string
	for _, dst := range []*testserver.Server{bulk, plain} {
		before := rpCheckpoint(t, dst)
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--load-data")
		m := re.FindString(errOut)
		if m == "" {
			t.Fatalf("no conflict message naming the row:\n%s", errOut)
		}
		msgs = append(msgs, m)
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bk.t WHERE id > 300"); n != "1" {
			t.Errorf("%s rows past 300 on the target after the conflict, want 1 (the target's own)", n)
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the conflict reads differently through LOAD DATA:\n%s\nthan through INSERT:\n%s", msgs[0], msgs[1])
	}
	if stCount(t, bulk, "Com_load") == loads || stCount(t, bulk, "Com_rollback_to_savepoint") == rollbacks {
		t.Errorf("the batch with the duplicate did not go as LOAD DATA, undone")
	}

	// Fixed: both resume to the source's rows.
	_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", plain.DSN()+"/", "--load-data")
	if !strings.Contains(errOut, "local_infile") {
		t.Errorf("no note that the target refuses LOAD DATA LOCAL:\n%s", errOut)
	}
	for _, dst := range []*testserver.Server{bulk, plain} {
		dst.Exec(t, "DELETE FROM bk.t WHERE id = 450")
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--load-data")
		rpCompare(t, src, dst, "after the fix")
	}
	if n := stCount(t, plain, "Com_load"); n != 0 {
		t.Errorf("%d LOAD DATA statements on a target with local_infile=0", n)
	}
}

// TestReplayBulkKill9 kills replay with SIGKILL again and again while it
// loads 60 transactions of 1000 inserts with LOAD DATA: every restart
// resumes at the checkpoint, and the target ends equal to the source.
func TestReplayBulkKill9(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	rpMysql(t, src, []byte("CREATE DATABASE bk;\nCREATE TABLE bk.t (id INT PRIMARY KEY, s VARCHAR(30), b VARBINARY(10), u VARCHAR(5) CHARACTER SET utf8mb4);\n"))
	for i := 0; i < 60; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO bk.t VALUES ")
		for j := 0; j < 1000; j++ {
			id := i*1000 + j
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "(%d, 'row %d', X'%02x5c00', %s)", id, id, id%256, []string{"NULL", "'é'", "''"}[id%3])
		}
		src.Exec(t, b.String())
	}
	end := rpMasterPos(t, src)
	args := []string{"read", src.BinlogIndex(), "--to", dst.DSN() + "/", "--load-data"}
	// Waits short enough for kills to land on an idle machine, where a
	// whole run of LOAD DATA batches takes a few hundred milliseconds
	// (with 20-320 ms waits, two kills once left too little to kill).
	runs, kills := rpKillLoop(t, g, args, 8, 5, 60)
	t.Logf("%d runs, %d killed with SIGKILL", runs, kills)
	if kills < 3 {
		t.Errorf("only %d kills landed while replaying (want ≥ 3): make the workload bigger", kills)
	}
	rpCompare(t, src, dst, "read --to with kill -9")
	if cp := rpCheckpoint(t, dst); cp != end {
		t.Errorf("checkpoint %q, want %q", cp, end)
	}
	if n := stCount(t, dst, "Com_load"); n < 1 {
		t.Errorf("no LOAD DATA on the target")
	}
}

// TestReplayBatchedUpdateConflict: runs of updates go as INSERT … ON
// DUPLICATE KEY UPDATE (sink/mysql/upsert.go). An update of a row the
// target lacks stops the run with the very message one UPDATE at a time
// gives (--bulk-load=false); a row the target already holds with the
// after image's values (the UPDATE matches it: no conflict) is applied
// one by one, not reported; after the fix both targets equal the source.
func TestReplayBatchedUpdateConflict(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	batched := testserver.Start(t, testserver.Options{})
	plain := testserver.Start(t, testserver.Options{})
	var sql strings.Builder
	sql.WriteString("CREATE DATABASE bk;\nCREATE TABLE bk.u (id INT PRIMARY KEY, v INT, s VARCHAR(20) CHARACTER SET utf8mb4);\nBEGIN;\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sql, "INSERT INTO bk.u VALUES (%d, %d, 'r%d');\n", i, i, i)
	}
	sql.WriteString("COMMIT;\n")
	rpMysql(t, src, []byte(sql.String()))
	for _, dst := range []*testserver.Server{batched, plain} {
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
		// Behind binlogcdc's back: row 150 goes, row 100 already has
		// the values the source will give it.
		dst.Exec(t, "DELETE FROM bk.u WHERE id = 150", "UPDATE bk.u SET v = 1100, s = 'ü100' WHERE id = 100")
	}
	sql.Reset()
	sql.WriteString("BEGIN;\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sql, "UPDATE bk.u SET v = v + 1000, s = 'ü%d' WHERE id = %d;\n", i, i)
	}
	sql.WriteString("COMMIT;\n")
	rpMysql(t, src, []byte(sql.String()))

	inserts, rollbacks := stCount(t, batched, "Com_insert"), stCount(t, batched, "Com_rollback_to_savepoint")
	re := regexp.MustCompile("(?m)^.*conflict: update of `bk`.`u` \\(`id`=150\\) at binlog\\.\\d+:\\d+ row 0 gtid 0-1-\\d+: no row on the target matches the before image.*$")
	var msgs []string
	for _, dst := range []*testserver.Server{batched, plain} {
		before := rpCheckpoint(t, dst)
		_, errOut := rpRun(t, 1, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--bulk-load="+strconv.FormatBool(dst == batched))
		m := re.FindString(errOut)
		if m == "" {
			t.Fatalf("no conflict message naming the row:\n%s", errOut)
		}
		msgs = append(msgs, m)
		if cp := rpCheckpoint(t, dst); cp != before {
			t.Errorf("checkpoint moved from %q to %q after a conflict", before, cp)
		}
		if n := stVal(t, dst, "SELECT COUNT(*) FROM bk.u WHERE v >= 1000"); n != "1" {
			t.Errorf("%s rows with v >= 1000 after the conflict, want 1 (the target's own)", n)
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the conflict reads differently from a batch of updates:\n%s\nthan from UPDATEs:\n%s", msgs[0], msgs[1])
	}
	if stCount(t, batched, "Com_insert") == inserts || stCount(t, batched, "Com_rollback_to_savepoint") == rollbacks {
		t.Errorf("the updates did not go as a batch, undone")
	}

	for _, dst := range []*testserver.Server{batched, plain} {
		dst.Exec(t, "INSERT INTO bk.u VALUES (150, 150, 'r150')")
		rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--bulk-load="+strconv.FormatBool(dst == batched))
		rpCompare(t, src, dst, "after the fix")
	}
}

// TestReplayBulkInetUUID: MariaDB's INET6, INET4 and UUID columns are
// logged as BINARY(16)/BINARY(4), and a LOAD DATA field is parsed as
// their text: an INET6 address whose 16 bytes spell another address
// ("::ffff:10.0.0.10", "1:2:3:4:5:6:7:88") was stored as that one, with
// no warning. Their tables' insert runs go as INSERTs, byte for byte,
// and are not first tried (and undone) as LOAD DATA.
func TestReplayBulkInetUUID(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE bk", "CREATE TABLE bk.ip6 (id INT PRIMARY KEY, i6 INET6)", "CREATE TABLE bk.ids (id INT PRIMARY KEY, i4 INET4, u UUID)")
	var ip6, ids []string
	for i := 0; i < 300; i++ {
		i6 := []string{"3a3a:6666:6666:3a31:302e:302e:302e:3130", "313a:323a:333a:343a:353a:363a:373a:3838"}[i%2]
		ip6 = append(ip6, fmt.Sprintf("(%d, '%s')", i, i6))
		ids = append(ids, fmt.Sprintf("(%d, '10.0.%d.%d', UUID())", i, i/256, i%256))
	}
	src.Exec(t, "INSERT INTO bk.ip6 VALUES "+strings.Join(ip6, ", "), "INSERT INTO bk.ids VALUES "+strings.Join(ids, ", "))
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/", "--load-data")
	for _, q := range []string{"SELECT id, HEX(i6) FROM bk.ip6 ORDER BY id", "SELECT id, HEX(i4), HEX(u) FROM bk.ids ORDER BY id"} {
		if got, want := rpRows(t, dst, q), rpRows(t, src, q); got != want {
			t.Errorf("%s: the target's rows differ: %s", q, firstDiff(got, want))
		}
	}
	if n := stCount(t, dst, "Com_rollback_to_savepoint"); n != 0 {
		t.Errorf("%d LOAD DATA runs undone: the table's inserts should not go by LOAD DATA", n)
	}
}
