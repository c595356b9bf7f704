package mysqlsink

import (
	"fmt"
	"time"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Policy says what to do with a conflict: an UPDATE or DELETE whose row is
// not on the target, or an INSERT (or key-changing UPDATE) that hits a
// duplicate key.
type Policy uint8

const (
	// PolicyError stops with a *ConflictError (the default).
	PolicyError Policy = iota
	// PolicyOverwrite makes the target row what the source says: an
	// insert or update becomes a REPLACE of the after image, a delete
	// deletes the row if it is there.
	PolicyOverwrite
	// PolicySkip leaves the target as it is, logs and counts the change.
	PolicySkip
)

// ParsePolicy parses "error", "overwrite" or "skip".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "error", "":
		return PolicyError, nil
	case "overwrite":
		return PolicyOverwrite, nil
	case "skip":
		return PolicySkip, nil
	}
	return 0, fmt.Errorf("want error, overwrite or skip, not %q", s)
}

// Options configure a Sink.
type Options struct {
	Replica    string // the checkpoint row's key (default "default")
	OnConflict Policy
	// IgnoreMissingColumns leaves out of the statements the columns that
	// the target table lacks; otherwise such a column is an error.
	IgnoreMissingColumns bool
	// KeepDropped skips DROP TABLE, DROP DATABASE and TRUNCATE.
	KeepDropped bool
	// CreateTable, if set, builds the CREATE TABLE statement for a table
	// that does not exist on the target (mariadb: the target is MariaDB);
	// nil: a missing table is an error.
	CreateTable func(t *tablemap.Table, mariadb bool) (string, error)
	// FireTriggers applies changes to tables that have triggers on the
	// target (which then fire on every replayed row) and replays CREATE
	// and DROP TRIGGER; by default such a table is an error and trigger
	// DDL is skipped (catalog.go).
	FireTriggers bool
	// Accounts applies account management statements (see
	// sqltext.NotReplayed).
	Accounts bool
	// ForeignKeys follows each rows event's foreign key flags as a native
	// replica does: foreign_key_checks=1 (so InnoDB cascades to the child
	// rows, which the binlog does not carry) unless the source session had
	// them off, or (MySQL 9.6+) logged the cascaded rows itself. Off: all
	// changes apply with foreign_key_checks=0 (recover, which restores one
	// table, must not cascade into others).
	ForeignKeys bool
	// GroupRows and GroupTime bound a group of source transactions applied
	// in one target transaction (defaults DefaultGroupRows, 1 s). A
	// source transaction is never split, whatever its size.
	GroupRows int
	GroupTime time.Duration
	// LoadData sends long insert runs as LOAD DATA LOCAL INFILE when the
	// target allows it (bulk.go); by default they go as multi-row INSERTs
	// of up to bulkInsertRows rows (apply.go), their values encoded as
	// they are queued (encoded.go), which cost MariaDB less.
	LoadData bool
	// NoBulkLoad turns batching off: inserts go as multi-row INSERTs of
	// up to maxBatchRows rows (never LOAD DATA),
	// updates one UPDATE each (upsert.go), deletes one DELETE each
	// (delete.go).
	NoBulkLoad bool
	quietBulk  bool // no note when the target refuses it (Parallel's workers after the first)
	// Logf reports skipped and overwritten conflicts and DDL events.
	Logf func(format string, args ...any)
}

// DefaultGroupRows is Options.GroupRows' default: enough rows per target
// transaction that its fixed costs (BEGIN, the checkpoint row, COMMIT,
// a LOAD DATA statement per insert run) are small beside the rows' own,
// few enough that it holds its row locks only briefly. Replaying 1M
// inserts in 1000-row source transactions took 5.1 s with groups of
// 1,000 rows and 4.0 s with 10,000 (README, "Performance").
const DefaultGroupRows = 10000
