package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// recSink records, at every commit, where the transaction ended and how
// many lines were written by then.
type recSink struct {
	*jsonl.Sink
	marks []mark
}

type mark struct {
	next  uint64
	lines int
}

func (s *recSink) Commit(ctx context.Context, tx change.TxEnd) error {
	err := s.Sink.Commit(ctx, tx)
	s.marks = append(s.marks, mark{tx.Next.Offset, int(s.Sink.Lines)})
	return err
}

// TestReadTruncated cuts a closed binlog file at every event boundary and
// inside every event, and corrupts it: 'read' exits 4, names the file and
// the offset, and prints exactly the transactions that committed before
// the damage, never part of one.
func TestReadTruncated(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	if v := srv.QueryStrings(t, "SELECT @@binlog_checksum")[0][0]; v == nil || *v != "CRC32" {
		t.Fatalf("binlog_checksum = %v, want CRC32", v)
	}
	srv.Exec(t, "CREATE DATABASE tr", "USE tr",
		"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100))",
		"CREATE TABLE u (id INT PRIMARY KEY, n INT)",
		"INSERT INTO t VALUES (1, 'one')",
		"BEGIN",
		"INSERT INTO t VALUES (2, 'two'), (3, 'three')",
		"UPDATE t SET v = 'ONE' WHERE id = 1",
		"INSERT INTO u VALUES (1, 10)",
		"DELETE FROM t WHERE id = 3",
		"COMMIT",
		"INSERT INTO u VALUES (2, 20)",
		"UPDATE u SET n = n + 1",
	)
	srv.FlushLogs(t)
	orig, err := os.ReadFile(srv.BinlogFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "binlog.000001")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	// The reference: the whole file, with the commit points.
	src, err := binlog.OpenFiles([]string{path}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	rs := &recSink{Sink: jsonl.New(&full, jsonl.Options{})}
	if err := pipeline.New(src, rs, pipeline.Options{}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs.Close(context.Background())
	src.Close()
	ref := strings.SplitAfter(full.String(), "\n")
	ref = ref[:len(ref)-1]
	if len(ref) != 9 {
		t.Fatalf("reference has %d lines, want 9:\n%s", len(ref), full.String())
	}
	committedBefore := func(off uint64) string {
		n := 0
		for _, m := range rs.marks {
			if m.next <= off {
				n = m.lines
			}
		}
		return strings.Join(ref[:n], "")
	}

	// Event boundaries, from the server.
	type span struct{ start, end uint64 }
	var events []span
	for _, ev := range showEvents(t, srv, "binlog.000001") {
		events = append(events, span{ev.pos, ev.end})
	}
	size := uint64(len(orig))
	if events[len(events)-1].end != size {
		t.Fatalf("the last event ends at %d, the file is %d bytes", events[len(events)-1].end, size)
	}

	try := func(what string, data []byte, wantCode int, wantAt uint64, wantOut, wantErr string) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := cli("read", path)
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d; stderr: %s", what, code, wantCode, stderr)
		}
		if wantCode != exitOK {
			if at := fmt.Sprintf("binlog.000001:%d:", wantAt); !strings.Contains(stderr, at) || !strings.Contains(stderr, wantErr) {
				t.Errorf("%s: stderr lacks %q or %q:\n%s", what, at, wantErr, stderr)
			}
		}
		if stdout != wantOut {
			t.Errorf("%s: stdout has %d lines, want %d:\n%s", what, strings.Count(stdout, "\n"), strings.Count(wantOut, "\n"), stdout)
		}
	}

	try("the whole file", orig, exitOK, 0, full.String(), "")
	cuts := 0
	for c := uint64(0); c < 4; c++ {
		try(fmt.Sprintf("cut at %d", c), orig[:c], exitCorrupt, 0, "", "not a binlog file")
		cuts++
	}
	// Cut at every event boundary: the file was closed by the server, so
	// it must end with its ROTATE; anything else is a truncated copy.
	try("cut after the magic", orig[:4], exitCorrupt, 4, "", "truncated")
	for _, ev := range events[:len(events)-1] {
		try(fmt.Sprintf("cut at the boundary %d", ev.end), orig[:ev.end], exitCorrupt, ev.end, committedBefore(ev.end), "truncated")
		cuts++
	}
	// Cut inside every event: in its header, in its body, before its
	// checksum's last byte.
	for _, ev := range events {
		for _, c := range []uint64{ev.start + 1, ev.start + 10, ev.start + 19, (ev.start + ev.end) / 2, ev.end - 1} {
			if c <= ev.start || c >= ev.end {
				continue
			}
			try(fmt.Sprintf("cut at %d inside the event at %d", c, ev.start), orig[:c], exitCorrupt, ev.start, committedBefore(ev.start), "truncated")
			cuts++
		}
	}
	t.Logf("%d cut points", cuts)

	// A flipped byte in the body of each rows event of the multi-statement
	// transaction: a CRC32 mismatch at that event.
	flipped := 0
	for _, ev := range showEvents(t, srv, "binlog.000001") {
		if !strings.HasSuffix(ev.typ, "_rows_v1") {
			continue
		}
		bad := slices.Clone(orig)
		bad[(ev.pos+ev.end)/2] ^= 0x20
		try(fmt.Sprintf("flipped byte in the %s event at %d", ev.typ, ev.pos), bad, exitCorrupt, ev.pos, committedBefore(ev.pos), "checksum mismatch")
		flipped++
	}
	if flipped < 5 {
		t.Errorf("only %d rows events", flipped)
	}
	// A damaged size field.
	mid := events[len(events)/2]
	bad := slices.Clone(orig)
	bad[mid.start+9], bad[mid.start+10], bad[mid.start+11], bad[mid.start+12] = 0xff, 0xff, 0xff, 0x7f
	try("impossible event size", bad, exitCorrupt, mid.start, committedBefore(mid.start), "event size")
}
