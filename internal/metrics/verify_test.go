package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// gather returns the collector's metrics by name (the value of the
// counter or gauge), through a registry, as /metrics serves them.
func gather(t *testing.T, s *Stream) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{s: s})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if len(m.Label) > 0 {
				continue
			}
			switch {
			case m.Counter != nil:
				out[mf.GetName()] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[mf.GetName()] = m.Gauge.GetValue()
			}
		}
	}
	return out
}

// TestVerifyMetrics: the live verification's counts, its last success
// and /healthz follow the passes; the metrics pass promtool's lint
// (promlint, what 'promtool check metrics' runs).
func TestVerifyMetrics(t *testing.T) {
	s, c := newFake()
	if _, ok := gather(t, s)["binlogcdc_verify_runs_total"]; ok {
		t.Fatal("verification metrics served without --verify-every")
	}
	s.VerifyOn()
	check := func(what string, want map[string]float64, healthy bool, msg string) {
		t.Helper()
		got := gather(t, s)
		for name, v := range want {
			if g, ok := got[name]; !ok || g != v {
				t.Errorf("%s: %s = %v (served: %v), want %v", what, name, g, ok, v)
			}
		}
		err := s.Health(time.Minute, time.Minute)
		if (err == nil) != healthy || err != nil && !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: Health = %v, want healthy=%v (%q)", what, err, healthy, msg)
		}
	}
	check("before the first pass", map[string]float64{"binlogcdc_verify_runs_total": 0, "binlogcdc_verify_errors_total": 0,
		"binlogcdc_verify_differences_total": 0, "binlogcdc_verify_last_success_timestamp_seconds": 0}, true, "")
	s.VerifyChunk()
	s.VerifyChunk()
	s.VerifyPassEnd(1500*time.Millisecond, 2)
	s.VerifyEqual()
	check("an equal pass", map[string]float64{"binlogcdc_verify_runs_total": 1, "binlogcdc_verify_differences_total": 0,
		"binlogcdc_verify_last_success_timestamp_seconds": float64(c.t.Unix()), "binlogcdc_verify_chunks_total": 2,
		"binlogcdc_verify_applier_pause_max_seconds": 1.5, "binlogcdc_verify_unverified_tables": 2}, true, "")
	okAt := c.t
	c.t = c.t.Add(time.Minute)
	s.VerifyDiffer(2, "2 of 5 tables differ: `a`.`b`, `a`.`c`")
	check("a differing pass", map[string]float64{"binlogcdc_verify_runs_total": 2, "binlogcdc_verify_differences_total": 2,
		"binlogcdc_verify_last_success_timestamp_seconds": float64(okAt.Unix())}, false, "`a`.`c`")
	s.VerifyFailed(errors.New("target: connection refused"))
	check("a failed pass", map[string]float64{"binlogcdc_verify_runs_total": 2, "binlogcdc_verify_errors_total": 1}, false, "connection refused")
	c.t = c.t.Add(time.Minute)
	s.VerifyEqual()
	check("equal again", map[string]float64{"binlogcdc_verify_runs_total": 3, "binlogcdc_verify_differences_total": 2,
		"binlogcdc_verify_last_success_timestamp_seconds": float64(c.t.Unix())}, true, "")

	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{s: s})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
