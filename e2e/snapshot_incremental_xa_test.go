package e2e

// An XA transaction during an incremental snapshot (stream
// --signal-table): prepared before the request, so before the position
// Pc of the table's first chunk, which does not hold its changes, and
// committed after it. Its changes take effect at its XA COMMIT, after Pc:
// they must reach the consumer. Two consumers run side by side, a --to
// target and JSON lines, each held inside the incremental snapshot (the
// target by a row lock its chunk's DELETE waits on, the JSON lines by a
// pipe the test stops reading) while the XA COMMIT is written, so that
// the table is still being copied when the stream reads it.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

const ixaRows = 50000

func TestIncrementalSnapshotXA(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	const ddl = "CREATE TABLE x.t (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)"
	src.Exec(t, "CREATE DATABASE x", ddl,
		fmt.Sprintf("INSERT INTO x.t SELECT seq, CONCAT('row ', seq), seq * 3 FROM x.seq_1_to_%d", ixaRows),
		"CREATE DATABASE ctl",
		"CREATE TABLE ctl.signal (id INT AUTO_INCREMENT PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
		"RESET MASTER")
	// Prepared before the request: keys of the first chunk (ids up to
	// 1000) updated, deleted, inserted, and one moved beyond every chunk
	// read before its XA COMMIT.
	xa := src.Conn(t)
	for _, q := range []string{"XA START 'ixa'",
		"UPDATE x.t SET v = 'xa', n = n + 7 WHERE id IN (3, 500)",
		"DELETE FROM x.t WHERE id = 7",
		"INSERT INTO x.t VALUES (-5, 'xa new', 1)",
		"UPDATE x.t SET id = 2000000, v = 'xa moved' WHERE id = 9",
		"XA END 'ixa'", "XA PREPARE 'ixa'"} {
		if _, err := xa.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// The target holds a row of the first chunk, locked: the chunk's
	// DELETE of its key range waits for it, its position taken.
	dst.Exec(t, "SET GLOBAL innodb_lock_wait_timeout = 600", "CREATE DATABASE x", ddl, "INSERT INTO x.t VALUES (500, 'target', 0)")
	lock := dst.Conn(t)
	for _, q := range []string{"BEGIN", "SELECT id FROM x.t WHERE id = 500 FOR UPDATE"} {
		if _, err := lock.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	dir := t.TempDir()
	common := []string{"--source", src.DSN(), "--from", "earliest", "--tables", "x.t", "--signal-table", "ctl.signal", "--snapshot-chunk", "1000"}
	toRun := stStart(t, dir, "to", nil, append([]string{"--to", dst.DSN() + "/", "--group-time", "20ms"}, common...)...)
	js := ixaStartPiped(t, dir, common...)
	stPoll(t, time.Minute, toRun, "the --to stream to connect", toRun.ready)
	stPoll(t, time.Minute, js.run, "the JSON stream to connect", js.run.ready)
	src.Exec(t, "INSERT INTO ctl.signal (type, data) VALUES ('snapshot', 'x.t')")

	// The JSON stream: read until a row of the second chunk (the first
	// chunk, read after the XA PREPARE, is written), then no further: the
	// stream blocks on the pipe long before its last chunk.
	js.readUntil(t, func(l string) bool {
		var x ssLine
		if !strings.HasPrefix(l, `{"op":"snapshot"`) {
			return false
		}
		ssDecode(t, l, &x)
		var id int
		fmt.Sscan(string(x.After["id"]), &id)
		return id > 1000
	})
	// The --to stream: its first chunk's DELETE (sent once the chunk's
	// position is taken) waits on the lock.
	stPoll(t, 2*time.Minute, toRun, "the first chunk's DELETE on the target", func() bool {
		return stVal(t, dst, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DELETE FROM `x`.`t`%'") != "0"
	})
	if _, err := xa.Execute("XA COMMIT 'ixa'"); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Execute("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	js.drain()

	done := "incremental snapshot of `x`.`t` done"
	stPoll(t, 5*time.Minute, toRun, "the --to stream's incremental snapshot to finish", func() bool { return strings.Contains(toRun.errText(), done) })
	stPoll(t, 5*time.Minute, js.run, "the JSON stream's incremental snapshot to finish", func() bool { return strings.Contains(js.run.errText(), done) })
	src.Exec(t, "INSERT INTO x.t VALUES (3000000, 'marker', 0)")
	stPoll(t, 2*time.Minute, toRun, "the --to stream to catch up", func() bool {
		c := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(c) == 1 && ssCaughtUp(t, src, *c[0][0])
	})
	stPoll(t, 2*time.Minute, js.run, "the JSON stream to catch up", func() bool { return bytes.Contains(js.bytes(), []byte(`"id":3000000`)) })
	for _, r := range []*stRun{toRun, js.run} {
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
		}
	}
	js.wait()

	if got := *src.QueryStrings(t, "SELECT CONCAT_WS(',', (SELECT v FROM x.t WHERE id = 3), (SELECT COUNT(*) FROM x.t WHERE id IN (7, 9)), (SELECT v FROM x.t WHERE id = 2000000))")[0][0]; got != "xa,0,xa moved" {
		t.Fatalf("the XA transaction did not commit on the source: %s", got)
	}
	want := rpSnapshot(t, src)
	delete(want, "`ctl`.`signal`")
	rpSame(t, "incremental snapshot --to with an XA transaction committed inside it", rpSnapshot(t, dst), want)

	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "x.t")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	w, g := ssFold(t, final)["x.t"], isFold(t, js.bytes())["x.t"]
	if len(w) != ixaRows+1 {
		t.Fatalf("the final snapshot has %d rows of x.t, want %d", len(w), ixaRows+1)
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return clip(l[i])
			}
			return "(end)"
		}
		t.Errorf("x.t: folded JSON lines give %d rows, the source %d; first difference at %d:\n got  %s\n want %s", len(g), len(w), i, at(g), at(w))
	}
}

