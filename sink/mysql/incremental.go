package mysqlsink

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// An incremental snapshot (snapshot.Incremental) re-copies tables while
// the stream runs, chunk by chunk. Each chunk replaces the target's rows
// in its key range (ReplaceRange: a DELETE of the range, then the chunk's
// rows as inserts), and its progress is kept in binlogcdc.incremental,
// updated in the same target transaction as the rows and the checkpoint:
// after a crash the target, its checkpoint and the progress agree.

const incrementalTable = "`binlogcdc`.`incremental`"

// IncrementalState creates binlogcdc.incremental when missing and returns
// the replica's saved progress (nil: none).
func (s *Sink) IncrementalState() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	return s.replicaBlob(incrementalTable, "state", "the progress of incremental snapshots")
}

// SetState makes the next Commit save state in binlogcdc.incremental,
// in the target transaction that holds that source transaction.
func (s *Sink) SetState(state []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	if state == nil {
		state = []byte{}
	}
	s.nextState = state
}

// saveState writes the group's state inside the open target transaction.
func (s *Sink) saveState(state []byte) error {
	if len(state) == 0 {
		return s.execPrepared("DELETE FROM "+incrementalTable+" WHERE replica = ?", s.opts.Replica)
	}
	return s.execPrepared("REPLACE INTO "+incrementalTable+" (replica, state, updated) VALUES (?, ?, NOW(6))", s.opts.Replica, state)
}

// ReplaceRange deletes t's rows in the key range (lo, hi] (nil: no
// bound), or all of them (whole), at a transaction boundary, creating the
// table when it is missing. The delete is part of the open source
// transaction: the rows Written next replace them, and Commit commits
// both with the checkpoint (Rollback takes the delete back).
func (s *Sink) ReplaceRange(t *tablemap.Table, lo, hi change.Row, whole bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	if err := s.check(); err != nil {
		return err
	}
	name := string(sqltext.AppendTableName(nil, t.DB, t.Name))
	ti, err := s.tableInfo(t.DB, t.Name)
	if err != nil {
		return s.fail(fmt.Errorf("incremental snapshot: target: %s: %w", name, err))
	}
	if ti.cols == nil {
		if err := s.createForSnapshot(t); err != nil {
			return s.fail(err)
		}
	}
	var conds []string
	if !whole {
		for _, b := range []struct {
			key     change.Row
			op      string
			orEqual bool
		}{{lo, ">", false}, {hi, "<", true}} {
			if b.key == nil {
				continue
			}
			c, err := sqltext.KeyRange(t, b.key, b.op, b.orEqual)
			if err != nil {
				return s.fail(fmt.Errorf("incremental snapshot: %s: %w", name, err))
			}
			conds = append(conds, "("+c+")")
		}
	}
	q := "DELETE FROM " + name
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	// What was committed before runs first; the delete opens the source
	// transaction the chunk's rows belong to.
	if err := s.flush(len(s.pend)); err != nil {
		return s.fail(err)
	}
	if err := s.begin(); err != nil {
		return s.fail(err)
	}
	if !s.curExecuted {
		if err := s.plain("SAVEPOINT binlogcdc_tx"); err != nil {
			return s.fail(fmt.Errorf("target: %w", err))
		}
		s.curExecuted = true
	}
	if err := s.setForeignKeyChecks(false); err != nil {
		return s.fail(err)
	}
	if err := s.plain(q); err != nil {
		return s.fail(fmt.Errorf("incremental snapshot: target: %s: %w", q, err))
	}
	return nil
}

// createForSnapshot creates t on the target (Options.CreateTable, or
// tablemap.CreateTable), on the DDL session.
func (s *Sink) createForSnapshot(t *tablemap.Table) error {
	if err := s.ddlSession(); err != nil {
		return err
	}
	name := string(sqltext.AppendTableName(nil, t.DB, t.Name))
	mariadb := strings.Contains(s.conn.GetServerVersion(), "MariaDB")
	var sql string
	var err error
	if s.opts.CreateTable != nil {
		sql, err = s.opts.CreateTable(t, mariadb)
	} else {
		sql, err = tablemap.CreateTable(t, tablemap.CreateOptions{MariaDB: mariadb})
	}
	if err != nil {
		return fmt.Errorf("snapshot: creating %s on the target: %w", name, err)
	}
	if _, err := s.ddlConn.Execute("CREATE DATABASE IF NOT EXISTS " + sqltext.QuoteIdent(t.DB)); err != nil {
		return fmt.Errorf("snapshot: target: %w", err)
	}
	if _, err := s.ddlConn.Execute(sql); err != nil && myErrorCode(err) != mysql.ER_TABLE_EXISTS_ERROR {
		return fmt.Errorf("snapshot: target: %w\n%s", err, sql)
	}
	s.logf("snapshot: created %s on the target", name)
	delete(s.target.tables, [2]string{t.DB, t.Name})
	return nil
}
