package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// bigRowBytes is the LONGBLOB of TestLargeRow: 70 MiB, over the test
// servers' default max_allowed_packet (64 MiB).
const bigRowBytes = 70 << 20

// runPeak runs binlogcdc and returns its output and its peak RSS (VmHWM,
// read until it exits; see TestLargeTransaction).
func runPeak(t *testing.T, args ...string) (stdout []byte, stderr string, code int, peak int64) {
	t.Helper()
	return runPeakEnv(t, []string{"TMPDIR=" + t.TempDir()}, args...)
}

// runPeakEnv is runPeak with env added to the environment.
func runPeakEnv(t *testing.T, env []string, args ...string) (stdout []byte, stderr string, code int, peak int64) {
	t.Helper()
	cmd := exec.Command(cliBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			hwm := vmHWM(cmd.Process.Pid)
			if hwm == 0 {
				return
			}
			peak = hwm
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err := cmd.Wait()
	<-polled
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), errb.String(), code, peak
}

// bigRowState is what TestLargeRow compares between servers: per row its
// id, the length and SHA-256 of b, HEX(s); and CHECKSUM TABLE.
func bigRowState(t *testing.T, srv *testserver.Server) string {
	t.Helper()
	return rpRows(t, srv, "SELECT id, LENGTH(b), SHA2(b, 256), HEX(s) FROM big.t ORDER BY id") +
		"\nchecksum: " + rpRows(t, srv, "CHECKSUM TABLE big.t")
}

// TestLargeRow: a transaction with a 70 MiB LONGBLOB row (and a 2 MB
// LONGTEXT) flows through read to JSON lines (values checked against the
// server's) and through read --to (the target's rows, SHA-256 of each
// value and CHECKSUM TABLE equal to the source's), each at a peak RSS
// well under two copies of the row. A target whose max_allowed_packet
// is too small for the row stops the replay with an error naming the
// row's position and what to set, before anything of its transaction is
// written; after raising it, a rerun resumes and completes.
func TestLargeRow(t *testing.T) {
	src := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--max-allowed-packet=512M"}})
	src.Exec(t, "CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB, s LONGTEXT) DEFAULT CHARSET=utf8mb4",
		"INSERT INTO big.t VALUES (1, 'small', 'small')")
	src.Exec(t, "BEGIN",
		"INSERT INTO big.t VALUES (2, 'before the large row', REPEAT('naïve \"q\"\\n', 200000))",
		fmt.Sprintf("INSERT INTO big.t VALUES (3, REPEAT(UNHEX('00FF7F80E2'), %d), NULL)", bigRowBytes/5),
		"COMMIT")
	src.Exec(t, "INSERT INTO big.t VALUES (4, 'after', 'after')")
	src.FlushLogs(t)
	files := src.BinlogFiles(t)
	want := bigRowState(t, src)
	sums := map[string]string{}
	for _, r := range src.QueryStrings(t, "SELECT id, SHA2(b, 256), SHA2(s, 256) FROM big.t") {
		sums[*r[0]+"b"], sums[*r[0]+"s"] = *r[1], ""
		if r[2] != nil {
			sums[*r[0]+"s"] = *r[2]
		}
	}

	// read: JSON lines.
	out, errText, code, peak := runPeak(t, append([]string{"read"}, files...)...)
	if code != 0 {
		t.Fatalf("read: exit %d: %s", code, errText)
	}
	t.Logf("read: %d MB of JSON, peak RSS %d MB", len(out)>>20, peak>>20)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 200<<20)
	seen := 0
	for sc.Scan() {
		var l struct {
			Op    string `json:"op"`
			After *struct {
				ID int     `json:"id"`
				B  []byte  `json:"b"` // base64
				S  *string `json:"s"`
			} `json:"after"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %.100q: %v", sc.Bytes(), err)
		}
		if l.Op != "insert" {
			continue
		}
		id := fmt.Sprint(l.After.ID)
		s := ""
		if l.After.S != nil {
			s = fmt.Sprintf("%x", sha256.Sum256([]byte(*l.After.S)))
		}
		if b := sha256.Sum256(l.After.B); hex.EncodeToString(b[:]) != sums[id+"b"] || s != sums[id+"s"] {
			t.Errorf("read: row %s: %d bytes of b, SHA-256 %x, s %s; the server's: %s, %s", id, len(l.After.B), b, s, sums[id+"b"], sums[id+"s"])
		}
		seen++
	}
	if err := sc.Err(); err != nil || seen != 4 {
		t.Fatalf("read: %d inserts (%v), want 4", seen, err)
	}
	checkPeak(t, "read", peak)

	// read --to a target that accepts the row.
	dst := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--max-allowed-packet=512M"}})
	_, errText, code, peak = runPeak(t, append([]string{"read", "--to", dst.DSN() + "/"}, files...)...)
	if code != 0 {
		t.Fatalf("read --to: exit %d: %s", code, errText)
	}
	t.Logf("read --to: peak RSS %d MB", peak>>20)
	if got := bigRowState(t, dst); got != want {
		t.Errorf("read --to: target differs from the source:\n got  %.300s\n want %.300s", got, want)
	}
	checkPeak(t, "read --to", peak)

	// read --to a target whose max_allowed_packet (64 MiB) is too small.
	small := testserver.Start(t, testserver.Options{})
	_, errText, code, _ = runPeak(t, append([]string{"read", "--to", small.DSN() + "/"}, files...)...)
	for _, w := range []string{"insert of `big`.`t` at binlog.", "(row 0)",
		"max_allowed_packet (67108864 bytes)", "nothing of it was sent", "SET GLOBAL max_allowed_packet"} {
		if code != 1 || !strings.Contains(errText, w) {
			t.Errorf("too small a target: exit %d, stderr:\n%s\nwant exit 1 and %q", code, errText, w)
		}
	}
	if n := one(t, small, "SELECT COUNT(*) FROM big.t WHERE id >= 2"); n == nil || *n != "0" {
		t.Errorf("too small a target: %v rows of the refused transaction and after it were written", n)
	}
	small.Exec(t, "SET GLOBAL max_allowed_packet = 536870912")
	rpRun(t, 0, append([]string{"read", "--to", small.DSN() + "/"}, files...)...)
	if got := bigRowState(t, small); got != want {
		t.Errorf("after raising max_allowed_packet: target differs from the source:\n got  %.300s\n want %.300s", got, want)
	}
}

// checkPeak: the row is held once (the binlog event it came in), and
// neither its JSON nor its statement is built whole beside it.
func checkPeak(t *testing.T, what string, peak int64) {
	t.Helper()
	if limit := int64(bigRowBytes)*3/2 + 64<<20; peak > limit {
		t.Errorf("%s: peak RSS %d MB with a %d MB row, want at most %d MB", what, peak>>20, bigRowBytes>>20, limit>>20)
	}
}
