// Package snapshot copies the tables of a live MySQL or MariaDB server as
// they were at one binlog position, without stopping the server, and
// turns their rows into the same change.Value as the binlog gives for
// them: the start of a CDC stream that begins from the data already there.
//
// # Consistency
//
// MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT, then the
// binlog_snapshot_file and binlog_snapshot_position status variables: the
// binlog position the transaction's read view is exactly consistent with
// (InnoDB and the binlog agree on it without any lock). The GTID position
// is BINLOG_GTID_POS() of that position, or @@gtid_binlog_pos when nothing
// was written to the binlog since (see idleGTIDPos).
//
// MySQL: it has no such status, so the snapshot is opened under FLUSH
// TABLES WITH READ LOCK (held only while the transaction starts and the
// position is read: SHOW BINARY LOG STATUS / SHOW MASTER STATUS, which
// also gives the executed GTID set), then UNLOCK TABLES. This needs the
// RELOAD privilege and waits for running statements; it is not tested
// here (no MySQL server runs in the tests).
//
// Only transactional tables (InnoDB) are read inside the snapshot; a
// table of another engine (MyISAM, Aria, MEMORY…) is read as it is at the
// moment of reading, so it is refused unless AllowNonTransactional.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Position is the binlog position a snapshot is consistent with: the
// first change not in it starts at File:Offset.
type Position struct {
	File   string
	Offset uint64
	// GTID is the GTID position at File:Offset: MariaDB's
	// BINLOG_GTID_POS (one GTID per domain), MySQL's gtid_executed.
	GTID string
	// Time is when the snapshot was taken (the server's clock, UTC).
	Time time.Time
}

// Pos returns File:Offset.
func (p Position) Pos() change.Position { return change.Position{File: p.File, Offset: p.Offset} }

// Source is an open consistent snapshot: one connection holding a
// REPEATABLE READ transaction.
type Source struct {
	conn    *client.Conn
	mariadb bool
	Pos     Position
}

// Begin starts the snapshot on conn (which it owns from then on: Close
// closes it). flavor is "mariadb" or "mysql".
func Begin(ctx context.Context, conn *client.Conn, flavor string) (*Source, error) {
	s := &Source{conn: conn, mariadb: flavor == "mariadb"}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := setupSession(conn, s.mariadb); err != nil {
		return nil, s.err(ctx, "session setup", err)
	}
	var err error
	if s.mariadb {
		err = s.beginMariaDB()
	} else {
		err = s.beginMySQL()
	}
	if err != nil {
		return nil, s.err(ctx, "opening the snapshot", err)
	}
	r, err := conn.Execute("SELECT UNIX_TIMESTAMP()")
	if err != nil {
		return nil, s.err(ctx, "SELECT UNIX_TIMESTAMP()", err)
	}
	if sec, err := r.GetInt(0, 0); err == nil {
		s.Pos.Time = time.Unix(sec, 0).UTC()
	}
	return s, nil
}

// setupSession sets what a snapshot session reads with: UTC, REPEATABLE
// READ, no sql_mode, values unconverted, no time limits.
func setupSession(conn *client.Conn, mariadb bool) error {
	for _, q := range []string{
		"SET SESSION time_zone = '+00:00'",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"SET SESSION sql_mode = ''", // no PAD_CHAR_TO_FULL_LENGTH, no ANSI_QUOTES
		"SET SESSION character_set_results = NULL",
		// A slow sink must not make the server give up on the SELECT.
		"SET SESSION net_write_timeout = 86400",
	} {
		if _, err := conn.Execute(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	// No statement time limit for the long SELECTs (MariaDB, MySQL).
	limit := "SET SESSION max_statement_time = 0"
	if !mariadb {
		limit = "SET SESSION max_execution_time = 0"
	}
	if _, err := conn.Execute(limit); err != nil {
		return fmt.Errorf("%s: %w", limit, err)
	}
	return nil
}

func (s *Source) err(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("snapshot: %s: %w", what, err)
}

func (s *Source) beginMariaDB() error {
	if _, err := s.conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return err
	}
	return s.readMariaDBPos()
}

// readMariaDBPos reads the position of the open consistent snapshot.
func (s *Source) readMariaDBPos() error {
	r, err := s.conn.Execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return err
	}
	for i := range r.Values {
		name, _ := r.GetString(i, 0)
		val, _ := r.GetString(i, 1)
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			s.Pos.File = baseName(val)
		case "binlog_snapshot_position":
			s.Pos.Offset, _ = strconv.ParseUint(val, 10, 64)
		}
	}
	if s.Pos.File == "" || s.Pos.Offset < 4 {
		return errors.New("the server gives no binlog_snapshot_file/binlog_snapshot_position: is log_bin on?")
	}
	if g, ok := s.idleGTIDPos(); ok {
		s.Pos.GTID = g
		return nil
	}
	r, err = s.conn.Execute("SELECT BINLOG_GTID_POS(?, ?)", s.Pos.File, s.Pos.Offset)
	if err != nil {
		return err
	}
	s.Pos.GTID, _ = r.GetString(0, 0)
	return nil
}

