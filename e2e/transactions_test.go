package e2e

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestTransactionBoundaries checks what only committed changes, in commit
// order, means for the less common shapes of transactions MariaDB logs.
func TestTransactionBoundaries(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE tx", "USE tx",
		"CREATE TABLE inno (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB",
		// A prepared XA transaction that rolls back: logged as a group
		// ending in XA_PREPARE, then a group with XA ROLLBACK.
		"XA START 'rb'", "INSERT INTO inno VALUES (1, 'xa-rolled-back')", "XA END 'rb'", "XA PREPARE 'rb'",
		"XA ROLLBACK 'rb'",
		// One that commits, with another transaction committing between
		// its PREPARE and its COMMIT.
		"XA START 'ok'", "INSERT INTO inno VALUES (2, 'xa-committed')", "XA END 'ok'", "XA PREPARE 'ok'",
	)
	other := srv.Conn(t)
	if _, err := other.Execute("INSERT INTO tx.inno VALUES (3, 'between')"); err != nil {
		t.Fatal(err)
	}
	srv.Exec(t, "XA COMMIT 'ok'",
		// One phase: an ordinary commit.
		"XA START 'one'", "INSERT INTO inno VALUES (4, 'one-phase')", "XA END 'one'", "XA COMMIT 'one' ONE PHASE",
		// CREATE TABLE ... SELECT is one transaction with its rows.
		"CREATE TABLE cts ENGINE=InnoDB SELECT 1 AS id, 'cts-row' AS v",
		// Statements of one transaction start at different times; the
		// commit time is the transaction's.
		"BEGIN", "SET timestamp = 1700000000", "INSERT INTO inno VALUES (10, 'early')",
		"SET timestamp = 1700000100", "INSERT INTO inno VALUES (11, 'later')",
		"SET timestamp = 1700000200", "COMMIT", "SET timestamp = DEFAULT",
	)
	recs := DecodeServer(t, srv)

	var got []string
	gtidOf := map[string]string{}
	tsOf := map[string]string{}
	for _, r := range recs {
		if r.Op == "ddl" {
			if strings.HasPrefix(r.SQL, "CREATE TABLE") && strings.Contains(r.SQL, "cts") {
				gtidOf["ddl:cts"] = r.GTID
			}
			continue
		}
		v := r.After.M["v"].(string)
		got = append(got, v)
		gtidOf[v], tsOf[v] = r.GTID, r.TS
	}
	want := []string{"between", "xa-committed", "one-phase", "cts-row", "early", "later"}
	if len(got) != len(want) {
		t.Fatalf("rows %q, want %q (a rolled-back XA transaction must not appear; a prepared one appears at its XA COMMIT)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rows %q, want %q", got, want)
		}
	}
	// The XA transaction carries the GTID of its XA COMMIT group, after
	// the one that committed between.
	if gtidOf["xa-committed"] == "" || gtidOf["xa-committed"] == gtidOf["between"] {
		t.Errorf("XA COMMIT's rows have gtid %q (the transaction between: %q)", gtidOf["xa-committed"], gtidOf["between"])
	}
	// CREATE TABLE ... SELECT: the DDL and its row share one GTID.
	if g := gtidOf["cts-row"]; g == "" || g != gtidOf["ddl:cts"] {
		t.Errorf("CREATE TABLE ... SELECT row has gtid %q, its DDL %q: want the same, non-empty", g, gtidOf["ddl:cts"])
	}
	// Both rows of the multi-statement transaction carry its commit time.
	if tsOf["early"] != tsOf["later"] || tsOf["early"] != "2023-11-14T22:16:40Z" {
		t.Errorf("ts of the rows: %q and %q, want the commit time 2023-11-14T22:16:40Z for both", tsOf["early"], tsOf["later"])
	}
}
