// Package testserver runs private MariaDB servers for tests.
//
// Every server gets its own datadir (a copy of an initialised template, see
// template), a free 127.0.0.1 port, its own socket, pid file and error log
// in the datadir, and writes ROW binary logs "binlog.NNNNNN" indexed by
// "binlog.index" in the datadir. The machine's system MariaDB (port 3306) is
// never used.
//
// When mariadbd is missing, Start fails the test (it does not skip) with a
// message saying to run `apt-get install -y mariadb-server`; scripts/test.sh
// installs it.
//
// Server settings (besides Options): server_id=1, binlog_format=ROW,
// character_set_server=utf8mb4, collation_server=utf8mb4_general_ci,
// time_zone=+00:00, skip_name_resolve, max_allowed_packet=64M, small InnoDB
// buffers, innodb_flush_log_at_trx_commit=2 (a SIGKILL loses nothing
// committed; only an OS crash would). Grants are kept: root@127.0.0.1 has no
// password, and tests may create users.
package testserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// Options select how the server logs. The zero value is the default:
// binlog_row_metadata=FULL, binlog_row_image=FULL, no compression.
type Options struct {
	RowMetadata string // binlog_row_metadata: "FULL" (default), "MINIMAL", "NO_LOG"
	RowImage    string // binlog_row_image: "FULL" (default), "MINIMAL", "NOBLOB"
	// Compress sets log_bin_compress=ON (MariaDB's compressed query and
	// row events) and log_bin_compress_min_len=10 (its minimum; the default
	// 256 would leave most test events uncompressed).
	Compress bool
	// ExtraArgs are appended to mariadbd's command line, after the
	// package's own flags, so they override them. They do not affect the
	// template datadir (mariadb-install-db).
	ExtraArgs []string
	// Datadir, if set, is an existing datadir (absolute: a restored
	// backup, mariadb-backup --copy-back) to start on instead of a copy
	// of the template. Its parent directory gets the server's private
	// tmpdir ("tmp"); the caller owns both (a t.TempDir()).
	Datadir string
}

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 60 * time.Second
	killTimeout  = 30 * time.Second
	startTries   = 5 // ports tried when the chosen one is taken meanwhile
)

// Server is a running private mariadbd. Its methods are safe for concurrent
// use; Exec and Query share one session (see Exec).
type Server struct {
	Port int    // TCP port on 127.0.0.1
	Dir  string // datadir (absolute); binlogs, socket, pid file, error.log live here

	opts     Options
	inst     installation
	socket   string
	errorLog string
	version  string

	mu   sync.Mutex // guards proc, gen, version
	proc *process
	gen  int // bumped at every stop; invalidates the shared session

	connMu  sync.Mutex // guards conn, connGen; held while Exec/Query run
	conn    *client.Conn
	connGen int
}

type process struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{} // closed when cmd.Wait returned
	err  error         // cmd.Wait's result, valid once done is closed
}

func (o *Options) normalize() error {
	up := func(v, def string, allowed ...string) (string, error) {
		if v == "" {
			return def, nil
		}
		v = strings.ToUpper(v)
		for _, a := range allowed {
			if v == a {
				return v, nil
			}
		}
		return "", fmt.Errorf("testserver: %q not one of %v", v, allowed)
	}
	var err error
	if o.RowMetadata, err = up(o.RowMetadata, "FULL", "FULL", "MINIMAL", "NO_LOG"); err != nil {
		return err
	}
	o.RowImage, err = up(o.RowImage, "FULL", "FULL", "MINIMAL", "NOBLOB")
	return err
}