// idleGTIDPos gives the GTID position at the snapshot's position without
// BINLOG_GTID_POS, which reads the binlog file from its start up to the
// position (on a 142 MB binlog, 0.04-0.06 s of the server's CPU, before
// the first row): when nothing was written to the binlog since the
// snapshot's position, the server's @@gtid_binlog_pos is the GTID
// position there. SHOW MASTER STATUS reads the binlog's write position
// under the binlog's lock, under which the server also adds each GTID to
// that state as it writes it: the snapshot's position before and after
// reading @@gtid_binlog_pos means that no write came in between, and none
// since the snapshot. Only for one domain: with several,
// BINLOG_GTID_POS lists them in another order (the same position, but the
// rows' "gtid" would change). ok is false when it cannot tell (a write
// came, several domains, no GTID yet, no privilege for SHOW MASTER
// STATUS): then BINLOG_GTID_POS gives it.
func (s *Source) idleGTIDPos() (gtid string, ok bool) {
	atSnapshot := func() bool {
		r, err := s.conn.Execute("SHOW MASTER STATUS")
		if err != nil || len(r.Values) == 0 {
			return false
		}
		f, _ := r.GetString(0, 0)
		o, err := r.GetUint(0, 1)
		return err == nil && baseName(f) == s.Pos.File && o == s.Pos.Offset
	}
	if !atSnapshot() {
		return "", false
	}
	r, err := s.conn.Execute("SELECT @@GLOBAL.gtid_binlog_pos")
	if err != nil || len(r.Values) == 0 {
		return "", false
	}
	g, _ := r.GetString(0, 0)
	if g == "" || strings.ContainsAny(g, ", \n") || !atSnapshot() {
		return "", false
	}
	return g, true
}

func (s *Source) beginMySQL() error {
	if _, err := s.conn.Execute("FLUSH TABLES WITH READ LOCK"); err != nil {
		return fmt.Errorf("%w (MySQL needs the RELOAD privilege for the moment the snapshot starts)", err)
	}
	defer s.conn.Execute("UNLOCK TABLES")
	if _, err := s.conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return err
	}
	r, err := s.conn.Execute("SHOW BINARY LOG STATUS")
	if err != nil {
		if r, err = s.conn.Execute("SHOW MASTER STATUS"); err != nil {
			return err
		}
	}
	if len(r.Values) == 0 {
		return errors.New("SHOW MASTER STATUS is empty: is log_bin on?")
	}
	file, _ := r.GetString(0, 0)
	pos, _ := r.GetUint(0, 1)
	s.Pos.File, s.Pos.Offset = baseName(file), pos
	if len(r.Fields) >= 5 {
		g, _ := r.GetString(0, 4)
		s.Pos.GTID = strings.ReplaceAll(strings.ReplaceAll(g, "\n", ""), " ", "")
	}
	_, err = s.conn.Execute("UNLOCK TABLES")
	return err
}

func baseName(f string) string {
	if i := strings.LastIndexAny(f, "/\\"); i >= 0 {
		return f[i+1:]
	}
	return f
}

// Close ends the snapshot's transaction and closes the connection.
func (s *Source) Close() error {
	s.conn.Execute("COMMIT")
	return s.conn.Close()
}

// TableInfo is a table the snapshot copies.
type TableInfo struct {
	DB, Name string
	Engine   string
	Rows     uint64 // the server's estimate
}

// ShowCreateTable returns db.name's SHOW CREATE TABLE, read in the
// snapshot's session (right after it began, the schema its rows have).
func (s *Source) ShowCreateTable(db, name string) (string, error) {
	r, err := s.conn.Execute("SHOW CREATE TABLE " + tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name))
	if err != nil {
		return "", fmt.Errorf("snapshot: SHOW CREATE TABLE: %w", err)
	}
	return r.GetString(0, 1)
}

// ListTables lists the base tables the filter selects on the server conn
// is connected to, as Source.Tables does, whatever their engine.
func ListTables(conn *client.Conn, filter *pipeline.Filter) ([]TableInfo, error) {
	tables, _, err := (&Source{conn: conn}).Tables(filter, true)
	return tables, err
}

