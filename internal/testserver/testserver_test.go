package testserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func startTimed(t *testing.T, opts Options) *Server {
	t.Helper()
	t0 := time.Now()
	s := Start(t, opts)
	t.Logf("Start(%+v): %v (port %d, %s)", opts, time.Since(t0).Round(time.Millisecond), s.Port, s.Version())
	return s
}

func one(t *testing.T, s *Server, sql string) string {
	t.Helper()
	rows := s.QueryStrings(t, sql)
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] == nil {
		t.Fatalf("%s: want one non-NULL value, got %v", sql, rows)
	}
	return *rows[0][0]
}

func TestFull(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{})

	for sql, want := range map[string]string{
		"SELECT @@binlog_row_metadata":  "FULL",
		"SELECT @@binlog_row_image":     "FULL",
		"SELECT @@binlog_format":        "ROW",
		"SELECT @@log_bin":              "1",
		"SELECT @@log_bin_compress":     "0",
		"SELECT @@time_zone":            "+00:00",
		"SELECT @@character_set_server": "utf8mb4",
		"SELECT @@collation_server":     "utf8mb4_general_ci",
		"SELECT @@server_id":            "1",
		"SELECT @@character_set_client": "utf8mb4",
		"SELECT @@datadir":              s.Dir + "/",
	} {
		if got := one(t, s, sql); got != want {
			t.Errorf("%s = %q, want %q", sql, got, want)
		}
	}
	if !strings.Contains(s.Version(), "MariaDB") {
		t.Errorf("Version() = %q", s.Version())
	}
	if want := "mysql://root@127.0.0.1:"; !strings.HasPrefix(s.DSN(), want) || !strings.HasSuffix(s.DSN(), s.Addr()) {
		t.Errorf("DSN() = %q", s.DSN())
	}

	s.Exec(t,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO d.t VALUES (1, 'a'), (2, NULL)",
	)
	s.FlushLogs(t)
	s.Exec(t, "INSERT INTO d.t VALUES (3, 'c')")

	files := s.BinlogFiles(t)
	if len(files) < 2 {
		t.Fatalf("BinlogFiles = %v, want >= 2", files)
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\xfebin")) {
			t.Errorf("%s does not start with the binlog magic: % x", f, b[:min(4, len(b))])
		}
		if want := s.Dir + "/binlog.00000" + string(rune('1'+i)); f != want {
			t.Errorf("BinlogFiles[%d] = %s, want %s", i, f, want)
		}
	}
	index, err := os.ReadFile(s.BinlogIndex())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(index)); len(got) != len(files) {
		t.Errorf("binlog.index lists %v, BinlogFiles %v", got, files)
	}

	// The rows are in the binlog, with full metadata (column names).
	if out, err := exec.Command("mariadb-binlog", "--base64-output=decode-rows", "-vv", files[0]).CombinedOutput(); err != nil {
		t.Logf("mariadb-binlog: %v: %s", err, out)
	} else if !bytes.Contains(out, []byte("### INSERT INTO `d`.`t`")) || !bytes.Contains(out, []byte("@2='a'")) {
		t.Errorf("mariadb-binlog output lacks the insert:\n%s", out)
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{})
	got := s.Query(t, "SELECT 1, CAST(18446744073709551615 AS UNSIGNED), 2.5e0, 1.50, 'é', NULL, X'00FF', DATE'2024-01-02'")
	want := [][]any{{int64(1), uint64(18446744073709551615), 2.5, "1.50", "é", nil, "\x00\xff", "2024-01-02"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Query = %#v, want %#v", got, want)
	}
	strs := s.QueryStrings(t, "SELECT 1, 1e30, NULL, HEX(X'00FF') UNION ALL SELECT 2, 0.5e0, 'x', ''")
	var flat []string
	for _, row := range strs {
		for _, v := range row {
			if v == nil {
				flat = append(flat, "<NULL>")
			} else {
				flat = append(flat, *v)
			}
		}
	}
	if w := []string{"1", "1e30", "<NULL>", "00FF", "2", "0.5", "x", ""}; !reflect.DeepEqual(flat, w) {
		t.Errorf("QueryStrings = %q, want %q", flat, w)
	}
	if rows := s.Query(t, "DO 1"); rows != nil {
		t.Errorf("Query(DO 1) = %v, want nil", rows)
	}
	// Exec and Query share a session.
	s.Exec(t, "SET @v = 42")
	if v := one(t, s, "SELECT @v"); v != "42" {
		t.Errorf("@v = %q", v)
	}
	// An SQL error keeps the session; Conn is a session of its own.
	c := s.Conn(t)
	if _, err := c.Execute("SELECT * FROM no_such_db.t"); err == nil {
		t.Error("query on a missing table succeeded")
	}
	r, err := c.Execute("SELECT @v IS NULL, @@collation_connection")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := r.Values[0][0].AsInt64(), string(r.Values[0][1].AsString()); a != 1 || b != "utf8mb4_general_ci" {
		t.Errorf("fresh Conn: @v IS NULL = %d, collation %q", a, b)
	}
	r.Close()
}

