package recovery

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Schema is the table a recovery creates.
type Schema struct {
	// CreateSQL is the CREATE TABLE statement, for the output name
	// (without a trailing ';').
	CreateSQL string
	// From says where it comes from, for messages.
	From string
	// FromBinlogStatement is true when CreateSQL is the binlog's own
	// CREATE TABLE statement (renamed), false when it was built from a
	// TABLE_MAP.
	FromBinlogStatement bool
	// Final is the incarnation's last TABLE_MAP, renamed to the output
	// Name: the columns its rows are written in. nil when no row of it is
	// in the binlogs.
	Final    *tablemap.Table
	finalPos change.Position
	stages   []stage
	// Warnings are things the user should know about the schema.
	Warnings []string
}

// lastTable returns the incarnation's last TABLE_MAP, or that of the
// incarnation a TRUNCATE replaced when this one has no rows.
func (inc *Incarnation) lastTableMap() (*tablemap.Table, change.Position) {
	for i := inc; i != nil; i = i.inherit {
		if i.lastTable != nil {
			return i.lastTable, i.lastPos
		}
	}
	return nil, change.Position{}
}

// Schema returns the table to create for inc under db.Name. mariadb
// chooses MariaDB's collation names for a CREATE TABLE built from a
// TABLE_MAP (the target's flavor).
//
// The binlog's own CREATE TABLE statement is used when the incarnation
// was created inside the binlogs by a statement that defines its columns
// (not LIKE, not … SELECT) and no ALTER TABLE changed it since; otherwise
// CREATE TABLE is built from its last TABLE_MAP (tablemap.CreateTable).
func (h *History) Schema(inc *Incarnation, db, name string, mariadb bool) (*Schema, error) {
	s := &Schema{}
	last, lastPos := inc.lastTableMap()
	stages, notes := h.stages(inc)
	s.stages = stages
	if fin := stages[len(stages)-1]; fin.t != nil {
		last = fin.t
		switch {
		case fin.fromMap:
		case fin.alter != nil:
			lastPos = fin.alter.ev.Pos
		case inc.Created != nil: // no row change, no ALTER: the CREATE TABLE statement's
			lastPos = inc.Created.Pos
		}
	} else if last != nil {
		notes = append(notes, fmt.Sprintf("the schema after the last ALTER TABLE is unknown: the table is rebuilt as its last TABLE_MAP (at %s:%d) says", lastPos.File, lastPos.Offset))
	}
	if last != nil {
		f := *last
		f.DB, f.Name = db, name
		s.Final, s.finalPos = &f, lastPos
	}
	s.Warnings = append(s.Warnings, notes...)
	if inc.createSQL != "" && len(inc.alters) == 0 && !inc.alteredBefore {
		sql, warn := rewriteCreate(inc.createSQL, inc.createName, db, name, s.Final, mariadb)
		s.CreateSQL, s.FromBinlogStatement = sql, true
		s.From = "the binlog's CREATE TABLE statement"
		if inc.Created != nil && inc.CreatedBy == "CREATE TABLE" {
			s.From += fmt.Sprintf(" at %s:%d", inc.Created.Pos.File, inc.Created.Pos.Offset)
		}
		if warn != "" {
			s.Warnings = append(s.Warnings, warn)
		}
		return s, nil
	}
	if s.Final == nil {
		why := "it existed before the binlogs"
		switch {
		case inc.Created != nil && inc.CreatedBy != "CREATE TABLE":
			why = "it was created by " + inc.CreatedBy
		case inc.createSQL != "":
			why = "ALTER TABLE changed it after its CREATE TABLE"
		}
		return nil, fmt.Errorf("the columns of incarnation #%d of %s are unknown: %s, and the binlogs hold no row change of it (so no TABLE_MAP)",
			inc.N, quoteName(h.DB, h.Table), why)
	}
	sql, err := tablemap.CreateTable(s.Final, tablemap.CreateOptions{MariaDB: mariadb})
	if err != nil {
		return nil, err
	}
	s.CreateSQL = sql
	s.From = fmt.Sprintf("the TABLE_MAP of its last row change, at %s:%d", lastPos.File, lastPos.Offset)
	fin := stages[len(stages)-1]
	switch {
	case fin.shape != nil && fin.shape.Rooted && fin.t != nil:
		s.CreateSQL = fromDDL(sql, s.Final, fin.shape, mariadb)
		s.From = fmt.Sprintf("the binlog's CREATE TABLE statement at %s:%d and the ALTER TABLE after it", inc.Created.Pos.File, inc.Created.Pos.Offset)
		if len(inc.alters) > 1 {
			s.From = fmt.Sprintf("the binlog's CREATE TABLE statement at %s:%d and the %d ALTER TABLEs after it", inc.Created.Pos.File, inc.Created.Pos.Offset, len(inc.alters))
		}
	case fin.t != nil && !fin.fromMap:
		s.From = fmt.Sprintf("its last TABLE_MAP and the ALTER TABLE statements after it (the last at %s:%d)", lastPos.File, lastPos.Offset)
		s.Warnings = append(s.Warnings, lostByTableMap(s.Final, fin.shape, h.MariaDB)...)
	default:
		s.Warnings = append(s.Warnings, lostByTableMap(s.Final, fin.shape, h.MariaDB)...)
	}
	return s, nil
}

