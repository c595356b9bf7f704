package verify

import (
	"fmt"
	"sort"
	"strings"
)

// side is one server: the source or the target.
type side struct {
	q    Querier
	name string
}

// tableInfo is what the catalog says about a table.
type tableInfo struct {
	db, name  string
	versioned bool
	where     string // Options.Where: the rows compared ("": all)
	cols      []column
	key       []string // the primary key's columns, in key order
	// indexes: each index's definition ("UNIQUE `u` (`a`,`b`(10))"),
	// in name order.
	indexes []index
	// options: the table's attributes that do not change its data
	// (engine, row format, default collation, comment, AUTO_INCREMENT).
	options map[string]string
}

// column is what information_schema.COLUMNS says about a column.
type column struct {
	name, typ, dataType, nullable, extra string
	pos                                  int
	def                                  *string // COLUMN_DEFAULT (nil: none)
	charset, collation                   string
	generated                            string // IS_GENERATED: NEVER or ALWAYS
	expr                                 string // GENERATION_EXPRESSION
	comment                              string
	asBytes                              bool // read as UNHEX(HEX()): a UUID or address on a side
}

// index is one index of a table.
type index struct {
	name   string
	unique bool
	cols   []string // `col` or `col`(prefix), DESC marked
	typ    string   // BTREE, HASH, FULLTEXT, SPATIAL
}

// exec runs a statement that returns no rows.
func (s *side) exec(q string) error {
	r, err := s.q.Execute(q)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, clip(q), err)
	}
	r.Close()
	return nil
}

// query runs a statement and returns its rows as text (nil for NULL).
func (s *side) query(q string) ([][]*string, error) {
	r, err := s.q.Execute(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.name, clip(q), err)
	}
	defer r.Close()
	if r.Resultset == nil {
		return nil, nil
	}
	out := make([][]*string, r.RowNumber())
	for i := range out {
		row := make([]*string, r.ColumnNumber())
		for j := range row {
			if null, _ := r.IsNull(i, j); null {
				continue
			}
			v, err := r.GetString(i, j)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", s.name, clip(q), err)
			}
			v = strings.Clone(v) // GetString aliases the pooled result buffer
			row[j] = &v
		}
		out[i] = row
	}
	return out, nil
}

func clip(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 200 {
		return q[:200] + "…"
	}
	return q
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// begin sets the session up and opens a consistent snapshot.
func (s *side) begin() error {
	for _, q := range []string{
		"SET SESSION time_zone = '+00:00'",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT",
	} {
		if err := s.exec(q); err != nil {
			return err
		}
	}
	return nil
}

// binlogPos is the server's binlog position ("" when unknown).
func (s *side) binlogPos() string {
	rows, err := s.query("SHOW MASTER STATUS")
	if err != nil || len(rows) == 0 || len(rows[0]) < 2 {
		return ""
	}
	return str(rows[0][0]) + ":" + str(rows[0][1])
}

// snapshotPos is the binlog position of the session's consistent
// snapshot (MariaDB's Binlog_snapshot_file/position), else the current
// one; "" without a binlog.
func (s *side) snapshotPos() string {
	rows, err := s.query("SHOW SESSION STATUS WHERE Variable_name IN ('Binlog_snapshot_file', 'Binlog_snapshot_position')")
	if err == nil && len(rows) == 2 {
		var file, pos string
		for _, r := range rows {
			if str(r[0]) == "Binlog_snapshot_file" {
				file = str(r[1])
			} else {
				pos = str(r[1])
			}
		}
		if file != "" {
			return file + ":" + pos
		}
	}
	return s.binlogPos()
}

// exactSnapshotPos is the binlog position of the session's consistent
// snapshot, from MariaDB's Binlog_snapshot_file/position: an error where
// the server does not tell it (MySQL), since SHOW MASTER STATUS, read
// after the snapshot began, may be past it.
func (s *side) exactSnapshotPos() (string, error) {
	rows, err := s.query("SHOW SESSION STATUS WHERE Variable_name IN ('Binlog_snapshot_file', 'Binlog_snapshot_position')")
	if err != nil {
		return "", err
	}
	var file, pos string
	for _, r := range rows {
		switch str(r[0]) {
		case "Binlog_snapshot_file":
			file = str(r[1])
		case "Binlog_snapshot_position":
			pos = str(r[1])
		}
	}
	if file == "" || pos == "" {
		return "", fmt.Errorf("%s: the server does not tell the binlog position of a consistent snapshot (MariaDB's Binlog_snapshot_file/position): "+
			"a live verification needs it, and the binary log on (MySQL has no such variables; use 'binlogcdc verify' while the stream is stopped)", s.name)
	}
	return file + ":" + pos, nil
}

// systemDBs are never compared.
var systemDBs = "'mysql','information_schema','performance_schema','sys'"

// TableName names a table.
type TableName struct{ DB, Name string }

// ListTables lists the base tables of a server that Run compares when
// sel (nil: all) selects them: never the system databases' nor
// binlogcdc's own.
func ListTables(q Querier, sel func(db, table string) bool) ([]TableName, error) {
	m, err := (&side{q: q, name: "server"}).list(sel)
	if err != nil {
		return nil, err
	}
	var out []TableName
	for _, t := range m {
		out = append(out, TableName{t.db, t.name})
	}
	return out, nil
}

// list lists the selected base tables, keyed by "db\x00table", without
// their definitions.
func (s *side) list(sel func(db, table string) bool) (map[string]*tableInfo, error) {
	rows, err := s.query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES " +
		"WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN (" + systemDBs + ")")
	if err != nil {
		return nil, err
	}
	out := map[string]*tableInfo{}
	for _, r := range rows {
		t := &tableInfo{db: str(r[0]), name: str(r[1]), versioned: str(r[2]) == "SYSTEM VERSIONED"}
		if t.db == "binlogcdc" && (t.name == "checkpoint" || t.name == "snapshot" || t.name == "incremental" || t.name == "schema_history") { // binlogcdc's bookkeeping
			continue
		}
		if sel != nil && !sel(t.db, t.name) {
			continue
		}
		out[t.db+"\x00"+t.name] = t
	}
	return out, nil
}

