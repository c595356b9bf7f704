package binlogcdc

import (
	"context"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
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