// ddlNote heads a CREATE TABLE derived from the binlog's DDL statements.
const ddlNote = "-- Rebuilt by binlogcdc from the binlog's CREATE TABLE and ALTER TABLE statements (the columns,\n" +
	"-- their types, character sets, NULL, DEFAULT, ON UPDATE, COMMENT, INVISIBLE, and the primary key),\n" +
	"-- checked against its TABLE_MAPs. It lacks: secondary indexes and UNIQUE keys, AUTO_INCREMENT, foreign\n" +
	"-- keys, CHECK constraints, display widths, ZEROFILL, and table options (engine, row format, partitioning).\n"

// fromDDL rewrites the CREATE TABLE that tablemap.CreateTable built from
// the derived final table: the types a TABLE_MAP cannot name (UUID,
// INET4, INET6) as the DDL named them, each column's DEFAULT, ON UPDATE
// and COMMENT clauses, and the note.
func fromDDL(sql string, final *tablemap.Table, sh *schemahist.Shape, mariadb bool) string {
	sql = strings.Replace(sql, tablemap.CreateTableNote, ddlNote, 1)
	for i := range final.Columns {
		c := &final.Columns[i]
		def, err := tablemap.ColumnDefinition(c, mariadb)
		if err != nil {
			continue
		}
		key := strings.ToLower(c.Name)
		line := "\n  " + tablemap.QuoteIdent(c.Name) + " " + def
		repl := line
		if tn := sh.TypeNames[key]; tn != "" {
			repl = strings.Replace(repl, fmt.Sprintf(" BINARY(%d)", c.Length), " "+tn, 1)
		}
		if a := sh.Attrs[key].String(); a != "" {
			repl += " " + a
		}
		for _, end := range []string{",\n", "\n)"} {
			if strings.Contains(sql, line+end) {
				sql = strings.Replace(sql, line+end, repl+end, 1)
				break
			}
		}
	}
	return sql
}

// lostByTableMap lists what a CREATE TABLE built from a MariaDB TABLE_MAP
// may have lost beyond tablemap.CreateTableNote: the types it cannot name
// and column visibility. Columns the DDL history named are left out.
func lostByTableMap(final *tablemap.Table, sh *schemahist.Shape, mariadb bool) []string {
	if !mariadb {
		return nil
	}
	var bin []string
	for i := range final.Columns {
		c := &final.Columns[i]
		if sh != nil && sh.TypeNames[strings.ToLower(c.Name)] != "" {
			continue
		}
		if c.Type == mysql.MYSQL_TYPE_STRING && c.IsBinary() && (c.Length == 16 || c.Length == 4) {
			bin = append(bin, fmt.Sprintf("%s BINARY(%d)", tablemap.QuoteIdent(c.Name), c.Length))
		}
	}
	out := []string{"MariaDB does not log column visibility: INVISIBLE columns, if the table had any, are rebuilt visible"}
	if len(bin) > 0 {
		out = append(out, fmt.Sprintf("MariaDB logs UUID and INET6 columns as BINARY(16), INET4 as BINARY(4): %s may have been one of them (the bytes are kept exactly)",
			strings.Join(bin, ", ")))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// rewriteCreate turns the binlog's CREATE TABLE statement into one that
// creates db.Name: "CREATE TABLE `db`.`name`" and the statement's text
// after its table name. When the statement leaves the character set of
// some text columns to the database's default (which the target's may
// not share), the table's DEFAULT CHARSET and COLLATE are pinned to what
// the TABLE_MAP says those columns had.
func rewriteCreate(sql string, n sqllex.TableName, db, name string, final *tablemap.Table, mariadb bool) (string, string) {
	rest := sql[n.End:]
	// MySQL 8.0.21+ logs CREATE TABLE … SELECT as "CREATE TABLE t (…)
	// START TRANSACTION" followed by the rows: a clause for the applier only.
	if toks := sqllex.Lex(rest); len(toks) >= 2 && toks[len(toks)-2].Is("START") && toks[len(toks)-1].Is("TRANSACTION") {
		rest = rest[:toks[len(toks)-2].Start]
	}
	out := "CREATE TABLE " + quoteName(db, name) + rest
	out = strings.TrimRight(strings.TrimSpace(out), "; \t\n")
	if final == nil {
		return out, ""
	}
	coll, err := schemahist.DefaultCollation(out, final)
	if err != nil {
		return out, err.Error()
	}
	if coll == 0 {
		return out, ""
	}
	c, ok := charset.LookupFlavor(coll, mariadb)
	if !ok {
		return out, ""
	}
	return out + " DEFAULT CHARSET=" + c.Charset + " COLLATE=" + c.Name, ""
}