// tables lists the selected base tables, keyed by "db\x00table".
func (s *side) tables(sel func(db, table string) bool) (map[string]*tableInfo, error) {
	out, err := s.list(sel)
	if err != nil || len(out) == 0 {
		return out, err
	}
	where := "WHERE TABLE_SCHEMA NOT IN (" + systemDBs + ")" + onlyTables(out)
	opts, err := s.query("SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, ROW_FORMAT, TABLE_COLLATION, TABLE_COMMENT, AUTO_INCREMENT, CREATE_OPTIONS " +
		"FROM information_schema.TABLES " + where)
	if err != nil {
		return nil, err
	}
	for _, r := range opts {
		if t := out[str(r[0])+"\x00"+str(r[1])]; t != nil {
			t.options = map[string]string{"ENGINE": str(r[2]), "ROW_FORMAT": str(r[3]), "default COLLATE": str(r[4]),
				"COMMENT": str(r[5]), "AUTO_INCREMENT": str(r[6]), "options": str(r[7])}
		}
	}
	// MariaDB names a system-versioning period column's role in
	// GENERATION_EXPRESSION ("ROW START", "ROW END").
	cols, err := s.query("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, IS_NULLABLE, " +
		"CONCAT_WS(' ', EXTRA, IF(GENERATION_EXPRESSION IN ('ROW START', 'ROW END'), GENERATION_EXPRESSION, NULL)), " +
		"ORDINAL_POSITION, COLUMN_DEFAULT, IFNULL(CHARACTER_SET_NAME, ''), IFNULL(COLLATION_NAME, ''), IS_GENERATED, " +
		"IF(GENERATION_EXPRESSION IN ('ROW START', 'ROW END'), '', IFNULL(GENERATION_EXPRESSION, '')), COLUMN_COMMENT " +
		"FROM information_schema.COLUMNS " + where + " ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION")
	if err != nil {
		return nil, err
	}
	for _, r := range cols {
		if t := out[str(r[0])+"\x00"+str(r[1])]; t != nil {
			c := column{name: str(r[2]), typ: str(r[3]), dataType: strings.ToLower(str(r[4])), nullable: str(r[5]), extra: strings.ToUpper(str(r[6])),
				def: r[8], charset: str(r[9]), collation: str(r[10]), generated: str(r[11]), expr: str(r[12]), comment: str(r[13])}
			fmt.Sscan(str(r[7]), &c.pos)
			t.cols = append(t.cols, c)
		}
	}
	keys, err := s.query("SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART, COLLATION, INDEX_TYPE " +
		"FROM information_schema.STATISTICS " + where + " ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX")
	if err != nil {
		return nil, err
	}
	for _, r := range keys {
		t := out[str(r[0])+"\x00"+str(r[1])]
		if t == nil {
			continue
		}
		name := str(r[2])
		if name == "PRIMARY" {
			t.key = append(t.key, str(r[4]))
		}
		if n := len(t.indexes); n == 0 || t.indexes[n-1].name != name {
			t.indexes = append(t.indexes, index{name: name, unique: str(r[3]) == "0", typ: str(r[7])})
		}
		ix := &t.indexes[len(t.indexes)-1]
		c := quote(str(r[4]))
		if r[5] != nil {
			c += "(" + *r[5] + ")"
		}
		if str(r[6]) == "D" {
			c += " DESC"
		}
		ix.cols = append(ix.cols, c)
	}
	return out, nil
}

// onlyTables narrows the catalog queries to a few selected tables (a
// live verification compares one at a time): " AND (TABLE_SCHEMA,
// TABLE_NAME) IN (...)", or "" for many, which are read whole. The
// names compare without case there; the rows are matched exactly after.
func onlyTables(m map[string]*tableInfo) string {
	if len(m) > 64 {
		return ""
	}
	var pairs []string
	for _, t := range m {
		pairs = append(pairs, "("+literal(t.db)+", "+literal(t.name)+")")
	}
	sort.Strings(pairs)
	return " AND (TABLE_SCHEMA, TABLE_NAME) IN (" + strings.Join(pairs, ", ") + ")"
}

// count is the number of rows (with history for versioned tables).
func (s *side) count(t *tableInfo) (int64, error) {
	rows, err := s.query("SELECT COUNT(*) FROM " + scope(t, ""))
	if err != nil {
		return 0, err
	}
	var n int64
	fmt.Sscan(str(rows[0][0]), &n)
	return n, nil
}

// from is the FROM clause: the table, with its history when versioned.
func from(t *tableInfo) string {
	f := quote(t.db) + "." + quote(t.name)
	if t.versioned {
		f += " FOR SYSTEM_TIME ALL"
	}
	return f
}

// scope is the FROM clause with the WHERE clause of the rows compared:
// those of the table's chunk (Options.Where) matching cond ("": all).
func scope(t *tableInfo, cond string) string {
	var conds []string
	for _, c := range []string{t.where, cond} {
		if c != "" {
			conds = append(conds, c)
		}
	}
	if len(conds) == 0 {
		return from(t)
	}
	return from(t) + " WHERE (" + strings.Join(conds, ") AND (") + ")"
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys(a, b map[string]*tableInfo) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]*tableInfo{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
