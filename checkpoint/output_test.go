package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.json")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files: a second one, even in this
	// process, is refused.
	_, err = Lock(path)
	if err == nil {
		t.Fatal("a second Lock succeeded")
	}
	for _, w := range []string{path + " is in use by another binlogcdc", fmt.Sprintf("PID %d holds %s.lock", os.Getpid(), path), "--checkpoint"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	unlock()
	unlock2, err := Lock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
	// A directory that does not exist: a local write failure.
	var we *WriteError
	if _, err := Lock(filepath.Join(t.TempDir(), "no", "cp.json")); !errors.As(err, &we) {
		t.Errorf("Lock in a missing directory: %v, want a WriteError", err)
	}
}

func TestOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	abs, _ := filepath.Abs(path)

	o, err := OpenOutput(path, nil, logf)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("{\"a\":1}\n{\"a\":2}\n"))
	var c Checkpoint
	o.record(&c)
	if c.Output != abs || c.OutputSize != 16 {
		t.Errorf("recorded %q %d, want %q 16", c.Output, c.OutputSize, abs)
	}
	if _, err := OpenOutput(path, nil, logf); err == nil || !strings.Contains(err.Error(), "another process is writing to it") {
		t.Errorf("a second writer: %v", err)
	}
	// A transaction written after the checkpoint, then one cut by a
	// full disk.
	o.Write([]byte("{\"a\":3}\n{\"a\":"))
	o.Close()

	// Resuming from the checkpoint cuts both off.
	o, err = OpenOutput(path, &c, logf)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"a\":1}\n{\"a\":2}\n" {
		t.Errorf("after the resume the file holds %q", b)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "cut off the 13 bytes after the checkpoint") {
		t.Errorf("logged %q", logged)
	}
	o.Write([]byte("{\"a\":3}\n"))
	o.Close()
	if b, _ := os.ReadFile(path); string(b) != "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n" {
		t.Errorf("after writing on the file holds %q", b)
	}

	// Without a checkpoint that knows the file, a cut line is refused.
	os.WriteFile(path, []byte("{\"a\":1}\n{\"a"), 0o644)
	_, err = OpenOutput(path, nil, logf)
	if err == nil || !strings.Contains(err.Error(), "ends in a cut line") || !strings.Contains(err.Error(), "truncate -s 8 "+path) {
		t.Errorf("cut line without a checkpoint: %v", err)
	}
	other := &Checkpoint{Output: filepath.Join(dir, "other.jsonl"), OutputSize: 3}
	if _, err = OpenOutput(path, other, logf); err == nil {
		t.Error("cut line with a checkpoint of another file: accepted")
	}
	os.WriteFile(path, []byte("no newline at all"), 0o644)
	if _, err = OpenOutput(path, nil, logf); err == nil || !strings.Contains(err.Error(), "truncate -s 0 ") {
		t.Errorf("a file without newline: %v", err)
	}

	// Shorter than at the checkpoint: refused unless empty.
	os.WriteFile(path, []byte("{\"a\":1}\n"), 0o644)
	if _, err = OpenOutput(path, &c, logf); err == nil || !strings.Contains(err.Error(), "fewer than the 16") {
		t.Errorf("a shorter file: %v", err)
	}
	os.Remove(path)
	logged = nil
	o, err = OpenOutput(path, &c, logf)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if len(logged) != 1 || !strings.Contains(logged[0], "is empty") {
		t.Errorf("logged %q", logged)
	}

	// A failed write is a WriteError.
	o, _ = OpenOutput(path, nil, logf)
	o.f.Close()
	var we *WriteError
	if _, err := o.Write([]byte("x\n")); !errors.As(err, &we) || !strings.Contains(err.Error(), "cannot write -o "+abs) {
		t.Errorf("write to a closed file: %v", err)
	}
}

func TestSaver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp.json")
	out, err := OpenOutput(filepath.Join(dir, "out"), nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := &Saver{Path: path, Server: "db1:3306", Output: out}
	if err := s.Start(change.Position{File: "binlog.000001", Offset: 300}, "0-1-7,1-1-2"); err != nil {
		t.Fatal(err)
	}
	cp, err := Load(path)
	if err != nil || cp == nil {
		t.Fatal(cp, err)
	}
	if cp.File != "binlog.000001" || cp.Offset != 300 || cp.GTIDSet != "0-1-7,1-1-2" || cp.Server != "db1:3306" || cp.OutputSize != 0 || cp.Output == "" {
		t.Errorf("start checkpoint %+v", cp)
	}
	out.Write([]byte("line\n"))
	if err := s.Commit(change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: 900}, GTID: "0-1-8"}); err != nil {
		t.Fatal(err)
	}
	cp, _ = Load(path)
	if cp.Offset != 900 || cp.LastGTID != "0-1-8" || cp.GTIDSet != "0-1-8,1-1-2" || cp.OutputSize != 5 {
		t.Errorf("after a commit %+v", cp)
	}
	if h := s.Held(); h.Offset != 900 {
		t.Errorf("Held %+v", h)
	}

	// A failed save sticks.
	os.Remove(path)
	os.Mkdir(path, 0o755)
	os.WriteFile(filepath.Join(path, "x"), nil, 0o644) // a non-empty directory where the file goes
	err = s.Commit(change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: 1000}, GTID: "0-1-9"})
	var we *WriteError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "cannot write the checkpoint "+path) {
		t.Fatalf("save over a directory: %v", err)
	}
	if err2 := s.Commit(change.TxEnd{Next: change.Position{File: "binlog.000001", Offset: 1100}}); err2 != err {
		t.Errorf("the next commit: %v", err2)
	}
	if err2 := s.Flush(); err2 != err {
		t.Errorf("flush: %v", err2)
	}
	if h := s.Held(); h.Offset != 900 || !strings.Contains(s.String(), "holds binlog.000001:900") {
		t.Errorf("Held %+v, %s", h, s)
	}
}
