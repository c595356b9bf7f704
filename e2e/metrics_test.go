package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// Tests of --metrics-addr: /metrics and /healthz scraped while a real
// stream runs against a private MariaDB.

var metricsAddrRE = regexp.MustCompile(`serving metrics on http://([^/\s]+)/metrics`)

// mtGet fetches a path of the metrics server; code 0 when it cannot.
func mtGet(addr, path string) (int, string) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mtValue is the value of the sample named exactly name (with its
// labels, if any) in a scrape; -1 when absent.
func mtValue(body, name string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestStreamMetrics: the counts on /metrics match the rows written, and
// /healthz fails once the source has been down longer than the health
// window, and passes again after it is back.
func TestStreamMetrics(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE mt", "CREATE TABLE mt.t (id INT PRIMARY KEY, v VARCHAR(20))", "CREATE TABLE mt.other (id INT PRIMARY KEY)")
	dir := t.TempDir()
	file, off := stMasterPos(t, srv) // not --from now: the stream may resolve it after the first insert
	r := stStart(t, dir, "metrics", nil, "--source", srv.DSN(), "--start-position", fmt.Sprintf("%s:%d", file, off),
		"--metrics-addr", "127.0.0.1:0", "--health-window", "2s", "--tables", "mt.t",
		"--heartbeat", "1s", "--checkpoint", filepath.Join(dir, "cp.json"), "-o", filepath.Join(dir, "out.jsonl"))
	stPoll(t, 60*time.Second, r, "the stream to connect", r.ready)
	m := metricsAddrRE.FindStringSubmatch(r.errText())
	if m == nil {
		t.Fatalf("no metrics address on stderr:\n%s", r.errText())
	}
	addr := m[1]
	if code, body := mtGet(addr, "/healthz"); code != 200 {
		t.Fatalf("/healthz at the start: %d %s", code, body)
	}
	// Every gauge has a value before the first transaction (issue 27).
	if _, body := mtGet(addr, "/metrics"); mtValue(body, "binlogcdc_last_commit_timestamp_seconds") != 0 {
		t.Errorf("binlogcdc_last_commit_timestamp_seconds before the first transaction = %v, want 0", mtValue(body, "binlogcdc_last_commit_timestamp_seconds"))
	}

	// 3 transactions the table filter leaves out: source transactions,
	// not delivered ones.
	for i := 0; i < 3; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO mt.other VALUES (%d)", i))
	}
	// 30 transactions of 3 inserts, 10 of 2 updates, 5 of 1 delete.
	for i := 0; i < 30; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO mt.t VALUES (%d, 'a'), (%d, 'b'), (%d, 'c')", 3*i, 3*i+1, 3*i+2))
	}
	for i := 0; i < 10; i++ {
		srv.Exec(t, fmt.Sprintf("UPDATE mt.t SET v = 'u%d' WHERE id IN (%d, %d)", i, 2*i, 2*i+1))
	}
	for i := 0; i < 5; i++ {
		srv.Exec(t, fmt.Sprintf("DELETE FROM mt.t WHERE id = %d", 80+i))
	}
	var body string
	stPoll(t, 60*time.Second, r, "45 transactions on /metrics", func() bool {
		_, body = mtGet(addr, "/metrics")
		return mtValue(body, "binlogcdc_transactions_total") >= 45
	})
	for name, want := range map[string]float64{
		"binlogcdc_transactions_total":        45,
		"binlogcdc_source_transactions_total": 48,
		`binlogcdc_rows_total{op="insert"}`:   90,
		`binlogcdc_rows_total{op="update"}`:   20,
		`binlogcdc_rows_total{op="delete"}`:   5,
		"binlogcdc_ddl_total":                 0,
		"binlogcdc_reconnects_total":          0,
		"binlogcdc_source_connected":          1,
		"binlogcdc_sink_errors_total":         0,
	} {
		if got := mtValue(body, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"binlogcdc_read_bytes_total", "binlogcdc_events_total", "binlogcdc_last_commit_timestamp_seconds"} {
		if got := mtValue(body, name); got <= 0 {
			t.Errorf("%s = %v, want > 0", name, got)
		}
	}
	for _, name := range []string{"binlogcdc_source_lag_seconds", "binlogcdc_checkpoint_age_seconds"} {
		if got := mtValue(body, name); got < 0 {
			t.Errorf("%s missing", name)
		}
	}
	if code, body := mtGet(addr, "/healthz"); code != 200 {
		t.Fatalf("/healthz while streaming: %d %s", code, body)
	}

	// The source goes away: unhealthy once it has been down for longer
	// than --health-window.
	srv.Stop(t)
	stPoll(t, 60*time.Second, r, "/healthz to fail", func() bool {
		code, _ := mtGet(addr, "/healthz")
		return code == 503
	})
	code, hb := mtGet(addr, "/healthz")
	if code != 503 || !strings.Contains(hb, "unreachable") {
		t.Errorf("/healthz with the source down: %d %q", code, hb)
	}
	_, body = mtGet(addr, "/metrics")
	if mtValue(body, "binlogcdc_source_connected") != 0 || mtValue(body, "binlogcdc_reconnects_total") < 1 {
		t.Errorf("with the source down: source_connected %v, reconnects_total %v; want 0 and at least 1",
			mtValue(body, "binlogcdc_source_connected"), mtValue(body, "binlogcdc_reconnects_total"))
	}

	// Back: healthy again, and counting on.
	srv.Restart(t)
	srv.Exec(t, "INSERT INTO mt.t VALUES (1000, 'back')")
	stPoll(t, 90*time.Second, r, "the stream to reconnect and count the new row", func() bool {
		_, body = mtGet(addr, "/metrics")
		return mtValue(body, `binlogcdc_rows_total{op="insert"}`) == 91
	})
	if code, body := mtGet(addr, "/healthz"); code != 200 {
		t.Errorf("/healthz after the source came back: %d %s", code, body)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Fatalf("stream exit %d; stderr:\n%s", code, r.errText())
	}
	if code, _ := mtGet(addr, "/metrics"); code != 0 {
		t.Errorf("the metrics server still answers after the stream exited")
	}
}

// TestMetricsArgs: the flags are checked before anything starts.
func TestMetricsArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "--source", "mysql://u@127.0.0.1:1", "--metrics-addr", "nocolon"}, "not HOST:PORT"},
		{[]string{"stream", "--source", "mysql://u@127.0.0.1:1", "--health-window", "5s"}, "--health-window needs --metrics-addr"},
		{[]string{"stream", "--source", "mysql://u@127.0.0.1:1", "--metrics-addr", ":0", "--health-window", "0s"}, "must be positive"},
		{[]string{"read", "--metrics-addr", "x", "binlog.000001"}, "not HOST:PORT"},
	} {
		_, errText, code := runCLI(t, nil, c.args...)
		if code != 2 || !strings.Contains(errText, c.want) {
			t.Errorf("binlogcdc %q: exit %d, want 2 with %q; stderr:\n%s", c.args, code, c.want, errText)
		}
	}
}

