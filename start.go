package binlogcdc

import (
	"context"
	"fmt"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
)

// resumeFrom checks that the resume point cp, kept in where (forget: how
// to remove it, for hints), belongs to the server at addr, and says where
// it resumes: a position, or (gtid) after a GTID set.
func resumeFrom(ctx context.Context, hist *binlog.History, cp *checkpoint.Checkpoint, where, forget, addr string, logf func(string, ...any)) (start change.Position, gtid string, err error) {
	plan, err := checkpoint.ResumeForget(ctx, hist, cp, where, addr, forget)
	if err != nil {
		return start, "", err
	}
	if plan.Note != "" {
		logf("%s", plan.Note)
	} else if cp.Server != "" && cp.Server != addr {
		logf("the checkpoint was saved against %s; it holds on this server (%s) too", cp.Server, addr)
	}
	if plan.Pos.File != "" {
		logf("resuming at %s:%d (the checkpoint in %s)", plan.Pos.File, plan.Pos.Offset, where)
	} else {
		logf("resuming after GTID position %s (the checkpoint in %s)", plan.GTIDSet, where)
	}
	return plan.Pos, plan.GTIDSet, nil
}

// startInputs is what startPoint decides from.
type startInputs struct {
	hist     *binlog.History
	cfg      binlog.LiveConfig
	flavor   string
	filter   *pipeline.Filter
	rp       *replayRun
	kcp      *checkpoint.Checkpoint // Kafka's resume point (kafka.go), or nil
	server   string                 // host:port, for the checkpoint checks
	startPos change.Position        // --start-position, parsed
	logf     func(string, ...any)
}

// startPlan is where and how a stream starts.
type startPlan struct {
	start, applyFrom change.Position
	gtid, unknownXA  string
	snap             *streamSnapshot
	resumed          *checkpoint.Checkpoint // the checkpoint file resumed, or nil
	cov              *pipeline.Coverage     // a finished snapshot's window, or nil
}

// startPoint decides where the stream starts, first that applies: the
// replay target's checkpoint, Kafka's resume point, the checkpoint file,
// --snapshot, --start-position, --start-gtid, --from; then continues or
// reconciles a snapshot kept with the checkpoint.
func (o *StreamOptions) startPoint(ctx context.Context, in startInputs) (*startPlan, error) {
	var start, applyFrom change.Position
	gtid, unknownXA := "", ""
	targetCP, targetWhere := in.rp.streamResume()
	targetCP, redoSnapshot, targetState, err := o.snapshotTargetResume(in.rp, targetCP, in.logf) // snapshot.go
	if err != nil {
		return nil, err
	}
	var snap *streamSnapshot
	var cp, resumed *checkpoint.Checkpoint
	if o.Checkpoint != "" {
		if cp, err = checkpoint.Load(o.Checkpoint); err != nil {
			return nil, err
		}
	}
	switch {
	case targetCP != nil: // replay.go: the target's checkpoint
		if start, gtid, err = resumeFrom(ctx, in.hist, targetCP, targetWhere, in.rp.forget(), in.server, in.logf); err != nil {
			return nil, err
		}
		if start, applyFrom, err = in.rp.xaResume(start, gtid); err != nil { // replay.go
			return nil, err
		}
	case in.kcp != nil: // kafka.go: the resume point kept in Kafka
		if start, gtid, err = resumeFrom(ctx, in.hist, in.kcp, "Kafka (--kafka-replica-name "+o.Kafka.Replica+")", o.Kafka.forget(), in.server, in.logf); err != nil {
			return nil, err
		}
		// Kafka's resume point does not keep prepared XA transactions:
		// refuse to lose one (pipeline.Options.UnknownXA).
		unknownXA = fmt.Sprintf("Kafka (--kafka-replica-name %s, at %s:%d)", o.Kafka.Replica, in.kcp.File, in.kcp.Offset)
	case cp != nil:
		resumed = cp
		if start, gtid, err = resumeFrom(ctx, in.hist, cp, o.Checkpoint, "move "+o.Checkpoint+" away", in.server, in.logf); err != nil {
			return nil, err
		}
	case o.Snapshot.On: // snapshot.go: copy the tables first, then stream from their position
		if snap, err = o.beginSnapshot(ctx, in.cfg, in.flavor, in.filter, in.rp, redoSnapshot, in.logf); err != nil {
			return nil, err
		}
		start = snap.src.Pos.Pos()
	case o.StartPosition != "":
		start = in.startPos
	case o.StartGTID != "":
		gtid = o.StartGTID
	case o.From == "" || o.From == "now":
		if start, err = binlog.CurrentPosition(ctx, in.cfg); err != nil {
			return nil, err
		}
	default: // earliest
		if start, err = binlog.EarliestPosition(ctx, in.cfg); err != nil {
			return nil, err
		}
	}

	// snapshot.go: the progress of a snapshot kept with the checkpoint:
	// an unfinished one is continued (or taken again), a finished one's
	// window reconciled.
	var cov *pipeline.Coverage
	if state, where := snapshotStateOf(targetCP, targetState, targetWhere, resumed, o.Checkpoint); state != nil {
		rs, done, err := o.resumeSnapshot(ctx, in.cfg, in.flavor, in.filter, in.rp, state, where, start, in.logf)
		if err != nil {
			return nil, err
		}
		if done != nil {
			cov = done.Coverage
		}
		if rs != nil {
			snap = rs
			if rs.cutTo >= 0 { // taken again from its start
				start = rs.src.Pos.Pos()
				if resumed != nil {
					cut := *resumed
					cut.OutputSize = rs.cutTo
					resumed = &cut
				}
			}
		}
	}

	return &startPlan{start: start, applyFrom: applyFrom, gtid: gtid, unknownXA: unknownXA, snap: snap, resumed: resumed, cov: cov}, nil
}