func TestOptions(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{RowMetadata: "MINIMAL", RowImage: "noblob", Compress: true})
	for sql, want := range map[string]string{
		"SELECT @@binlog_row_metadata":      "MINIMAL",
		"SELECT @@binlog_row_image":         "NOBLOB",
		"SELECT @@log_bin_compress":         "1",
		"SELECT @@log_bin_compress_min_len": "10",
	} {
		if got := one(t, s, sql); got != want {
			t.Errorf("%s = %q, want %q", sql, got, want)
		}
	}
	s.Exec(t,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)",
		"INSERT INTO d.t VALUES (1, REPEAT('abc', 100))",
	)
	files := s.BinlogFiles(t)
	out, err := exec.Command("mariadb-binlog", "--base64-output=decode-rows", "-vv", files[len(files)-1]).CombinedOutput()
	if err != nil {
		t.Logf("mariadb-binlog: %v: %s", err, out)
	} else if !bytes.Contains(out, []byte("Write_compressed_rows")) && !bytes.Contains(out, []byte("Write_rows_compressed")) {
		t.Errorf("no compressed row event in mariadb-binlog output:\n%s", out)
	}

	s2 := startTimed(t, Options{RowMetadata: "NO_LOG", RowImage: "MINIMAL", ExtraArgs: []string{"--binlog-row-image=FULL"}})
	if got := one(t, s2, "SELECT CONCAT(@@binlog_row_metadata, ' ', @@binlog_row_image, ' ', @@log_bin_compress)"); got != "NO_LOG FULL OFF" {
		t.Errorf("NO_LOG + ExtraArgs: got %q", got)
	}
}

func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{})
	s.Exec(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1), (2)")
	s.Exec(t, "USE d")
	port, pid, files := s.Port, s.Pid(), len(s.BinlogFiles(t))

	t0 := time.Now()
	s.Restart(t)
	t.Logf("Restart: %v", time.Since(t0).Round(time.Millisecond))
	if s.Port != port {
		t.Errorf("port changed from %d to %d", port, s.Port)
	}
	if s.Pid() == pid || s.Pid() == 0 || !processGone(pid) {
		t.Errorf("pid %d -> %d; old gone: %v", pid, s.Pid(), processGone(pid))
	}
	// The shared session was reopened: no default database any more.
	if got := s.QueryStrings(t, "SELECT DATABASE()"); got[0][0] != nil {
		t.Errorf("DATABASE() = %q after restart, want NULL", *got[0][0])
	}
	if got := one(t, s, "SELECT GROUP_CONCAT(id ORDER BY id) FROM d.t"); got != "1,2" {
		t.Errorf("after restart: %q", got)
	}
	// A restart opens a new binlog file.
	if n := len(s.BinlogFiles(t)); n != files+1 {
		t.Errorf("binlog files: %d before restart, %d after", files, n)
	}
}

func TestKillRestart(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{})
	s.Exec(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (7)")
	pid := s.Pid()
	s.Kill(t)
	if !processGone(pid) {
		t.Fatalf("pid %d not gone after Kill", pid)
	}
	if s.Pid() != 0 {
		t.Errorf("Pid() = %d after Kill", s.Pid())
	}
	s.Kill(t) // no-op
	s.Stop(t) // no-op

	t0 := time.Now()
	s.Restart(t)
	t.Logf("Restart after Kill (crash recovery): %v", time.Since(t0).Round(time.Millisecond))
	if got := one(t, s, "SELECT GROUP_CONCAT(id) FROM d.t"); got != "7" {
		t.Errorf("after kill+restart: %q", got)
	}
	s.Exec(t, "INSERT INTO d.t VALUES (8)")
	s.Stop(t)
	if !processGone(pid) {
		t.Error("not gone after Stop")
	}
	s.Restart(t) // from stopped
	if got := one(t, s, "SELECT COUNT(*) FROM d.t"); got != "2" {
		t.Errorf("after stop+restart: %q rows", got)
	}
}

