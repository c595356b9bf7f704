package mysqlsink

import (
	"context"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// An initial snapshot (stream --snapshot) copies the source's tables into
// the target before the stream starts at the snapshot's position. Its
// rows are committed in batches, each with the checkpoint at that
// position, but the checkpoint is only valid once every table is copied.
// So the snapshot is marked in binlogcdc.snapshot (one row per replica)
// from before its first row until after its last commit: a replica with
// the mark has a snapshot that did not finish (the process was killed),
// whatever its checkpoint says, and its tables are emptied and copied
// again.

const snapshotTable = "`binlogcdc`.`snapshot`"

func (s *Sink) ddlSession() error {
	if s.ddlConn != nil {
		return nil
	}
	c, err := dial(context.Background(), s.cfg)
	if err != nil {
		return err
	}
	s.ddlConn = c
	return nil
}

// SnapshotUnfinished reports whether a snapshot into this replica began
// and did not finish.
func (s *Sink) SnapshotUnfinished() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.conn.Execute("SELECT COUNT(*) FROM "+snapshotTable+" WHERE replica = ?", s.opts.Replica)
	if err != nil {
		if c := myErrorCode(err); c == mysql.ER_NO_SUCH_TABLE {
			return false, nil
		}
		return false, fmt.Errorf("target: reading %s: %w", snapshotTable, err)
	}
	n, _ := r.GetInt(0, 0)
	return n > 0, nil
}

// BeginSnapshot marks a snapshot at pos as under way (committed at once).
func (s *Sink) BeginSnapshot(pos change.Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + snapshotTable + ` (
  replica VARCHAR(191) NOT NULL,
  file VARCHAR(255) NOT NULL,
  pos BIGINT UNSIGNED NOT NULL,
  started DATETIME(6) NOT NULL,
  PRIMARY KEY (replica)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='binlogcdc: a snapshot being copied; its tables are copied again after a crash'`,
	} {
		if _, err := s.conn.Execute(q); err != nil {
			return fmt.Errorf("target: creating %s: %w", snapshotTable, err)
		}
	}
	if _, err := s.conn.Execute("REPLACE INTO "+snapshotTable+" (replica, file, pos, started) VALUES (?, ?, ?, NOW(6))", s.opts.Replica, pos.File, pos.Offset); err != nil {
		return fmt.Errorf("target: marking the snapshot: %w", err)
	}
	return nil
}

// CheckSnapshotTable checks, before a snapshot begins, that db.name is
// missing or empty on the target: the snapshot must not add its rows to
// rows that are there.
func (s *Sink) CheckSnapshotTable(db, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ddlSession(); err != nil {
		return err
	}
	q := string(sqltext.AppendTableName(nil, db, name))
	r, err := s.ddlConn.Execute("SELECT EXISTS (SELECT 1 FROM " + q + ")")
	switch {
	case myErrorCode(err) == mysql.ER_NO_SUCH_TABLE || myErrorCode(err) == mysql.ER_BAD_DB_ERROR:
		return nil
	case err != nil:
		return fmt.Errorf("snapshot: target: reading %s: %w", q, err)
	}
	if n, _ := r.GetInt(0, 0); n != 0 {
		return fmt.Errorf("snapshot: the target's %s already holds rows, and replica %q has no checkpoint: the snapshot would add its rows to them; empty or drop it on the target first (or leave it out with --tables/--exclude-tables)", q, s.opts.Replica)
	}
	return nil
}

// PrepareSnapshotTable makes t ready for the snapshot's rows: created
// (with Options.CreateTable, or tablemap.CreateTable) when missing;
// emptied when redo (an earlier snapshot of this replica did not
// finish); otherwise it must be empty.
func (s *Sink) PrepareSnapshotTable(t *tablemap.Table, redo bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ddlSession(); err != nil {
		return err
	}
	name := string(sqltext.AppendTableName(nil, t.DB, t.Name))
	r, err := s.ddlConn.Execute("SELECT EXISTS (SELECT 1 FROM " + name + ")")
	switch {
	case myErrorCode(err) == mysql.ER_NO_SUCH_TABLE || myErrorCode(err) == mysql.ER_BAD_DB_ERROR:
		return s.createForSnapshot(t)
	case err != nil:
		return fmt.Errorf("snapshot: target: reading %s: %w", name, err)
	}
	if n, _ := r.GetInt(0, 0); n == 0 {
		return nil
	}
	if !redo {
		return fmt.Errorf("snapshot: the target's %s already holds rows, and replica %q has no checkpoint: the snapshot would add its rows to them; empty or drop it on the target first (or pick the tables with --tables)", name, s.opts.Replica)
	}
	s.logf("snapshot: emptying %s on the target: the last snapshot into it did not finish", name)
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "DELETE FROM " + name, "SET SESSION foreign_key_checks = 1"} {
		if _, err := s.ddlConn.Execute(q); err != nil {
			return fmt.Errorf("snapshot: target: %s: %w", q, err)
		}
	}
	return nil
}

// EndSnapshot commits what is pending (with the checkpoint) and then
// removes the mark: from here on the checkpoint holds.
func (s *Sink) EndSnapshot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if s.group.txs > 0 || s.inTx {
		if err := s.commitGroup(change.Position{}); err != nil {
			return err
		}
	}
	if _, err := s.conn.Execute("DELETE FROM "+snapshotTable+" WHERE replica = ?", s.opts.Replica); err != nil {
		return fmt.Errorf("target: unmarking the snapshot: %w", err)
	}
	return nil
}
