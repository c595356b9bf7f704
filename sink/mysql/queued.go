package mysqlsink

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
)

// Fewer round trips per background group. Between the groups it applies,
// the background goroutine leaves the session in autocommit=0. A group
// then needs no BEGIN: its first statement starts the target transaction,
// and COMMIT ends it. And since no statement can commit on its own, the
// group's checkpoint UPDATE goes first, in the same write as its first
// SAVEPOINT and statement (a pipeline's or a LOAD DATA's), instead of a
// round trip of its own before COMMIT: when it fails, nothing commits,
// and the group is rolled back as any failed group is. A group of inserts
// takes three round trips (the first write, the LOAD DATA file, COMMIT)
// instead of five; one of updates, three instead of six (BEGIN and the two
// autocommit switches go too).
//
// autocommit=0 does not outlive the background goroutine's turn: the
// caller waits for it before it uses the connection (wait), and wait turns
// autocommit back on when no transaction is open. Handing over the next
// group (commitBackground) does not use the connection and keeps it off.
// A statement sent any other way than with a pipeline or a LOAD DATA
// sends the queued UPDATE alone first (sendQueued, in plain, exec and
// execPrepared), so it always precedes the group's changes.

// applyGroupQueued is applyGroup for a group of committed source
// transactions that ends in g.end, when pipelining is on.
func (s *Sink) applyGroupQueued(ops []op, g *group) error {
	if !s.noAutocommit {
		// A round trip of its own: the statements after it must not
		// commit on their own, whatever happens.
		if err := s.plain("SET autocommit=0"); err != nil {
			return fmt.Errorf("target: SET autocommit=0: %w", err)
		}
		s.noAutocommit = true
	}
	s.inTx = true // the next statement starts it
	pkt, err := s.checkpointPacket(*g.end)
	if err != nil {
		return fmt.Errorf("target: saving the checkpoint: %w", err)
	}
	s.queued, s.cpSent, s.keepNoAuto = pkt, true, true
	if err := s.execOps(ops, &g.stats); err != nil {
		return err
	}
	if err := s.sendQueued(); err != nil { // nothing took it along
		return err
	}
	return s.finishGroup(g, change.Position{})
}

// checkpointPacket is the COM_STMT_EXECUTE of saveCheckpoint for tx (no
// DDL), bound as execPrepared binds saveCheckpoint's arguments.
func (s *Sink) checkpointPacket(tx change.TxEnd) ([]byte, error) {
	st, err := s.stmts.get(s.conn, []byte(saveCheckpointSQL))
	if err != nil {
		return nil, err
	}
	srcTime := change.NullValue()
	if !tx.Time.IsZero() {
		srcTime = change.TextValue(change.String, []byte(sourceTime(tx.Time)))
	}
	args := []change.Value{
		change.TextValue(change.String, []byte(tx.Next.File)), change.UintValue(tx.Next.Offset),
		change.TextValue(change.String, []byte(tx.GTID)),
		change.TextValue(change.String, []byte{}), change.UintValue(0), // no DDL
		change.TextValue(change.String, []byte(tx.XAFrom.File)), change.UintValue(tx.XAFrom.Offset),
		srcTime, change.TextValue(change.String, []byte(s.opts.Replica)),
	}
	pkt, ok := appendExecute(s.queuedBuf[:0], st, args, s.conn.HasCapability(mysql.CLIENT_QUERY_ATTRIBUTES))
	if !ok {
		return nil, fmt.Errorf("cannot bind the checkpoint's values")
	}
	s.queuedBuf = pkt
	return pkt, nil
}

// takeQueued appends the queued UPDATE, if any, to b, for a write that
// sends it first; n is the number of results to read first (readQueued).
func (s *Sink) takeQueued(b []byte) (_ []byte, n int) {
	if s.queued == nil {
		return b, 0
	}
	b = append(b, s.queued...)
	s.queued = nil
	return b, 1
}

// readQueued reads the results of n queued statements sent first.
func (s *Sink) readQueued(n int) error {
	if n == 0 {
		return nil
	}
	matched, err := s.readResult()
	if err == nil && matched != 1 {
		err = s.checkpointRowError(matched)
	}
	if err != nil {
		return fmt.Errorf("target: saving the checkpoint: %w", err)
	}
	return nil
}

// sendQueued sends the queued UPDATE, if any, alone and reads its result.
func (s *Sink) sendQueued() error {
	if s.queued == nil {
		return nil
	}
	b := s.queued
	s.queued = nil
	if _, err := s.conn.Write(b); err != nil {
		return fmt.Errorf("target: saving the checkpoint: %w", err)
	}
	return s.readQueued(1)
}
