package e2e

import (
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/pipeline"
)

// TestCrashedServerBinlog: after a SIGKILL, MariaDB leaves the binlog it
// was writing with its in-use flag set and no ROTATE or STOP event, and
// starts a new file when it restarts. That file is not truncated: it
// decodes without error, alone (nothing to follow) and through the index
// with the files after it. (A file the server closed, whose flag is clear,
// must end with ROTATE or STOP: cmd/binlogcdc's TestReadTruncated.)
func TestCrashedServerBinlog(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE cr", "CREATE TABLE cr.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO cr.t VALUES (1, 'before')")
	srv.Kill(t)
	srv.Restart(t)
	srv.Exec(t, "INSERT INTO cr.t VALUES (2, 'after')")
	files := srv.BinlogFiles(t)
	if len(files) != 2 {
		t.Fatalf("%d binlog files after the restart, want 2", len(files))
	}

	recs := DecodeServer(t, srv)
	CheckInserts(t, srv, recs, "cr", "t", "id", nil, map[string]Oracle{"v": Str("v")})
	if rows := Rows(recs, "cr", "t"); len(rows) != 2 || rows[0].File != "binlog.000001" || rows[1].File != "binlog.000002" {
		t.Fatalf("want id 1 from binlog.000001 and id 2 from binlog.000002, got %d rows", len(rows))
	}
	out, err := Decode([]string{filepath.Join(srv.Dir, "binlog.000001")}, pipeline.Options{})
	if err != nil {
		t.Fatalf("the crashed file alone: %v", err)
	}
	alone, err := ParseLines(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(alone) != 1 || alone[0].After.M["v"] != "before" {
		t.Errorf("the crashed file alone: %s", out)
	}
}
