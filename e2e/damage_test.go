package e2e

// Whole events deleted, duplicated or reordered, their CRC32 intact
// (issue 12 item 6): every event header's log_pos must agree with where
// the next event starts.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// eventSpans returns the [start, end) of every event of a binlog file.
func eventSpans(t *testing.T, b []byte) [][2]int {
	t.Helper()
	var spans [][2]int
	for off := 4; off < len(b); {
		size := int(binary.LittleEndian.Uint32(b[off+9:]))
		if size < 19 || off+size > len(b) {
			t.Fatalf("bad event at %d", off)
		}
		spans = append(spans, [2]int{off, off + size})
		off += size
	}
	return spans
}

// TestMovedEvents: deleting, duplicating or swapping any whole event (or
// a whole transaction) of a real binlog is exit code 4 at an offset, and
// the lines printed are exactly those of the transactions before it.
func TestMovedEvents(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
	for i := 1; i <= 3; i++ {
		src.Exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, 'a'), (%d, 'b'), (%d, 'c')", 10*i, 10*i+1, 10*i+2))
	}
	src.Exec(t, "BEGIN", "UPDATE d.t SET v = 'u' WHERE id = 10", "DELETE FROM d.t WHERE id = 21", "INSERT INTO d.t VALUES (99, 'z')", "COMMIT")
	src.FlushLogs(t)
	orig, err := os.ReadFile(src.BinlogFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "binlog.000001")
	write := func(b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(orig)
	full, _ := rpRun(t, 0, "read", path)
	if n := bytes.Count(full, []byte("\n")); n != 12 {
		t.Fatalf("the intact file: %d lines, want 12", n)
	}

	spans := eventSpans(t, orig)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	try := func(what string, b []byte) {
		t.Helper()
		write(b)
		out, errText, code := runCLI(t, nil, "read", path)
		if code != 4 || !strings.Contains(errText, "binlog.000001:") {
			t.Errorf("%s: exit %d, want 4 with the offset; %d lines; stderr %s", what, code, bytes.Count(out, []byte("\n")), errText)
		}
		if !bytes.HasPrefix(full, out) {
			t.Errorf("%s: printed lines that are not those of the intact file:\n%s", what, out)
		}
	}
	// Every event but the FORMAT_DESCRIPTION_EVENT.
	for i := 1; i < len(spans); i++ {
		s, e := spans[i][0], spans[i][1]
		ev := orig[s:e]
		typ := orig[s+4]
		try(fmt.Sprintf("event %d (type %d) at %d duplicated", i, typ, s), cat(orig[:e], ev, orig[e:]))
		try(fmt.Sprintf("event %d (type %d) at %d deleted", i, typ, s), cat(orig[:s], orig[e:]))
		if i+1 < len(spans) {
			n := orig[e:spans[i+1][1]]
			try(fmt.Sprintf("events %d and %d (types %d, %d) at %d swapped", i, i+1, typ, orig[e+4], s), cat(orig[:s], n, ev, orig[spans[i+1][1]:]))
		}
	}
	// A whole transaction (GTID … XID) duplicated: the GTID events of the
	// three INSERTs are found by type (MariaDB GTID_EVENT 162).
	var gtids []int
	for i, sp := range spans {
		if orig[sp[0]+4] == 162 {
			gtids = append(gtids, i)
		}
	}
	if len(gtids) < 4 {
		t.Fatalf("%d GTID events", len(gtids))
	}
	tx := orig[spans[gtids[2]][0]:spans[gtids[3]][0]]
	try("a whole transaction duplicated", cat(orig[:spans[gtids[3]][0]], tx, orig[spans[gtids[3]][0]:]))
	try("a whole transaction deleted", cat(orig[:spans[gtids[2]][0]], orig[spans[gtids[3]][0]:]))
}