func TestParallelServers(t *testing.T) {
	servers := make([]*Server, 3)
	t.Run("group", func(t *testing.T) {
		for i := range servers {
			t.Run(string(rune('a'+i)), func(t *testing.T) {
				t.Parallel()
				servers[i] = startTimed(t, Options{})
				servers[i].Exec(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT)", "INSERT INTO d.t VALUES (1)")
			})
		}
	})
	seen := map[int]bool{}
	dirs := map[string]bool{}
	for _, s := range servers {
		if s == nil {
			t.Fatal("a server did not start")
		}
		if seen[s.Port] || dirs[s.Dir] {
			t.Errorf("port %d or dir %s used twice", s.Port, s.Dir)
		}
		seen[s.Port], dirs[s.Dir] = true, true
		if pid := s.Pid(); pid != 0 {
			t.Errorf("server on port %d still runs (pid %d) after its test's cleanup", s.Port, pid)
		}
	}
}

func TestLongTestNameSocket(t *testing.T) {
	t.Parallel()
	t.Run(strings.Repeat("a_very_long_subtest_name_", 6), func(t *testing.T) {
		s := startTimed(t, Options{})
		if got := one(t, s, "SELECT @@socket"); len(got) > 100 {
			t.Errorf("socket path too long: %s", got)
		}
	})
}

func TestProcStatGone(t *testing.T) {
	for stat, want := range map[string]bool{
		"123 (mariadbd) S 1 2 3":      false,
		"123 (mariadbd) Z 1 2 3":      true,
		"123 (a) Z (b) R 1 2 3":       false,
		"123 (a) R (b) Z 1 2 3":       true,
		"123 (x) X 0":                 true,
		"garbage":                     false,
		"123 (mariadbd) D 1 2 3\n":    false,
		"7 (my server) t 1 2 3 4 5 6": false,
	} {
		if got := procStatGone([]byte(stat)); got != want {
			t.Errorf("procStatGone(%q) = %v, want %v", stat, got, want)
		}
	}
	if processGone(os.Getpid()) {
		t.Error("this process reported gone")
	}
	if !processGone(1 << 30) {
		t.Error("a nonexistent pid reported running")
	}
}

func TestMissingBinaryMessage(t *testing.T) {
	_, err := findProgram("mariadbd-does-not-exist")
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y mariadb-server") {
		t.Errorf("error = %v", err)
	}
	if _, err := Binary(); err != nil {
		t.Errorf("Binary: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	o := Options{RowMetadata: "SOME"}
	if err := o.normalize(); err == nil {
		t.Error("RowMetadata SOME accepted")
	}
	o = Options{RowImage: "minimal"}
	if err := o.normalize(); err != nil || o.RowImage != "MINIMAL" || o.RowMetadata != "FULL" {
		t.Errorf("normalize: %v %+v", err, o)
	}
}

// fatalTB records a Fatal instead of failing the real test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, Options{ExtraArgs: []string{"--no-such-option-xyz"}})
	}()
	<-done
	if !strings.Contains(f.msg, "error log tail") || !strings.Contains(f.msg, "no-such-option-xyz") {
		t.Errorf("failure message lacks the error log:\n%s", f.msg)
	}
}

func TestRestartWaitsForPort(t *testing.T) {
	t.Parallel()
	s := startTimed(t, Options{})
	s.Stop(t)
	l, err := net.Listen("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		err := s.start(s.Port)
		t.Logf("start on a taken port failed after %v: %v", time.Since(t0), err)
		var be *bindError
		if !errors.As(err, &be) {
			f.msg = fmt.Sprint("start on a taken port: ", err)
		}
	}()
	<-done
	if f.msg != "" {
		t.Fatal(f.msg)
	}
	time.AfterFunc(500*time.Millisecond, func() { l.Close() })
	s.Restart(t)
	if got := one(t, s, "SELECT 1"); got != "1" {
		t.Errorf("SELECT 1 = %q", got)
	}
}
