package e2e

// read - (issue 27 item 14): stdin is decoded as it arrives, plain, gzip
// or zstd; a cut stream ends with exit code 4 after every complete
// transaction; --start-position works on it.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// stdinBinlog is a closed binlog with five transactions of one insert.
type stdinBinlog struct {
	data         []byte
	starts, ends []int  // each transaction's first byte (its GTID event) and end
	want         []byte // read's lines, the file named "stdin"
}

func makeStdinBinlog(t *testing.T) *stdinBinlog {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(200))")
	for i := 1; i <= 5; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO s.t VALUES (%d, REPEAT('v', %d))", i, 20*i))
	}
	srv.FlushLogs(t)
	first := srv.BinlogFiles(t)[0]
	b := &stdinBinlog{}
	var err error
	if b.data, err = os.ReadFile(first); err != nil {
		t.Fatal(err)
	}
	src, err := binlog.OpenFiles([]string{first}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		ev, err := src.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type() {
		case replication.MARIADB_GTID_EVENT:
			b.starts = append(b.starts, int(ev.Pos.Offset))
		case replication.XID_EVENT:
			b.ends = append(b.ends, int(ev.NextPos.Offset))
		}
	}
	// The first two transactions are the DDL (no XID).
	b.starts = b.starts[len(b.starts)-5:]
	if len(b.ends) != 5 {
		t.Fatalf("%d XID events, want 5", len(b.ends))
	}
	out, _ := rpRun(t, 0, "read", first)
	b.want = bytes.ReplaceAll(out, []byte(`"file":"binlog.000001"`), []byte(`"file":"stdin"`))
	if n := bytes.Count(b.want, []byte("\n")); n != 5 {
		t.Fatalf("the file gives %d lines, want 5", n)
	}
	return b
}

// lines returns the first n lines of b.want.
func (b *stdinBinlog) lines(i, j int) []byte {
	ls := bytes.SplitAfter(b.want, []byte("\n"))
	return bytes.Join(ls[i:j], nil)
}

// compressWriter wraps w in the compression named (a Flush makes what was
// written so far decodable).
func compressWriter(t *testing.T, kind string, w io.Writer) (io.Writer, func() error, func() error) {
	switch kind {
	case "gzip":
		z := gzip.NewWriter(w)
		return z, z.Flush, z.Close
	case "zstd":
		z, err := zstd.NewWriter(w)
		if err != nil {
			t.Fatal(err)
		}
		return z, z.Flush, z.Close
	}
	nop := func() error { return nil }
	return w, nop, nop
}

// TestStdinStreams: read - prints each transaction as soon as its bytes
// have arrived, before the end of stdin (plain, gzip, zstd): the test
// sends three transactions, waits for their three lines with stdin still
// open, then sends the rest.
func TestStdinStreams(t *testing.T) {
	t.Parallel()
	b := makeStdinBinlog(t)
	for _, kind := range []string{"plain", "gzip", "zstd"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(cliBinary(t), "read", "-")
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			w, flush, closeZ := compressWriter(t, kind, in)
			if _, err := w.Write(b.data[:b.ends[2]]); err != nil {
				t.Fatal(err)
			}
			if err := flush(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(out)
			var got []byte
			for i := 0; i < 3; i++ { // stdin stays open meanwhile
				l, err := r.ReadBytes('\n')
				if err != nil {
					t.Fatalf("line %d, before the end of stdin: %v (stderr %s)", i+1, err, errb.String())
				}
				got = append(got, l...)
			}
			if !bytes.Equal(got, b.lines(0, 3)) {
				t.Errorf("before the end of stdin: got\n%s\nwant\n%s", got, b.lines(0, 3))
			}
			if _, err := w.Write(b.data[b.ends[2]:]); err != nil {
				t.Fatal(err)
			}
			if err := closeZ(); err != nil {
				t.Fatal(err)
			}
			in.Close()
			rest, _ := io.ReadAll(r)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("read -: %v: %s", err, errb.String())
			}
			if got = append(got, rest...); !bytes.Equal(got, b.want) {
				t.Errorf("read -: got\n%s\nwant\n%s", got, b.want)
			}
			// The file ends with a ROTATE: stdin cannot follow it, and says so.
			if !strings.Contains(errb.String(), "stdin ends with a ROTATE to binlog.000002, which was not read") {
				t.Errorf("stderr %q: want the ROTATE that was not followed", errb.String())
			}
		})
	}
}

