package binlogcdc_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// lockedBuffer is an io.Writer the test reads while a stream writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runExample runs example against srv until its output holds want, then
// sends sig to this process, which the example handles (it registered
// for it before it started streaming, and streaming produced the
// output). It returns the output.
func runExample(t *testing.T, srv *testserver.Server, example func(), sig syscall.Signal, want string) string {
	t.Helper()
	out := &lockedBuffer{}
	exampleSource, exampleCheckpoint, exampleOut = srv.DSN(), filepath.Join(t.TempDir(), "cp.json"), out
	done := make(chan struct{})
	go func() {
		defer close(done)
		example()
	}()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), want); {
		select {
		case <-done:
			t.Fatalf("the example returned before printing %q; it printed:\n%s", want, out.String())
		default:
		}
		if time.Now().After(deadline) { // a hang guard, not a timing assertion
			t.Fatalf("the example did not print %q; it printed:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	<-done
	return out.String()
}

// TestExamplesStream runs ExampleStream and ExampleStream_sink against a
// private MariaDB: what they show works as shown.
func TestExamplesStream(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY, total DECIMAL(10,2))",
		"INSERT INTO shop.orders VALUES (1, 9.50), (2, 20)",
		"UPDATE shop.orders SET total = 10 WHERE id = 1",
		"DELETE FROM shop.orders WHERE id = 2",
	)
	got := runExample(t, srv, ExampleStream, syscall.SIGTERM, "delete shop.orders")
	var ops []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		ops = append(ops, strings.Fields(l)[0])
	}
	if strings.Join(ops, " ") != "insert insert update delete" {
		t.Errorf("ExampleStream printed:\n%s\nwant insert, insert, update, delete", got)
	}

	got = runExample(t, srv, ExampleStream_sink, syscall.SIGINT, `"op":"delete"`)
	if n := strings.Count(got, "\n"); n != 4 || !strings.Contains(got, `"table":"orders"`) {
		t.Errorf("ExampleStream_sink printed %d lines, want 4:\n%s", n, got)
	}
}
