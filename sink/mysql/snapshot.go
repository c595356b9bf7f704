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
// and did not finish, and its progress (snapshot.ResumeState as JSON) when it
// saved any: then it is continued, or (done) the stream reconciles the
// window it left; without progress it is taken again.
func (s *Sink) SnapshotUnfinished() (unfinished bool, state []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	r, err := s.conn.Execute("SELECT state FROM "+snapshotTable+" WHERE replica = ?", s.opts.Replica)
	if c := myErrorCode(err); c == mysql.ER_NO_SUCH_TABLE {
		return false, nil, nil
	} else if c == mysql.ER_BAD_FIELD_ERROR {
		// A mark from before progress was saved.
		r, err = s.conn.Execute("SELECT NULL FROM "+snapshotTable+" WHERE replica = ?", s.opts.Replica)
	}
	if err != nil {
		return false, nil, fmt.Errorf("target: reading %s: %w", snapshotTable, err)
	}
	if len(r.Values) == 0 {
		return false, nil, nil
	}
	b, _ := r.GetString(0, 0)
	if b != "" {
		state = []byte(b)
	}
	return true, state, nil
}

// BeginSnapshot marks a snapshot at pos as under way (committed at once).
func (s *Sink) BeginSnapshot(pos change.Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	if _, err := s.conn.Execute("CREATE TABLE IF NOT EXISTS " + snapshotTable + ` (
  replica VARCHAR(191) NOT NULL,
  file VARCHAR(255) NOT NULL,
  pos BIGINT UNSIGNED NOT NULL,
  started DATETIME(6) NOT NULL,
  state LONGBLOB NULL,
  PRIMARY KEY (replica)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='binlogcdc: a snapshot being copied, and its progress'`); err != nil {
		return fmt.Errorf("target: creating %s: %w", snapshotTable, err)
	}
	// A table from before progress was saved.
	if _, err := s.conn.Execute("ALTER TABLE " + snapshotTable + " ADD COLUMN state LONGBLOB NULL"); err != nil && myErrorCode(err) != mysql.ER_DUP_FIELDNAME {
		return fmt.Errorf("target: adding the state column to %s: %w", snapshotTable, err)
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
	s.wait()
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
// finish); left as it is when cont (a resumed snapshot continues it
// after the rows it holds); otherwise it must be empty.
func (s *Sink) PrepareSnapshotTable(t *tablemap.Table, redo, cont bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
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
	if n, _ := r.GetInt(0, 0); n == 0 || cont {
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

// EndSnapshot commits what is pending (with the checkpoint and the
// snapshot's progress). With done nil the mark is removed: from here on
// the checkpoint holds as it is. Otherwise done (the finished snapshot's
// progress) replaces it: the stream must reconcile the window that
// resumed parts left, and a restart inside it needs to know them.
func (s *Sink) EndSnapshot(done []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	if err := s.check(); err != nil {
		return err
	}
	if s.group.txs > 0 || s.inTx {
		if err := s.commitGroup(change.Position{}); err != nil {
			return err
		}
	}
	if done != nil {
		if _, err := s.conn.Execute("UPDATE "+snapshotTable+" SET state = ? WHERE replica = ?", done, s.opts.Replica); err != nil {
			return fmt.Errorf("target: saving the snapshot's progress: %w", err)
		}
		return nil
	}
	return s.dropSnapshotMark()
}

// DropSnapshotMark removes the snapshot's mark and progress (once the
// stream passed the window the snapshot left).
func (s *Sink) DropSnapshotMark() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	return s.dropSnapshotMark()
}

func (s *Sink) dropSnapshotMark() error {
	if _, err := s.conn.Execute("DELETE FROM "+snapshotTable+" WHERE replica = ?", s.opts.Replica); err != nil {
		return fmt.Errorf("target: unmarking the snapshot: %w", err)
	}
	return nil
}