// TestStreamMetricsStalled: a replay target that stops taking writes (a
// global read lock) stops the checkpoint: /healthz fails once a
// transaction has waited longer than the health window, and passes again
// when the target takes writes again.
func TestStreamMetricsStalled(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE ms", "CREATE TABLE ms.t (id INT PRIMARY KEY, v VARCHAR(20))")
	}
	dir := t.TempDir()
	file, off := stMasterPos(t, src)
	r := stStart(t, dir, "stalled", nil, "--source", src.DSN(), "--start-position", fmt.Sprintf("%s:%d", file, off),
		"--to", dst.DSN()+"/", "--metrics-addr", "127.0.0.1:0",
		"--health-window", "2s", "--heartbeat", "1s")
	stPoll(t, 60*time.Second, r, "the stream to connect", r.ready)
	m := metricsAddrRE.FindStringSubmatch(r.errText())
	if m == nil {
		t.Fatalf("no metrics address on stderr:\n%s", r.errText())
	}
	addr := m[1]
	inserted := func(n float64) func() bool {
		return func() bool {
			_, body := mtGet(addr, "/metrics")
			return mtValue(body, `binlogcdc_rows_total{op="insert"}`) == n
		}
	}
	src.Exec(t, "INSERT INTO ms.t VALUES (1, 'one')")
	stPoll(t, 60*time.Second, r, "the first row applied", inserted(1))

	lock := dst.Conn(t)
	defer lock.Close()
	if _, err := lock.Execute("FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	src.Exec(t, "INSERT INTO ms.t VALUES (2, 'two')")
	var hb string
	stPoll(t, 60*time.Second, r, "/healthz to fail while the target is locked", func() bool {
		var code int
		code, hb = mtGet(addr, "/healthz")
		return code == 503
	})
	if !strings.Contains(hb, "checkpoint has not advanced") {
		t.Errorf("/healthz with the target locked: %q", hb)
	}
	if _, err := lock.Execute("UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	stPoll(t, 60*time.Second, r, "the second row applied", inserted(2))
	stPoll(t, 60*time.Second, r, "/healthz to pass again", func() bool {
		code, _ := mtGet(addr, "/healthz")
		return code == 200
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Fatalf("stream exit %d; stderr:\n%s", code, r.errText())
	}
	rpRun(t, 0, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/", "--tables", "ms.*")
}
