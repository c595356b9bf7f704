package mysqlsink

import "fmt"

// Foreign keys. The binlog does not carry the child rows InnoDB changes
// when it cascades a parent's delete or update (ON DELETE CASCADE, SET
// NULL, ON UPDATE CASCADE): a native replica gets them by applying the
// parent's row with foreign_key_checks on, so that InnoDB cascades again.
// Replay does the same (Options.ForeignKeys): each change runs with
// foreign_key_checks=1, except those of a rows event flagged
// NO_FOREIGN_KEY_CHECKS_F (the source session had them off: no cascade
// happened there either) or USE_SQL_FOREIGN_KEY_F (MySQL 9.6+ logged the
// cascaded child rows itself, before the parent's). Changes apply in
// source order, which was valid on the source. DDL and the checkpoint run
// with foreign_key_checks=0, as SessionSetup sets it.

// setForeignKeyChecks sets the session's foreign_key_checks when it
// differs.
func (s *Sink) setForeignKeyChecks(on bool) error {
	if s.fkChecks == on {
		return nil
	}
	q := "SET foreign_key_checks = 0"
	if on {
		q = "SET foreign_key_checks = 1"
	}
	if err := s.plain(q); err != nil {
		return fmt.Errorf("target: %s: %w", q, err)
	}
	s.fkChecks = on
	return nil
}

// insertHistory turns on system_versioning_insert_history (MariaDB
// 10.11+), which lets INSERT write a system-versioned table's row_start
// and row_end: the source's history rows and times (versioned.go).
func (s *Sink) insertHistory() error {
	if s.historyOn {
		return nil
	}
	if err := s.plain("SET SESSION system_versioning_insert_history = ON"); err != nil {
		return fmt.Errorf("the table is system-versioned on the target, which cannot take the source's history rows and "+
			"row_start/row_end: that needs system_versioning_insert_history (MariaDB 10.11 or later) (%w); "+
			"leave the table out (--exclude-tables), or replay into a MariaDB 10.11+ target", err)
	}
	s.historyOn = true
	return nil
}