// NoteServerTables passes every table, view and sequence on the server
// (names only: information_schema need not open them) through the
// filter, so that its patterns that match one are not reported as
// matching nothing (Filter.Unmatched) by a stream that reads no change
// of them.
func NoteServerTables(conn *client.Conn, filter *pipeline.Filter) error {
	if _, err := conn.Execute("SET SESSION character_set_results = utf8mb4"); err != nil {
		return err
	}
	r, err := conn.Execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES")
	if err != nil {
		return err
	}
	for i := range r.Values {
		db, _ := r.GetString(i, 0)
		name, _ := r.GetString(i, 1)
		filter.Table(db, name)
	}
	return nil
}

// systemDBs are never copied.
var systemDBs = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true}

// Skipped is an object the filters select that the snapshot does not
// copy, and why.
type Skipped struct {
	DB, Name string
	Type     string // TABLE_TYPE, lower-cased: "view", "sequence", "system versioned", "base table"…
	Why      string
	System   bool // in a system database (mysql, information_schema, performance_schema, sys)
	// Excluded: a --tables pattern matches it, and an --exclude-tables
	// one too (not worth a message: the user said so; listed to explain
	// a --tables pattern that selects nothing).
	Excluded bool
}

// Tables lists the base tables the filter selects, in name order.
// Views, sequences, system-versioned tables, binlogcdc's own tables and,
// when --tables patterns select them, the system databases' tables are
// not copied: skipped names each with why. A table of a
// non-transactional engine is an error unless allowNonTx.
func (s *Source) Tables(filter *pipeline.Filter, allowNonTx bool) (tables []TableInfo, skipped []Skipped, err error) {
	if _, err := s.conn.Execute("SET SESSION character_set_results = utf8mb4"); err != nil {
		return nil, nil, err
	}
	r, err := s.conn.Execute("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, IFNULL(ENGINE,''), IFNULL(TABLE_ROWS,0) FROM information_schema.TABLES ORDER BY TABLE_SCHEMA, TABLE_NAME")
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot: listing tables: %w", err)
	}
	var nonTx []string
	for i := range r.Values {
		db, _ := r.GetString(i, 0)
		name, _ := r.GetString(i, 1)
		typ, _ := r.GetString(i, 2)
		engine, _ := r.GetString(i, 3)
		rows, _ := r.GetUint(i, 4)
		typ = strings.ToLower(typ)
		selected := filter.Table(db, name) // marks the patterns that match (Filter.Unmatched)
		if !selected {
			if filter.Includes() && filter.Excluded(db, name) {
				skipped = append(skipped, Skipped{DB: db, Name: name, Type: typ, Excluded: true, Why: "excluded by --exclude-tables"})
			}
			continue
		}
		if systemDBs[strings.ToLower(db)] {
			// Named only when a --tables pattern selects them: without
			// one, "every table" means every table outside them.
			if filter.Includes() {
				skipped = append(skipped, Skipped{DB: db, Name: name, Type: typ, System: true, Why: "a system database's, never copied"})
			}
			continue
		}
		if db == "binlogcdc" && (name == "checkpoint" || name == "snapshot" || name == "incremental" || name == "schema_history") {
			skipped = append(skipped, Skipped{DB: db, Name: name, Type: typ, Why: "binlogcdc's own bookkeeping (a --to target's checkpoint or snapshot progress), never copied"})
			continue
		}
		if typ != "base table" {
			skipped = append(skipped, Skipped{DB: db, Name: name, Type: typ, Why: notCopied(typ)})
			continue
		}
		q := tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
		if !strings.EqualFold(engine, "InnoDB") && !allowNonTx {
			nonTx = append(nonTx, q+" ("+engine+")")
		}
		tables = append(tables, TableInfo{DB: db, Name: name, Engine: engine, Rows: rows})
	}
	if len(nonTx) > 0 {
		return nil, nil, fmt.Errorf("snapshot: not transactional: %s. A consistent snapshot cannot include such a table: its rows could miss or repeat changes near the snapshot's position. Exclude it with --exclude-tables, convert it to InnoDB, or pass --allow-non-transactional when nothing writes to it while the snapshot runs",
			strings.Join(nonTx, ", "))
	}
	return tables, skipped, nil
}

// notCopied says why an object of this TABLE_TYPE (lower-cased) is not
// copied.
func notCopied(typ string) string {
	switch typ {
	case "view":
		return "a view holds no rows of its own (select the tables it reads)"
	case "sequence":
		return "a sequence is not copied (create it on the target yourself)"
	case "system versioned":
		return "a system-versioned table is not copied yet (its history rows and row_start/row_end are not read)"
	}
	return "its type is " + typ + ", not a base table"
}
