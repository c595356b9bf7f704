package binlogcdc

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/verify"
	"github.com/binlogcdc/binlogcdc/verify/live"
)

// LiveVerifyOptions are stream's --verify-every flags (verify/live): a
// stream into a --to mysql:// target compares the source and the target
// exactly every Every, in consistent snapshots of the same transactions.
type LiveVerifyOptions struct {
	Every  time.Duration // --verify-every; 0: off
	OnDiff string        // --verify-on-diff: "stop" (the default) or "warn"
	// ChunkRows is --verify-chunk-rows: the rows of a table compared in
	// one pair of snapshots.
	ChunkRows int
}

// AddFlags binds the flags.
func (o *LiveVerifyOptions) AddFlags(f *pflag.FlagSet) {
	f.DurationVar(&o.Every, "verify-every", 0, "--to mysql://: compare the replicated tables of the source and the target exactly, as 'binlogcdc verify' does, every `DURATION` (counted from the end of the last pass); both are read in consistent snapshots of the same transactions: the applier waits at the source snapshot's binlog position while the target's snapshot begins (MariaDB source; see the README)")
	f.IntVar(&o.ChunkRows, "verify-chunk-rows", live.DefaultChunkRows, "--verify-every: compare each table in key ranges of `N` rows, each in its own pair of snapshots (the applier waits at each range's position; a table without a primary key, or whose key cannot be split exactly, is one range)")
	f.StringVar(&o.OnDiff, "verify-on-diff", "stop", "what a difference found by --verify-every does: `stop` the stream (exit 1), or warn (report it on stderr, /metrics and /healthz, and go on)")
}

// check checks the flags before anything starts.
func (o *LiveVerifyOptions) check(f *pflag.FlagSet, to string) error {
	bad := func(msg, hint string) error { return UsageError{Msg: msg, Hint: hint} }
	if o.Every < 0 || o.Every == 0 && flagChanged(f, "verify-every") {
		return bad(fmt.Sprintf("--verify-every must be positive, not %v", o.Every), "--verify-every 10m")
	}
	if o.Every == 0 {
		for _, n := range []string{"verify-on-diff", "verify-chunk-rows"} {
			if flagChanged(f, n) {
				return bad("--"+n+" needs --verify-every", "--verify-every 10m")
			}
		}
		return nil
	}
	if o.ChunkRows <= 0 {
		return bad(fmt.Sprintf("--verify-chunk-rows must be positive, not %d", o.ChunkRows), "--verify-chunk-rows 10000")
	}
	if !strings.HasPrefix(to, "mysql://") {
		return bad("--verify-every compares the copy kept by --to mysql://…", "--to mysql://user@backup-host:3306/ --verify-every 10m")
	}
	if o.OnDiff != "stop" && o.OnDiff != "warn" {
		return bad("--verify-on-diff: want stop or warn, not "+o.OnDiff, "--verify-on-diff warn")
	}
	for _, n := range []string{"signal-table", "snapshot-new-tables"} {
		if flagChanged(f, n) {
			return bad("--verify-every cannot be combined with --"+n+": an incremental snapshot makes the target differ from the source until it is done",
				"run the incremental snapshot first, then restart the stream with --verify-every")
		}
	}
	return nil
}

// start wraps sk, the --to target's sink, with the verifier and starts
// its passes (stopped by sk's Close); sk as it is without --verify-every.
// src is the source, cov what a resumed snapshot still reconciles; stop
// ends the stream with an error (also this function's own, before the
// stream started).
func (o *LiveVerifyOptions) start(ctx context.Context, sk sink.Sink, rp *replayRun, src binlog.LiveConfig, so *StreamOptions,
	cov *pipeline.Coverage, mx *metrics.Stream, logf func(string, ...any), stop func(error)) sink.Sink {
	if o.Every <= 0 {
		return sk
	}
	v, err := o.verifier(ctx, sk, rp, src, so, cov, mx, logf, stop)
	if err != nil {
		stop(fmt.Errorf("--verify-every: %w", err))
		return sk
	}
	logf("verify: comparing the source and the target every %v (--verify-on-diff %s)", o.Every, o.OnDiff)
	return v
}

func (o *LiveVerifyOptions) verifier(ctx context.Context, sk sink.Sink, rp *replayRun, src binlog.LiveConfig, so *StreamOptions,
	cov *pipeline.Coverage, mx *metrics.Stream, logf func(string, ...any), stop func(error)) (*live.Verifier, error) {
	target := rp.targetSink()
	if target == nil {
		return nil, fmt.Errorf("no --to mysql:// target to compare")
	}
	filter, err := pipeline.NewFilter(so.Tables, so.Exclude) // its own: Table records which patterns matched
	if err != nil {
		return nil, err
	}
	dst, err := rp.o.TargetConfig()
	if err != nil {
		return nil, err
	}
	cfg := live.Config{
		Every:     o.Every,
		Source:    verify.Config{Addr: net.JoinHostPort(src.Host, strconv.Itoa(int(src.Port))), User: src.User, Password: string(src.Password), TLS: src.TLS, TLSPreferred: so.Conn.SSLMode == "preferred"},
		Target:    verify.Config{Addr: dst.Addr, User: dst.User, Password: dst.Password, TLS: dst.TLS, TLSPreferred: dst.TLSPreferred},
		Select:    filter.Table,
		MaxRows:   100,
		ChunkRows: o.ChunkRows,
		Flush:     target.Flush,
		At:        target.Saved(),
		Settled:   cov.Empty,
		Metrics:   mx,
		Logf:      logf,
	}
	if o.OnDiff == "stop" {
		cfg.Stop = stop
	}
	return live.Start(ctx, sk, cfg)
}
