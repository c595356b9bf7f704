package mysqlsink

import "fmt"

// The stream's schema history (package schemahist, docs/schema-history.md)
// is kept in binlogcdc.schema_history, one row per replica, updated in
// the same target transaction as the checkpoint: after a crash the
// history and the checkpoint agree.

const schemaHistoryTable = "`binlogcdc`.`schema_history`"

// SchemaHistory creates binlogcdc.schema_history when missing and returns
// the replica's saved history (nil: none).
func (s *Sink) SchemaHistory() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	return s.replicaBlob(schemaHistoryTable, "history", "the schema history of the stream")
}

// replicaBlob creates table (replica, col LONGBLOB, updated), one row per
// replica and updated in the same transaction as the checkpoint, when
// missing, and returns the replica's saved value (nil: none). what says
// what it holds (the table's comment).
func (s *Sink) replicaBlob(table, col, what string) ([]byte, error) {
	if _, err := s.conn.Execute("CREATE TABLE IF NOT EXISTS " + table + ` (
  replica VARCHAR(191) NOT NULL,
  ` + col + ` LONGBLOB NOT NULL,
  updated DATETIME(6) NOT NULL,
  PRIMARY KEY (replica)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='binlogcdc: ` + what + `; updated in the same transaction as the checkpoint'`); err != nil {
		return nil, fmt.Errorf("target: creating %s: %w", table, err)
	}
	r, err := s.conn.Execute("SELECT "+col+" FROM "+table+" WHERE replica = ?", s.opts.Replica)
	if err != nil {
		return nil, fmt.Errorf("target: reading %s: %w", table, err)
	}
	if len(r.Values) == 0 {
		return nil, nil
	}
	b, _ := r.GetString(0, 0)
	if b == "" {
		return nil, nil
	}
	return []byte(b), nil
}

// SetSchemaHistory makes the next Commit save the schema history data
// in binlogcdc.schema_history, in the target transaction that holds that
// source transaction and its checkpoint.
func (s *Sink) SetSchemaHistory(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextHist = data
}

// saveSchemaHistory writes the group's history inside the open target transaction.
func (s *Sink) saveSchemaHistory(data []byte) error {
	return s.execPrepared("REPLACE INTO "+schemaHistoryTable+" (replica, history, updated) VALUES (?, ?, NOW(6))", s.opts.Replica, data)
}
