package mysqlsink

import (
	"fmt"
	"strings"
)

// What replay learns of a target table from the target's catalog, and
// what it does with it:
//
//   - Generated columns (VIRTUAL and STORED): the binlog carries their
//     values, but the target computes them and refuses a value (ERROR
//     1906). They are left out of INSERT and of UPDATE's SET; a keyless
//     table's WHERE still compares them (they hold the same values).
//   - Triggers: the binlog already holds every row the source's triggers
//     wrote; firing the target's triggers again would apply them twice.
//     A native replica does not fire triggers for row events, and no
//     session setting turns them off (MariaDB's slave_run_triggers_for_rbr
//     is for its own replication threads only), so a table with triggers
//     on the target is refused before anything is written to it, unless
//     Options.FireTriggers.
//   - System versioning (MariaDB WITH SYSTEM VERSIONING): see versioned.go.
//   - MariaDB's UUID, INET4 and INET6 columns: the binlog logs their
//     values as BINARY(16)/BINARY(4), which INSERT binds as binary. A
//     LOAD DATA field in the file's character set is parsed as their text
//     instead: refused, or, when the bytes happen to spell an address
//     ("::ffff:10.0.0.10" is 16 bytes), stored as that other value
//     without a warning. Their tables' inserts go by INSERT.
type tableInfo struct {
	cols      map[string]colInfo // by lower-cased name; nil: no such table
	versioned bool               // TABLE_TYPE 'SYSTEM VERSIONED'
	triggers  []string
}

type colInfo struct {
	generated bool // GENERATED ALWAYS AS (expr), VIRTUAL or STORED
	period    byte // 's': ROW START, 'e': ROW END column of system versioning
	trxID     bool // a period column holding transaction ids, not timestamps
	textual   bool // UUID, INET4, INET6: LOAD DATA parses the binlog's bytes as text
}

// loadTableInfo reads db.name's columns, type and triggers from the
// target's information_schema (nil cols: the table does not exist).
func (s *Sink) loadTableInfo(db, name string) (*tableInfo, error) {
	ti := &tableInfo{}
	r, err := s.conn.Execute("SELECT COLUMN_NAME, EXTRA, COALESCE(GENERATION_EXPRESSION, ''), DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, name)
	if err != nil {
		return nil, fmt.Errorf("target: information_schema.COLUMNS: %w", err)
	}
	for i := range r.RowNumber() {
		n, _ := r.GetString(i, 0)
		extra, _ := r.GetString(i, 1)
		expr, _ := r.GetString(i, 2)
		typ, _ := r.GetString(i, 3)
		var ci colInfo
		switch {
		case strings.EqualFold(expr, "ROW START"):
			ci.period = 's'
		case strings.EqualFold(expr, "ROW END"):
			ci.period = 'e'
		case generatedExtra(extra):
			ci.generated = true
		}
		ci.trxID = ci.period != 0 && !strings.EqualFold(typ, "timestamp")
		switch strings.ToLower(typ) {
		case "uuid", "inet4", "inet6":
			ci.textual = true
		}
		if ti.cols == nil {
			ti.cols = map[string]colInfo{}
		}
		ti.cols[strings.ToLower(strings.Clone(n))] = ci // n may point into a reused buffer
	}
	r.Close()
	if ti.cols == nil {
		return ti, nil
	}
	r, err = s.conn.Execute("SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, name)
	if err != nil {
		return nil, fmt.Errorf("target: information_schema.TABLES: %w", err)
	}
	if r.RowNumber() > 0 {
		typ, _ := r.GetString(0, 0)
		ti.versioned = strings.EqualFold(typ, "SYSTEM VERSIONED")
	}
	r.Close()
	if ti.versioned {
		// WITH SYSTEM VERSIONING without period columns of its own: the
		// implicit row_start and row_end, which the catalog does not list.
		explicit := false
		for _, c := range ti.cols {
			explicit = explicit || c.period != 0
		}
		if !explicit {
			ti.cols["row_start"] = colInfo{period: 's'}
			ti.cols["row_end"] = colInfo{period: 'e'}
		}
	}
	r, err = s.conn.Execute("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ? ORDER BY TRIGGER_NAME", db, name)
	if err != nil {
		return nil, fmt.Errorf("target: information_schema.TRIGGERS: %w", err)
	}
	for i := range r.RowNumber() {
		n, _ := r.GetString(i, 0)
		ti.triggers = append(ti.triggers, strings.Clone(n))
	}
	r.Close()
	return ti, nil
}

// generatedExtra reports whether information_schema.COLUMNS.EXTRA marks a
// generated column: "VIRTUAL GENERATED", "STORED GENERATED" (MySQL,
// MariaDB), "PERSISTENT GENERATED" (older MariaDB); not MySQL's
// "DEFAULT_GENERATED", a column with an expression default, which takes
// values.
func generatedExtra(extra string) bool {
	e := strings.ToUpper(extra)
	return strings.Contains(e, "VIRTUAL GENERATED") || strings.Contains(e, "STORED GENERATED") || strings.Contains(e, "PERSISTENT GENERATED")
}
