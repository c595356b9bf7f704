package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rbSel is the SELECT list that fills a table of rbCols from seq.
const (
	rbCols = "id INT PRIMARY KEY, a BIGINT, d DECIMAL(12,2), dt DATETIME(6), s VARCHAR(60), t TEXT"
	rbSel  = "seq, seq*7919 % 1000003, (seq % 100000)/100, TIMESTAMPADD(MICROSECOND, seq*1234567, '2024-01-01'), CONCAT('user', seq % 5000, '@example.com'), REPEAT('lorem ipsum ', 1 + seq % 10)"
)

// rbLastXID returns the offset of the last XID event in a binlog file:
// where its last committed transaction's commit was logged.
func rbLastXID(t *testing.T, file string) uint64 {
	t.Helper()
	src, err := binlog.OpenFiles([]string{file}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var at uint64
	for {
		ev, err := src.Next(context.Background())
		if err == io.EOF {
			return at
		}
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		if ev.Type() == replication.XID_EVENT {
			at = ev.Pos.Offset
		}
	}
}

// TestRecoverBigTransactions: tables filled and changed by transactions
// of thousands of rows (INSERT … SELECT, a bulk UPDATE and DELETE, one
// transaction mixing inserts, key changes, deletes and updates of the
// same rows, a committed XA transaction, and one rolled back), which
// recover holds in a spill file until their commit past --memory-budget
// (or 8 MiB): with --memory-budget 0 from their first change (every
// recoverCLI call checks that run gives the same bytes), with 1 past
// their first MiB. Then the binlog
// ends in the middle of a big transaction, as a crash leaves it (the
// server's file cut before that transaction's XID event), and the server
// restarts into a new file where the tables are dropped. The SQL and
// --to (default and --memory-budget 0) of each table must equal the
// server's table before the cut-off transaction; and, from the whole
// file, after it.
func TestRecoverBigTransactions(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE bt", "USE bt", "CREATE TABLE bulk ("+rbCols+")", "CREATE TABLE nopk (a INT, s VARCHAR(60), t TEXT)")
	for i := 0; i < 4; i++ {
		src.Exec(t, fmt.Sprintf("INSERT INTO bulk SELECT %s FROM seq_%d_to_%d", rbSel, i*5000+1, i*5000+5000))
	}
	src.Exec(t, "USE bt",
		"UPDATE bulk SET d = d + 1.25, t = CONCAT('upd ', t) WHERE id % 4 = 0",
		"DELETE FROM bulk WHERE id % 100 = 5",
		"BEGIN",
		"INSERT INTO bulk SELECT "+rbSel+" FROM seq_20001_to_25000",
		"UPDATE bulk SET id = id + 100000 WHERE id BETWEEN 22501 AND 23750",
		"DELETE FROM bulk WHERE id BETWEEN 20001 AND 21250",
		"UPDATE bulk SET s = 'again' WHERE id > 100000 AND id % 3 = 0",
		"INSERT INTO bulk SELECT "+rbSel+" FROM seq_20001_to_20250",
		"COMMIT",
		"XA START 'big-rolled-back'", "INSERT INTO bulk SELECT "+rbSel+" FROM seq_200001_to_205000",
		"UPDATE bulk SET t = 'xa' WHERE id <= 2500",
		"XA END 'big-rolled-back'", "XA PREPARE 'big-rolled-back'", "XA ROLLBACK 'big-rolled-back'",
		"XA START 'big-committed'", "UPDATE bulk SET a = -a WHERE id <= 5000", "XA END 'big-committed'",
		"XA PREPARE 'big-committed'", "XA COMMIT 'big-committed'",
		// Equal rows in a table without a primary key.
		"INSERT INTO nopk SELECT seq % 1000, CONCAT('s', seq % 7), REPEAT('x', seq % 5) FROM seq_1_to_8000",
		"DELETE FROM nopk WHERE a < 300 LIMIT 1000",
		"UPDATE nopk SET t = 'changed' WHERE a % 10 = 1 LIMIT 500")
	want := map[string]rdSnap{"bulk": rdSnapshot(t, src, "bt", "bulk"), "nopk": rdSnapshot(t, src, "bt", "nopk")}
	// The last transaction: committed on the server, cut off below.
	src.Exec(t, "USE bt", "BEGIN",
		"UPDATE bulk SET t = 'never', s = NULL WHERE id % 2 = 1",
		"INSERT INTO bulk SELECT "+rbSel+" FROM seq_300001_to_305000",
		"DELETE FROM bulk WHERE id % 7 = 0",
		"DELETE FROM nopk WHERE a > 500",
		"COMMIT")
	after := map[string]rdSnap{"bulk": rdSnapshot(t, src, "bt", "bulk"), "nopk": rdSnapshot(t, src, "bt", "nopk")}
	src.Kill(t)
	src.Restart(t)
	src.Exec(t, "DROP DATABASE bt")
	files := src.BinlogFiles(t)
	if len(files) != 2 {
		t.Fatalf("%d binlog files after the restart, want 2", len(files))
	}
	// The crashed file, cut before its last transaction's commit.
	cut := t.TempDir()
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	at := rbLastXID(t, files[0])
	if at == 0 {
		t.Fatal("no XID event in the first binlog")
	}
	cutFiles := []string{filepath.Join(cut, filepath.Base(files[0])), filepath.Join(cut, filepath.Base(files[1]))}
	if err := os.WriteFile(cutFiles[0], b[:at], 0o600); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cutFiles[1], b, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, table := range []string{"bulk", "nopk"} {
		t.Run(table, func(t *testing.T) {
			for _, run := range []struct {
				name  string
				files []string
				want  rdSnap
			}{{"cut-off", cutFiles, want[table]}, {"whole", files, after[table]}} {
				args := append([]string{"--table", "bt." + table}, run.files...)
				out, errs := recoverCLI(t, 0, args...)
				for _, bad := range []string{"approximation", "conflict", "never inserted", "cannot"} {
					if strings.Contains(strings.ReplaceAll(errs, "conflicts: 0 skipped, 0 overwritten", ""), bad) {
						t.Errorf("%s: recover reports %q:\n%s", run.name, bad, errs)
					}
				}
				if run.name == "cut-off" {
					// 1 MiB: a transaction's first changes in memory, the rest in the file.
					if mb1, _ := recoverCLI(t, 0, append([]string{"--memory-budget", "1"}, args...)...); !bytes.Equal(mb1, out) {
						t.Errorf("%s: --memory-budget 1 wrote other SQL than the default (%d bytes, %d)", run.name, len(mb1), len(out))
					}
				}
				dst.Exec(t, "DROP DATABASE IF EXISTS bt")
				recLoadSQL(t, dst, out)
				rdSame(t, run.name+": SQL", rdSnapshot(t, dst, "bt", table), run.want)
				if run.name != "cut-off" {
					continue
				}
				for _, budget := range []string{"16", "0"} {
					dst.Exec(t, "DROP DATABASE IF EXISTS bt")
					recoverCLI(t, 0, append([]string{"--to", dst.DSN(), "--memory-budget", budget}, args...)...)
					rdSame(t, run.name+": --to --memory-budget "+budget, rdSnapshot(t, dst, "bt", table), run.want)
				}
			}
		})
	}
	// The counts of --list leave out the cut-off transaction and the XA
	// transaction rolled back.
	out, _ := recoverCLI(t, 0, append([]string{"--table", "bt.bulk", "--list"}, cutFiles...)...)
	// 20,000 + 5,000 + 250 inserts; 5,000 + 1,250 (key changes) + 417
	// + 4,950 (XA) updates; 200 + 1,250 deletes.
	if !strings.Contains(string(out), "25250/11617/1450") {
		t.Errorf("--list of bt.bulk, want 25250/11617/1450 rows:\n%s", out)
	}
}