// ixaPiped is a stream whose stdout the test reads through a pipe.
type ixaPiped struct {
	run  *stRun
	out  *bufio.Reader
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

func ixaStartPiped(t *testing.T, dir string, args ...string) *ixaPiped {
	t.Helper()
	p := &ixaPiped{done: make(chan struct{})}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &stRun{t: t, stderr: filepath.Join(dir, "json.stderr"), done: make(chan struct{})}
	se, err := os.Create(r.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close()
	r.cmd = exec.Command(cliBinary(t), append([]string{"stream"}, args...)...)
	r.cmd.Stdout, r.cmd.Stderr = pw, se
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	go func() {
		r.cmd.Wait()
		r.state = r.cmd.ProcessState
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
		pr.Close()
	})
	p.run, p.out = r, bufio.NewReaderSize(pr, 4096)
	return p
}

// readUntil reads lines (kept) until one satisfies stop.
func (p *ixaPiped) readUntil(t *testing.T, stop func(string) bool) {
	t.Helper()
	for {
		l, err := p.out.ReadString('\n')
		p.mu.Lock()
		p.buf.WriteString(l)
		p.mu.Unlock()
		if err != nil {
			t.Fatalf("reading the JSON stream: %v; stderr:\n%s", err, p.run.errText())
		}
		if stop(strings.TrimSuffix(l, "\n")) {
			return
		}
	}
}

// drain reads the rest in the background.
func (p *ixaPiped) drain() {
	go func() {
		defer close(p.done)
		b := make([]byte, 64<<10)
		for {
			n, err := p.out.Read(b)
			p.mu.Lock()
			p.buf.Write(b[:n])
			p.mu.Unlock()
			if err == io.EOF || err != nil {
				return
			}
		}
	}()
}

func (p *ixaPiped) wait() { <-p.done }

func (p *ixaPiped) bytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.buf.Bytes()...)
}
