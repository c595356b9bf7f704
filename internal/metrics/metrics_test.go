package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newFake() (*Stream, *fakeClock) {
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := &Stream{now: c.now}
	s.cpAt = c.t
	return s, c
}

func TestHealth(t *testing.T) {
	s, c := newFake()
	const window, stall = time.Minute, 2 * time.Minute
	check := func(what string, wantOK bool, wantMsg string) {
		t.Helper()
		err := s.Health(window, stall)
		if (err == nil) != wantOK || err != nil && !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: Health = %v, want ok=%v (%q)", what, err, wantOK, wantMsg)
		}
	}
	check("at the start", true, "")
	c.t = c.t.Add(time.Hour)
	check("idle for an hour (nothing to checkpoint)", true, "")

	s.Connected()
	s.Disconnected()
	c.t = c.t.Add(window)
	check("disconnected for the window", true, "")
	s.Disconnected() // more failed attempts do not restart the outage
	c.t = c.t.Add(time.Second)
	check("disconnected past the window", false, "unreachable for 1m1s")
	s.Connected()
	check("connected again", true, "")

	pos := func(off uint64) change.Position { return change.Position{File: "b.000001", Offset: off} }
	s.Checkpoint(pos(100))
	s.Begin(pos(100))
	c.t = c.t.Add(stall)
	s.Begin(pos(200)) // the pipeline goes on; the checkpoint does not
	check("a transaction waiting for the stall time", true, "")
	c.t = c.t.Add(time.Second)
	check("a transaction waiting past the stall time", false, "checkpoint has not advanced")
	s.Checkpoint(pos(200))
	check("the first transaction is covered, the second waits since", true, "")
	c.t = c.t.Add(stall - time.Second) // it began a second before the checkpoint advanced
	check("the second waited the stall time", true, "")
	c.t = c.t.Add(time.Second)
	check("the second waited past the stall time", false, "waiting for 2m1s")
	s.Checkpoint(pos(300))
	check("the checkpoint covers everything begun", true, "")
	c.t = c.t.Add(time.Hour)
	check("idle for an hour after", true, "")
	s.Begin(pos(300))
	check("a transaction begins after the long idle time", true, "")
	c.t = c.t.Add(stall + time.Second)
	s.Checkpoint(pos(300))
	check("the same checkpoint again is no advance", false, "checkpoint has not advanced")

	// A checkpoint asked for at each check (a replay target's).
	target := pos(300)
	s.SetCheckpointFunc(func() change.Position { return target })
	check("still not advanced", false, "checkpoint has not advanced")
	target = pos(400)
	check("the target committed", true, "")
}

func TestNilStream(t *testing.T) {
	var s *Stream // metrics off: every call is a no-op
	s.Event(10)
	s.Heartbeat()
	s.Begin(change.Position{})
	s.Commit(&[4]uint32{1}, time.Now())
	s.Checkpoint(change.Position{})
	s.SinkError()
	s.Connected()
	s.Disconnected()
	s.Reconnect()
	s.SetCheckpointFunc(nil)
	s.SetBuffered(func() int64 { return 1 })
	s.SetRetries(func() uint64 { return 1 })
}

// TestServe scrapes /metrics and /healthz over HTTP.
func TestServe(t *testing.T) {
	s, c := newFake()
	srv, err := Serve("127.0.0.1:0", s, time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s.Connected()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + srv.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Every gauge has a value from the start (issue 27).
	if _, body := get("/metrics"); !strings.Contains(body, "\nbinlogcdc_last_commit_timestamp_seconds 0\n") {
		t.Errorf("/metrics before the first commit lacks binlogcdc_last_commit_timestamp_seconds 0:\n%s", body)
	}
	s.Event(100)
	s.Event(50)
	s.Begin(change.Position{File: "b.000001", Offset: 100})
	s.Commit(&[4]uint32{}, c.t.Add(-1600*time.Millisecond)) // all filtered out
	s.Commit(&[4]uint32{3, 2, 1, 1}, c.t.Add(-1500*time.Millisecond))
	s.Checkpoint(change.Position{File: "b.000001", Offset: 200})
	s.Reconnect()
	s.SetBuffered(func() int64 { return 7 })
	s.SetRetries(func() uint64 { return 4 })
	c.t = c.t.Add(3 * time.Second)

	code, body := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`binlogcdc_rows_total{op="insert"} 3`, `binlogcdc_rows_total{op="update"} 2`, `binlogcdc_rows_total{op="delete"} 1`,
		"binlogcdc_ddl_total 1", "binlogcdc_transactions_total 1", "binlogcdc_source_transactions_total 2", "binlogcdc_events_total 2", "binlogcdc_read_bytes_total 150",
		"binlogcdc_reconnects_total 1", "binlogcdc_source_connected 1", "binlogcdc_source_lag_seconds 1.5",
		"binlogcdc_last_commit_timestamp_seconds 1.6999999985e+09", "binlogcdc_checkpoint_age_seconds 3",
		"binlogcdc_sink_errors_total 0", "binlogcdc_sink_retries_total 4", "binlogcdc_sink_buffered_records 7",
		"# TYPE binlogcdc_rows_total counter", "# TYPE binlogcdc_source_lag_seconds gauge", "# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
	s.Disconnected()
	c.t = c.t.Add(2 * time.Minute)
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, "unreachable") {
		t.Errorf("/healthz while disconnected: %d %q, want 503", code, body)
	}
}