// Start starts a private server; at the end of the test (tb.Cleanup) it is
// killed and its datadir removed. It fails the test if the server cannot be
// started, including when MariaDB is not installed.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if err := opts.normalize(); err != nil {
		tb.Fatal(err)
	}
	opts.ExtraArgs = append([]string(nil), opts.ExtraArgs...)
	inst, err := findInstallation()
	if err != nil {
		tb.Fatal(err)
	}
	tpl, err := template()
	if err != nil {
		tb.Fatal(err)
	}
	// TempDir is registered (and so removed) before the server's cleanup
	// runs: cleanups run last-in first-out.
	base := tb.TempDir()
	dir := filepath.Join(base, "data")
	if opts.Datadir != "" {
		dir, base = opts.Datadir, filepath.Dir(opts.Datadir)
	} else if out, err := exec.Command("cp", "-a", tpl, dir).CombinedOutput(); err != nil {
		tb.Fatalf("testserver: copying template %s: %v: %s", tpl, err, out)
	}
	// A private tmpdir: at startup mariadbd deletes every "#sql*" file in
	// its tmpdir (mysql_rm_tmp_tables), which with a shared /tmp removes
	// the in-flight temporary tables of other servers ("Error on delete of
	// '/tmp/#sql-temptable-...MAI'").
	if err := os.Mkdir(filepath.Join(base, "tmp"), 0o700); err != nil && !(opts.Datadir != "" && os.IsExist(err)) {
		tb.Fatal(err)
	}
	s := &Server{
		Dir:      dir,
		opts:     opts,
		inst:     inst,
		socket:   filepath.Join(dir, "mariadbd.sock"),
		errorLog: filepath.Join(dir, "error.log"),
	}
	// A Unix socket path must fit in sun_path (108 bytes with the NUL);
	// long test names make long TempDirs.
	if len(s.socket) > 100 {
		sd, err := os.MkdirTemp("", "tsrv")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(sd) })
		s.socket = filepath.Join(sd, "mariadbd.sock")
	}
	// At the end of the test the datadir is thrown away, so a clean
	// shutdown buys nothing; and mariadbd takes ~1 s to shut down cleanly
	// within a second of a binlog rotation.
	tb.Cleanup(func() {
		if err := s.stop(syscall.SIGKILL, killTimeout); err != nil {
			tb.Error(err)
		}
		// With the server gone, a running Exec fails fast and lets go.
		s.connMu.Lock()
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
		s.connMu.Unlock()
	})

	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		err = s.start(port)
		if err == nil {
			return s
		}
		var be *bindError
		if !errors.As(err, &be) || try == startTries {
			tb.Fatal(err)
		}
		tb.Logf("testserver: port %d was taken, retrying: %v", port, err)
	}
}

// freePort returns a port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// bindError is returned by start when mariadbd could not listen on its port.
type bindError struct{ err error }

func (e *bindError) Error() string { return e.err.Error() }
func (e *bindError) Unwrap() error { return e.err }

