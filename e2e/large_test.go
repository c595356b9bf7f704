package e2e

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestLargeTransaction: one INSERT … SELECT of 200,000 rows (one
// transaction, thousands of rows events). 'binlogcdc read -o FILE' must
// write every row, in order, with the server's values, and its peak
// memory must stay far below the size of the output: the transaction's
// lines spill to a temporary file instead of memory.
func TestLargeTransaction(t *testing.T) {
	t.Parallel()
	const rows = 200000
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE big", "USE big",
		"CREATE TABLE t (id INT PRIMARY KEY, a BIGINT, s VARCHAR(300))",
		fmt.Sprintf("INSERT INTO t SELECT seq, seq * 3 - 1, CONCAT(seq, '-', REPEAT('x', 250)) FROM seq_1_to_%d", rows))
	if n := one(t, srv, "SELECT COUNT(*) FROM big.t"); n == nil || *n != strconv.Itoa(rows) {
		t.Fatalf("server has %v rows", n)
	}
	// The server's rows, by id, compactly: s as its MD5.
	type row struct {
		a   int64
		md5 string
	}
	want := make([]row, rows+1)
	for _, r := range srv.QueryStrings(t, "SELECT id, a, MD5(s) FROM big.t") {
		id, _ := strconv.Atoi(*r[0])
		a, _ := strconv.ParseInt(*r[1], 10, 64)
		want[id] = row{a, *r[2]}
	}

	outFile := filepath.Join(t.TempDir(), "out.jsonl")
	cmd := exec.Command(cliBinary(t), "read", "-o", outFile, srv.BinlogIndex())
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child's own peak RSS is its VmHWM. (getrusage's ru_maxrss is no
	// use: Linux carries the parent's high-water mark over fork and exec.)
	var maxRSS int64
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			if hwm := vmHWM(cmd.Process.Pid); hwm > 0 {
				maxRSS = hwm
			} else {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err := cmd.Wait()
	<-polled
	if err != nil {
		t.Fatalf("binlogcdc read: %v: %s", err, msg.String())
	}
	fi, err := os.Stat(outFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("output %d MB, peak RSS of binlogcdc %d MB", fi.Size()>>20, maxRSS>>20)
	if fi.Size() < 50<<20 {
		t.Fatalf("output is only %d bytes", fi.Size())
	}
	// Holding the transaction in memory would need more than the output's
	// size; the sink keeps 8 MB and spills the rest (≈45 MB RSS).
	if maxRSS > fi.Size()*3/4 || maxRSS > 100<<20 {
		t.Errorf("peak RSS %d MB for a %d MB transaction: the transaction was held in memory", maxRSS>>20, fi.Size()>>20)
	}

	f, err := os.Open(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, gtid := 0, ""
	var lastOff uint64
	lastRow := -1
	for sc.Scan() {
		var r struct {
			Op    string `json:"op"`
			Table string `json:"table"`
			After struct {
				ID json.Number `json:"id"`
				A  json.Number `json:"a"`
				S  string      `json:"s"`
			} `json:"after"`
			Pos struct {
				Offset uint64 `json:"offset"`
				Row    int    `json:"row"`
			} `json:"pos"`
			GTID string `json:"gtid"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if r.Op != "insert" || r.Table != "t" {
			continue
		}
		n++
		if string(r.After.ID) != strconv.Itoa(n) {
			t.Fatalf("row %d has id %s: not in order", n, r.After.ID)
		}
		if w := want[n]; string(r.After.A) != strconv.FormatInt(w.a, 10) || fmt.Sprintf("%x", md5.Sum([]byte(r.After.S))) != w.md5 {
			t.Fatalf("row %d: a=%s s=%.20q…, server a=%d MD5(s)=%s", n, r.After.A, r.After.S, w.a, w.md5)
		}
		if gtid == "" {
			gtid = r.GTID
		} else if r.GTID != gtid {
			t.Fatalf("row %d: gtid %s, earlier rows %s: one transaction", n, r.GTID, gtid)
		}
		switch {
		case r.Pos.Offset == lastOff && r.Pos.Row == lastRow+1:
		case r.Pos.Offset > lastOff && r.Pos.Row == 0:
		default:
			t.Fatalf("row %d: pos %d/%d after %d/%d", n, r.Pos.Offset, r.Pos.Row, lastOff, lastRow)
		}
		lastOff, lastRow = r.Pos.Offset, r.Pos.Row
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Fatalf("%d rows decoded, want %d", n, rows)
	}
	if !strings.HasPrefix(gtid, "0-1-") {
		t.Errorf("gtid %q", gtid)
	}
}

// vmHWM returns the peak resident set size of process pid in bytes (the
// VmHWM line of /proc/PID/status), or 0 when it cannot be read (the
// process is gone or a zombie).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
