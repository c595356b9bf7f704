package live

import (
	"context"
	"strconv"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestQuiet: between the end of a transaction and a snapshot's position
// in the next binlog's header there are only inert events; a
// transaction in between is found, in the same file or the next one.
func TestQuiet(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE q", "CREATE TABLE q.t (id INT PRIMARY KEY)", "INSERT INTO q.t VALUES (1)")
	c := srv.Conn(t)
	pos := func() change.Position {
		t.Helper()
		r := srv.QueryStrings(t, "SHOW MASTER STATUS")
		off, err := strconv.ParseUint(*r[0][1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return change.Position{File: *r[0][0], Offset: off}
	}
	ctx := context.Background()
	check := func(what string, from, to change.Position, want bool) {
		t.Helper()
		got, err := quiet(ctx, c, from, to)
		if err != nil || got != want {
			t.Errorf("%s: quiet(%v, %v) = %v, %v; want %v", what, from, to, got, err, want)
		}
	}
	end1 := pos() // the end of the INSERT
	check("nothing in between", end1, end1, true)
	srv.FlushLogs(t)
	header := pos() // after the new file's header events
	if header.File == end1.File {
		t.Fatalf("FLUSH BINARY LOGS stayed in %s", end1.File)
	}
	check("a rotation and a header", end1, header, true)
	srv.Exec(t, "INSERT INTO q.t VALUES (2)")
	end2 := pos()
	check("a transaction after the header", header, end2, false)
	check("a rotation, a header and a transaction", end1, end2, false)
	before := change.Position{File: end1.File, Offset: 4}
	check("transactions of the first file", before, end1, false)
	check("a purged or unknown file", change.Position{File: "binlog.000000", Offset: 4}, header, false)
}