func (s *Server) args(port int) []string {
	d := s.Dir
	onOff := map[bool]string{true: "ON", false: "OFF"}
	args := []string{
		"--no-defaults",
		"--datadir=" + d,
		"--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--socket=" + s.socket,
		"--pid-file=" + filepath.Join(d, "mariadbd.pid"),
		"--log-error=" + s.errorLog,
		"--tmpdir=" + filepath.Join(filepath.Dir(d), "tmp"),
		// Relative to the datadir: files binlog.000001, ..., and an index
		// listing "./binlog.000001", as on a stock server.
		"--log-bin=binlog",
		"--log-bin-index=binlog.index",
		"--server-id=1",
		"--binlog-format=ROW",
		"--binlog-row-metadata=" + s.opts.RowMetadata,
		"--binlog-row-image=" + s.opts.RowImage,
		"--log-bin-compress=" + onOff[s.opts.Compress],
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--default-time-zone=+00:00",
		"--skip-name-resolve",
		"--max-allowed-packet=64M",
		"--innodb-buffer-pool-size=16M",
		"--innodb-log-file-size=16M",
		"--innodb-temp-data-file-path=ibtmp1:1M:autoextend",
		"--innodb-use-native-aio=0", // many parallel servers could exhaust aio-max-nr
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--innodb-buffer-pool-dump-at-shutdown=0",
		"--innodb-buffer-pool-load-at-startup=0",
		"--key-buffer-size=1M",
		"--aria-pagecache-buffer-size=8M",
	}
	if s.opts.Compress {
		args = append(args, "--log-bin-compress-min-len=10")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return append(args, s.opts.ExtraArgs...)
}

// start launches mariadbd on port and waits until it serves queries. On
// failure the process is gone when start returns.
func (s *Server) start(port int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("testserver: server already running")
	}
	logOff := fileSize(s.errorLog)
	out, err := os.OpenFile(filepath.Join(s.Dir, "mariadbd.out"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("testserver: %w", err)
	}
	defer out.Close()
	cmd := exec.Command(s.inst.mariadbd, s.args(port)...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the test binary dies (e.g. a -timeout panic), don't leave
		// servers behind.
		Pdeathsig: syscall.SIGKILL,
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testserver: starting %s: %w", s.inst.mariadbd, err)
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	version, err := s.waitReady(p, port, logOff)
	if err != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		waitGone(p.pid, p.done, killTimeout)
		tail := s.logTail(logOff)
		err = fmt.Errorf("testserver: mariadbd on port %d (datadir %s) did not become ready after %v: %w\n--- error log tail ---\n%s",
			port, s.Dir, time.Since(t0).Round(time.Millisecond), err, tail)
		if isBindFailure(tail) {
			return &bindError{err}
		}
		return err
	}
	if s.Port != port { // Restart keeps the port: don't write (Addr reads it unlocked)
		s.Port = port
	}
	s.proc = p
	s.version = version
	return nil
}

func isBindFailure(log string) bool {
	return strings.Contains(log, "Bind on TCP/IP port") ||
		strings.Contains(log, "Address already in use") ||
		strings.Contains(log, "another server running on port")
}

// waitReady polls until the server on port answers a query and proves to be
// ours (its pid_file is in our datadir: after a lost port race another
// server could answer on the port). It returns the server's version.
func (s *Server) waitReady(p *process, port int, logOff int64) (string, error) {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	want := filepath.Join(s.Dir, "mariadbd.pid")
	var lastErr error
	for {
		// The probe runs aside so that an exit, an abort or the deadline
		// is noticed while it waits for a greeting.
		probed := make(chan probeResult, 1)
		go func() { probed <- probe(addr) }()
	wait:
		for {
			select {
			case r := <-probed:
				switch {
				case r.err != nil:
					lastErr = r.err
				case r.pidFile != want:
					lastErr = fmt.Errorf("port %d is served by another server (pid_file %s)", port, r.pidFile)
				default:
					return r.version, nil
				}
				break wait
			case <-p.done:
				return "", fmt.Errorf("mariadbd exited: %v", p.err)
			case <-deadline.C:
				return "", fmt.Errorf("timeout; last error: %v", lastErr)
			case <-tick.C:
				// mariadbd can linger after "Aborting"; don't wait for
				// it to exit.
				if strings.Contains(s.logSince(logOff), "[ERROR] Aborting") {
					return "", errors.New("mariadbd is aborting")
				}
			}
		}
		select {
		case <-p.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type probeResult struct {
	version, pidFile string
	err              error
}

func probe(addr string) probeResult {
	// Fails fast while nothing listens; the timeout bounds the wait for a
	// greeting (a foreign listener after a lost port race never sends one).
	c, err := connect(addr, 5*time.Second)
	if err != nil {
		return probeResult{err: err}
	}
	defer c.Quit() // not Close: the server would log an aborted connection
	r, err := c.Execute("SELECT VERSION(), @@pid_file")
	if err != nil {
		return probeResult{err: err}
	}
	defer r.Close()
	if len(r.Values) != 1 {
		return probeResult{err: fmt.Errorf("probe returned %d rows", len(r.Values))}
	}
	return probeResult{
		version: string(r.Values[0][0].AsString()),
		pidFile: string(r.Values[0][1].AsString()),
	}
}

// connect opens a root session with utf8mb4_general_ci (go-mysql's default,
// utf8mb4_0900_ai_ci, is MySQL 8's). timeout bounds connecting and, when
// positive, every later read and write as well.
func connect(addr string, timeout time.Duration) (*client.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dialTimeout := timeout
	if dialTimeout <= 0 {
		dialTimeout = 10 * time.Second
	}
	return client.ConnectWithContext(ctx, addr, "root", "", "", dialTimeout, func(c *client.Conn) error {
		if timeout > 0 {
			c.ReadTimeout, c.WriteTimeout = timeout, timeout
		}
		return c.SetCollation("utf8mb4_general_ci")
	})
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (s *Server) logSince(off int64) string {
	f, err := os.Open(s.errorLog)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, off, 1<<20))
	return string(b)
}

// logTail returns the last lines of the error log written since offset off
// (or of the whole log, when nothing was written since).
func (s *Server) logTail(off int64) string {
	b, err := os.ReadFile(s.errorLog)
	if err != nil {
		b = nil
	}
	if off > 0 && off < int64(len(b)) {
		b = b[off:]
	}
	if out, _ := os.ReadFile(filepath.Join(s.Dir, "mariadbd.out")); len(bytes.TrimSpace(out)) > 0 {
		b = append(append(b, "--- stdout/stderr ---\n"...), out...)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(empty)"
	}
	return strings.Join(lines, "\n")
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// DSN returns "mysql://root@127.0.0.1:PORT" (root has no password).
func (s *Server) DSN() string { return "mysql://root@" + s.Addr() }

// Version returns the server's VERSION(), e.g. "10.11.19-MariaDB-0+deb12u1-log".
func (s *Server) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// BinlogIndex returns the absolute path of binlog.index.
func (s *Server) BinlogIndex() string { return filepath.Join(s.Dir, "binlog.index") }

// ErrorLog returns the absolute path of the server's error log.
func (s *Server) ErrorLog() string { return s.errorLog }

// Pid returns the process id of the running mariadbd, or 0 when stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// Stop shuts the server down (SIGTERM, a clean shutdown) and waits until
// the process is gone. Stopping a stopped server does nothing. (At the end
// of the test, Start's cleanup kills the server if it still runs.) Within a
// second of a binlog rotation (FlushLogs) mariadbd takes ~1 s to shut down.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if err := s.stop(syscall.SIGTERM, stopTimeout); err != nil {
		tb.Error(err)
	}
}

// Kill sends SIGKILL (a crash: InnoDB recovers at the next start; committed
// transactions are kept) and waits until the process is gone.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	if err := s.stop(syscall.SIGKILL, killTimeout); err != nil {
		tb.Fatal(err)
	}
}

// Restart stops the server if it runs and starts it again on the same
// datadir, port and options.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.stop(syscall.SIGTERM, stopTimeout); err != nil {
		tb.Fatal(err)
	}
	// The port is ours to keep, but somebody may have picked it while the
	// server was down: wait a little for it to free up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.start(s.Port)
		if err == nil {
			return
		}
		var be *bindError
		if !errors.As(err, &be) || time.Now().After(deadline) {
			tb.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *Server) stop(sig syscall.Signal, timeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	s.gen++
	logOff := fileSize(s.errorLog)
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("testserver: signalling mariadbd %d: %w", p.pid, err)
	}
	if waitGone(p.pid, p.done, timeout) {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	waitGone(p.pid, p.done, killTimeout)
	return fmt.Errorf("testserver: mariadbd %d (port %d) did not exit within %v of %v; killed\n--- error log tail ---\n%s",
		p.pid, s.Port, timeout, sig, s.logTail(logOff))
}
