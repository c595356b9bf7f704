package e2e

// A program built on the library, outside the module: its own handler
// receives the stream, and survives kill -9 with every change handled
// exactly once, in order.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// libApp is the program: stream DSN into its handler, which writes each
// transaction as 'binlogcdc read' prints it to OUT, syncs it, and then
// records OUT's size and the transaction's End.Next in OUT.mark (a new
// file renamed over the old one). At start it cuts OUT back to the size
// in OUT.mark, and skips what the library delivers again: transactions
// not after the recorded End.Next (the handler contract, package doc).
const libApp = `package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/binlogcdc/binlogcdc"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

func main() {
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(1)
	}
}

func run(dsn, cp, out string) error {
	mark := out + ".mark"
	var size int64
	var last change.Position
	if b, err := os.ReadFile(mark); err == nil {
		if _, err := fmt.Sscanf(string(b), "%d %s %d", &size, &last.File, &last.Offset); err != nil {
			return fmt.Errorf("%s: %v", mark, err)
		}
	}
	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	if _, err := f.Seek(size, 0); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := jsonl.New(&buf, jsonl.Options{FlushEachCommit: true})

	opts := binlogcdc.DefaultStreamOptions()
	opts.Conn.Source = dsn
	opts.From = "earliest"
	opts.Checkpoint = cp
	s := &binlogcdc.Stream{Options: opts, Log: os.Stderr}
	s.Handler = binlogcdc.HandlerFunc(func(ctx context.Context, tx *binlogcdc.Tx) error {
		if last.File != "" && tx.End.Next.Compare(last) <= 0 {
			fmt.Fprintf(os.Stderr, "app: delivered again: %s:%d\n", tx.End.Next.File, tx.End.Next.Offset)
			return nil
		}
		buf.Reset()
		for i := range tx.Changes {
			if err := enc.Write(ctx, &tx.Changes[i]); err != nil {
				return err
			}
		}
		if err := enc.Commit(ctx, tx.End); err != nil {
			return err
		}
		n, err := f.Write(buf.Bytes())
		if err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		size += int64(n)
		tmp := mark + ".new"
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d %s %d\n", size, tx.End.Next.File, tx.End.Next.Offset)), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, mark); err != nil {
			return err
		}
		last = tx.End.Next
		return nil // acknowledged: the checkpoint may move past tx
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() { <-sig; s.Stop() }()
	return s.Run(context.Background())
}
`

// buildLibApp writes libApp into a module of its own that requires this
// one through a replace directive, and builds it. The go command may
// fetch the go.mod files of this module's dependencies that its own
// build did not need (a new module loads the whole graph): on a fresh
// machine's module cache, they were not there, and with GOPROXY=off the
// build failed (davecgh/go-spew's, required by cockroachdb/errors).
func buildLibApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goMod := "module example.com/cdcapp\n\ngo 1.26\n\nrequire github.com/binlogcdc/binlogcdc v0.0.0\n\nreplace github.com/binlogcdc/binlogcdc => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": []byte(libApp)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "cdcapp")
	cmd := exec.Command(goTool(), "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building a program on the library: %v\n%s", err, out)
	}
	return bin
}

// TestLibraryHandlerKill9 streams a write workload into libApp's
// handler, kills it with SIGKILL several times while it runs, and
// checks that what the handler wrote is byte for byte what 'binlogcdc
// read' prints for the same binlogs: every change once, in order.
func TestLibraryHandlerKill9(t *testing.T) {
	t.Parallel()
	app := buildLibApp(t)
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t,
		"CREATE DATABASE lib",
		"CREATE TABLE lib.a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, v VARCHAR(64))",
		"CREATE TABLE lib.b (x INT, y VARCHAR(20))", // no primary key
	)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	wrng := rand.New(rand.NewPCG(uint64(seed), 2))
	const txns = 1500
	var committed atomic.Int64
	workDone := stWorkload(srv.Conn(t), "lib", txns, &committed, nil, func(i int, maxID *int) []string {
		n := 1 + wrng.IntN(50)
		switch c := wrng.IntN(100); {
		case i == txns/2:
			return []string{"FLUSH BINARY LOGS"}
		case c < 65 || *maxID == 0:
			*maxID += n
			return []string{fmt.Sprintf("INSERT INTO lib.a (k, v) SELECT seq, CONCAT('t%d-', seq) FROM seq_1_to_%d", i, n)}
		case c < 80:
			lo := 1 + wrng.IntN(*maxID)
			return []string{fmt.Sprintf("UPDATE lib.a SET k = k + 1, v = CONCAT('u%d-', id) WHERE id BETWEEN %d AND %d", i, lo, lo+n)}
		case c < 90:
			lo := 1 + wrng.IntN(*maxID)
			return []string{fmt.Sprintf("DELETE FROM lib.a WHERE id BETWEEN %d AND %d", lo, lo+n/4)}
		default:
			return []string{"BEGIN",
				fmt.Sprintf("INSERT INTO lib.b SELECT seq, 'tx%d' FROM seq_1_to_%d", i, 1+n/5),
				fmt.Sprintf("DELETE FROM lib.b WHERE x = %d", 1+wrng.IntN(5)),
				"COMMIT"}
		}
	})

	cp, out := filepath.Join(dir, "cp.json"), filepath.Join(dir, "out.jsonl")
	size := func() int64 {
		fi, err := os.Stat(out)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	runs := 0
	start := func() *stRun {
		runs++
		tag := fmt.Sprintf("app%d", runs)
		return stStartWith(t, dir, tag, func(c *exec.Cmd) {
			c.Path, c.Args = app, []string{app, srv.DSN(), cp, out}
		})
	}
	// Kill while the workload runs, each time once the handler has made
	// some progress (a random amount of output past where it started).
	// How many kills fit in the workload depends on how fast each side
	// runs: past 40 the workload is let finish; then, if fewer than 6
	// kills came, more while the handler catches up.
	kills, working := 0, true
	for working && kills < 40 {
		from, want := size(), int64(1+rng.IntN(15000))
		r := start()
		stPoll(t, 2*time.Minute, r, "the handler's progress", func() bool {
			select {
			case err := <-workDone:
				if err != nil {
					t.Fatal(err)
				}
				working = false
			default:
			}
			return size() >= from+want || !working
		})
		r.kill9()
		kills++
	}
	if working {
		select {
		case err := <-workDone:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Minute):
			t.Fatal("the workload did not finish")
		}
	}
	ref := stRead(t, srv)
	for kills < 6 && size() < int64(len(ref)) {
		from, want := size(), int64(1+rng.IntN(15000))
		r := start()
		stPoll(t, 2*time.Minute, r, "the handler's progress", func() bool { return size() >= min(from+want, int64(len(ref))) })
		r.kill9()
		kills++
	}
	r := start()
	stPoll(t, 2*time.Minute, r, "the handler to catch up", func() bool { return size() >= int64(len(ref)) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0 (a graceful Stop); stderr:\n%s", code, r.errText())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	stSameOutput(t, fmt.Sprintf("the handler's output after %d kills", kills), got, ref)
	again := 0
	for i := 1; i <= runs; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("app%d.stderr", i)))
		again += strings.Count(string(b), "app: delivered again")
	}
	t.Logf("%d runs, %d kills, %d transactions delivered again and skipped, %d lines", runs, kills, again, strings.Count(string(got), "\n"))
}