// TestStdinCutAndStart: stdin cut inside the fourth transaction ends with
// exit code 4 after the three before it, plain or compressed; a damaged
// archive too; --start-position on stdin starts there, and a position
// inside an event is refused.
func TestStdinCutAndStart(t *testing.T) {
	t.Parallel()
	b := makeStdinBinlog(t)
	cut := b.data[:b.ends[3]-10] // inside the fourth transaction's last event
	run := func(stdin []byte, args ...string) ([]byte, string, int) {
		t.Helper()
		if args[0] != "recover" {
			args = append([]string{"read"}, args...)
		}
		cmd := exec.Command(cliBinary(t), args...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), errb.String(), code
	}
	for _, kind := range []string{"plain", "gzip", "zstd"} {
		var buf bytes.Buffer
		w, _, closeZ := compressWriter(t, kind, &buf)
		w.Write(cut)
		closeZ()
		out, errText, code := run(buf.Bytes(), "-")
		if code != 4 || !bytes.Equal(out, b.lines(0, 3)) || !strings.Contains(errText, "stdin:") {
			t.Errorf("read - (%s, cut in the fourth transaction): exit %d, stderr %q; got\n%s\nwant\n%s", kind, code, errText, out, b.lines(0, 3))
		}
	}
	// A gzip stream cut short (its own end missing): the complete
	// transactions decompressed before the cut, then exit 4.
	gz := gzipped(t, b.data)
	out, errText, code := run(gz[:len(gz)*2/3], "-")
	if code != 4 || !bytes.HasPrefix(b.want, out) || !strings.Contains(errText, "stdin:") {
		t.Errorf("read - (gzip cut short): exit %d, stderr %q, got\n%s", code, errText, out)
	}
	// A damaged gzip stream (a byte changed in its data): exit 4, never a partial line.
	bad := append([]byte(nil), gz...)
	bad[len(bad)-12] ^= 0xff
	out, errText, code = run(bad, "-")
	if code != 4 || !bytes.HasPrefix(b.want, out) {
		t.Errorf("read - (gzip damaged): exit %d, stderr %q, got\n%s", code, errText, out)
	}

	// --start-position at the third transaction.
	for _, kind := range []string{"plain", "zstd"} {
		var buf bytes.Buffer
		w, _, closeZ := compressWriter(t, kind, &buf)
		w.Write(b.data)
		closeZ()
		out, errText, code = run(buf.Bytes(), "--start-position", fmt.Sprintf("stdin:%d", b.starts[2]), "-")
		if code != 0 || !bytes.Equal(out, b.lines(2, 5)) {
			t.Errorf("read --start-position stdin:%d - (%s): exit %d, stderr %q; got\n%s\nwant\n%s", b.starts[2], kind, code, errText, out, b.lines(2, 5))
		}
		out, errText, code = run(buf.Bytes(), "--start-position", fmt.Sprintf("stdin:%d", b.starts[2]+3), "-")
		if code != 1 || len(out) != 0 || !strings.Contains(errText, "not the start of an event") ||
			!strings.Contains(errText, fmt.Sprintf("the nearest event starts are %d and", b.starts[2])) {
			t.Errorf("read --start-position stdin:%d - (%s): exit %d, stderr %q, stdout %q", b.starts[2]+3, kind, code, errText, out)
		}
		out, errText, code = run(buf.Bytes(), "--start-position", fmt.Sprintf("stdin:%d", len(b.data)+100), "-")
		if code != 4 || len(out) != 0 || !strings.Contains(errText, "past the end of stdin") {
			t.Errorf("read --start-position past the end - (%s): exit %d, stderr %q, stdout %q", kind, code, errText, out)
		}
	}
	// Empty stdin: named so.
	if _, errText, code := run(nil, "-"); code != 4 || !strings.Contains(errText, "stdin:0: not a binlog file: it is empty") {
		t.Errorf("read - (empty): exit %d, stderr %q", code, errText)
	}
	// recover reads its binlogs more than once: stdin is copied, as before.
	out, errText, code = run(b.data, "recover", "--table", "s.t", "--incarnation", "1", "-")
	if code != 0 || !bytes.Contains(out, []byte("INSERT")) || bytes.Count(out, []byte("(5,")) != 1 {
		t.Errorf("recover --table s.t -: exit %d, stderr %q, got\n%s", code, errText, out)
	}
}
