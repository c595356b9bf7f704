package binlogcdc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/change"
)

func TestParseKafkaURL(t *testing.T) {
	b, err := parseKafkaURL("kafka://a,b:1,[::1]:2")
	if err != nil || strings.Join(b, " ") != "a:9092 b:1 [::1]:2" {
		t.Errorf("parseKafkaURL: %q, %v", b, err)
	}
}

func TestDDLFlag(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		replay bool
		on     bool
		mode   string
	}{
		{nil, false, false, ""},
		{[]string{"--ddl"}, false, true, "apply"},
		{[]string{"--ddl=false"}, false, false, "skip"},
		{[]string{"--format", "sql"}, true, true, "apply"},
		{[]string{"--format", "sql", "--ddl=skip"}, true, false, "skip"},
		{[]string{"--format", "sql", "--ddl"}, true, true, "apply"},
	} {
		var o ReadOptions
		f := pflag.NewFlagSet("read", pflag.ContinueOnError)
		o.AddFlags(f)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := o.Replay.check(f, &o.DDL); err != nil {
			t.Fatal(err)
		}
		if o.Replay.enabled() != tc.replay || o.DDL != tc.on || o.Replay.ddl != tc.mode {
			t.Errorf("%q: replay %v, DDL %v, mode %q; want %v, %v, %q", tc.args, o.Replay.enabled(), o.DDL, o.Replay.ddl, tc.replay, tc.on, tc.mode)
		}
	}
}

func TestResumeFiles(t *testing.T) {
	files := []string{"/d/binlog.000002", "/d/binlog.000003"}
	at := func(f string, off uint64) change.Position { return change.Position{File: f, Offset: off} }
	if s, done, err := resumeFiles(files, at("binlog.000003", 77)); err != nil || done || s != at("binlog.000003", 77) {
		t.Errorf("inside: %v %v %v", s, done, err)
	}
	if _, done, err := resumeFiles(files, at("binlog.000004", 4)); err != nil || !done {
		t.Errorf("past the files: done %v, %v", done, err)
	}
	if _, _, err := resumeFiles(files, at("binlog.000001", 900)); err == nil || !strings.Contains(err.Error(), "not among the files given") {
		t.Errorf("before the files: %v", err)
	}
}

// TestStreamOneDestination: a Handler or Sink with another destination
// is a UsageError before anything connects.
func TestStreamOneDestination(t *testing.T) {
	h := HandlerFunc(func(context.Context, *Tx) error { return nil })
	for name, set := range map[string]func(*StreamOptions){
		"output":     func(o *StreamOptions) { o.Output = filepath.Join(t.TempDir(), "out") },
		"to":         func(o *StreamOptions) { o.Replay.To = "mysql://u@127.0.0.1:1/" },
		"kafka":      func(o *StreamOptions) { o.Replay.To = "kafka://127.0.0.1:1" },
		"format sql": func(o *StreamOptions) { o.Replay.Format = "sql" },
		"debezium":   func(o *StreamOptions) { o.Replay.Format = "debezium" },
	} {
		o := DefaultStreamOptions()
		o.Conn.Source = "mysql://u@127.0.0.1:1"
		set(&o)
		s := &Stream{Options: o, Handler: h}
		var ue UsageError
		if err := s.Run(context.Background()); !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a UsageError", name, err)
		}
	}
	o := DefaultStreamOptions()
	o.Conn.Source = "mysql://u@127.0.0.1:1"
	var ue UsageError
	if err := (&Stream{Options: o, Handler: h, Sink: &handlerSink{h: h}}).Run(context.Background()); !errors.As(err, &ue) {
		t.Errorf("Handler and Sink: %v, want a UsageError", err)
	}
}

// TestReadToOneDestination: ReadTo with an output in the options is a
// UsageError before anything is read.
func TestReadToOneDestination(t *testing.T) {
	h := NewHandlerSink(HandlerFunc(func(context.Context, *Tx) error { return nil }))
	o := DefaultReadOptions()
	o.Output = filepath.Join(t.TempDir(), "out")
	var ue UsageError
	if err := ReadTo(context.Background(), o, []string{"testdata/shop.binlog"}, h, nil); !errors.As(err, &ue) {
		t.Errorf("ReadTo with Output: %v, want a UsageError", err)
	}
	if _, err := os.Stat(o.Output); !os.IsNotExist(err) {
		t.Errorf("ReadTo wrote %s: %v", o.Output, err)
	}
}

// TestStreamStopBeforeRun: Run after Stop returns nil at once and
// writes nothing.
func TestStreamStopBeforeRun(t *testing.T) {
	o := DefaultStreamOptions()
	o.Conn.Source = "mysql://u@127.0.0.1:1"
	o.Checkpoint = filepath.Join(t.TempDir(), "cp.json")
	s := &Stream{Options: o, Handler: HandlerFunc(func(context.Context, *Tx) error { return nil })}
	s.Stop()
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("Run after Stop: %v, want nil", err)
	}
	if _, err := os.Stat(o.Checkpoint); !os.IsNotExist(err) {
		t.Errorf("the checkpoint was written: %v", err)
	}
}
