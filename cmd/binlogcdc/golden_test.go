package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

var (
	update   = flag.Bool("update", false, "rewrite testdata/*.jsonl from the current decoder")
	generate = flag.Bool("generate", false, "regenerate testdata/*.binlog from testdata/sql/*.sql on a private MariaDB (then run with -update)")
)

// TestGolden decodes every testdata/<case>.binlog and compares the output
// with testdata/<case>.jsonl. The binlogs come from testdata/sql/<case>.sql
// (see TestGenerateBinlogs).
func TestGolden(t *testing.T) {
	binlogs, _ := filepath.Glob("../../testdata/*.binlog")
	if len(binlogs) == 0 {
		t.Fatal("no testdata/*.binlog: run go test ./cmd/binlogcdc -run TestGenerateBinlogs -generate")
	}
	for _, bl := range binlogs {
		name := strings.TrimSuffix(filepath.Base(bl), ".binlog")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"read", "--ddl", bl}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			checkGolden(t, strings.TrimSuffix(bl, ".binlog")+".jsonl", out.Bytes())
		})
	}
}

// checkGolden compares got with the golden file (-update rewrites it).
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update after checking the diff):\n got: %s\nwant: %s", golden, got, want)
	}
}

// TestGenerateBinlogs rewrites testdata/<case>.binlog by running
// testdata/sql/<case>.sql on a fresh private MariaDB. It only runs with
// -generate.
func TestGenerateBinlogs(t *testing.T) {
	if !*generate {
		return
	}
	scripts, _ := filepath.Glob("../../testdata/sql/*.sql")
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".sql")
		sql, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		srv := testserver.Start(t, testserver.Options{})
		srv.Exec(t, splitSQL(string(sql))...)
		files := srv.BinlogFiles(t)
		srv.FlushLogs(t)
		src, err := os.Open(files[len(files)-1])
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join("../../testdata", name+".binlog"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
		srv.Stop(t)
	}
}

// splitSQL splits a script into statements at semicolons that end a
// line, dropping comment lines.
func splitSQL(script string) []string {
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			s := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")
			if s != "" {
				stmts = append(stmts, s)
			}
			cur.Reset()
		}
	}
	return stmts
}
