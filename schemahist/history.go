// Package schemahist keeps a schema history: the tables of a server as
// the DDL statements of its binlog left them, so that a row change can be
// described with what its TABLE_MAP does not say (which columns are
// generated, their DEFAULT), as Debezium's and Maxwell's schema histories
// do.
//
// The history follows CREATE TABLE (… LIKE, OR REPLACE, IF NOT EXISTS),
// ALTER TABLE, CREATE/DROP INDEX, RENAME TABLE, DROP TABLE, TRUNCATE and
// DROP DATABASE, each read with the statement's default database. It is
// checked against every TABLE_MAP (Check): a table whose history
// disagrees with its TABLE_MAP, or whose DDL binlogcdc cannot read,
// follows its TABLE_MAP only from then on, with one warning naming the
// binlog position. It never guesses a schema silently.
//
// The DDL model (what a statement does to which table: ParseDDL; the
// table a CREATE or ALTER TABLE leaves: Shape) is shared with package
// recover.
package schemahist

import (
	"fmt"
	"slices"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Table is a table as its DDL defines it, in the order of its columns
// (the TABLE_MAP's order).
type Table struct {
	DB, Name string
	Columns  []Column
}

// Column is what the DDL says about a column beyond its TABLE_MAP.
type Column struct {
	Name string
	// Generated is "VIRTUAL" or "STORED" (MariaDB: PERSISTENT) for a
	// generated column; "" for a column that is written.
	Generated string
	// Default is the operand of the column's DEFAULT clause as the
	// statement wrote it ("'x'", "0", "current_timestamp()"); HasDefault
	// is false when it has none.
	Default    string
	HasDefault bool
	// JSON marks a MariaDB column declared JSON (a LONGTEXT checked by
	// json_valid): tablemap.Column.JSON.
	JSON bool
}

// GeneratedCount returns how many of the columns are generated.
func (t *Table) GeneratedCount() int {
	n := 0
	for i := range t.Columns {
		if t.Columns[i].Generated != "" {
			n++
		}
	}
	return n
}

// adds reports whether the table says more than a TABLE_MAP (Annotate).
func (t *Table) adds() bool {
	for i := range t.Columns {
		if t.Columns[i].Generated != "" || t.Columns[i].HasDefault || t.Columns[i].JSON {
			return true
		}
	}
	return false
}

// Statement is one QUERY event's statement.
type Statement struct {
	SQL string
	DB  string // the default database (USE) the statement ran in
	Pos change.Position
	// CollationServer and CollationDatabase are the session's
	// collation_server and collation_database (0: not logged): the
	// default character set of a CREATE TABLE that names none, until its
	// first TABLE_MAP tells.
	CollationServer, CollationDatabase uint32
}

// History is the schema history. The zero value is not usable: call New.
// It is not safe for concurrent use.
type History struct {
	mariadb bool
	tables  map[string]*entry
	gen     uint64 // bumped whenever a table changes

	// The last TABLE_MAP checked (Check's hit path), and those before it.
	last    *tablemap.Table
	lastGen uint64
	lastRes *Table
	lastAnn *tablemap.Table
	checked map[*tablemap.Table]checked
}

type checked struct {
	gen uint64
	res *Table
	ann *tablemap.Table // the TABLE_MAP with Column.Generated set (Annotate)
}

// entry is one table of the history.
type entry struct {
	db, name string
	sh       *Shape          // nil when unknown
	pos      change.Position // the statement that last set it
	// createSQL, while the table's default collation is a guess and no
	// ALTER TABLE followed: re-read with its first TABLE_MAP.
	createSQL string
	// unknown says why the table follows its TABLE_MAP only.
	unknown string
	view    *Table // built on demand from sh
	// coll is the table's default collation as its CREATE TABLE's
	// session gave it (the database's, or the server's), for describing
	// a table whose statement named none and that has no character
	// column (ApplyChanges); 0 when not known.
	coll uint32
	// enc is the entry's saved JSON (persist.go), encoded on the first
	// save after the entry last changed; nil until then. Whatever changes
	// a saved field clears it.
	enc []byte
}

// maxChecked bounds the TABLE_MAPs remembered as checked.
const maxChecked = 4096

// New returns an empty history; mariadb picks the flavor's collations.
func New(mariadb bool) *History {
	return &History{mariadb: mariadb, tables: map[string]*entry{}, checked: map[*tablemap.Table]checked{}}
}

func key(db, name string) string { return db + "\x00" + name }

func (h *History) changed() { h.gen++ }

// Len returns how many tables the history holds (known or not).
func (h *History) Len() int { return len(h.tables) }

// Table returns the table db.name as its DDL defines it, or nil when the
// history does not know it (never created in the binlogs nor seeded, or
// following its TABLE_MAP only).
func (h *History) Table(db, name string) *Table {
	e := h.tables[key(db, name)]
	if e == nil || e.sh == nil {
		return nil
	}
	return e.table()
}

func (e *entry) table() *Table {
	if e.view != nil {
		return e.view
	}
	t := &Table{DB: e.db, Name: e.name, Columns: make([]Column, len(e.sh.T.Columns))}
	for i := range e.sh.T.Columns {
		n := e.sh.T.Columns[i].Name
		a := e.sh.Attrs[strings.ToLower(n)]
		c := Column{Name: n, Generated: a.Generated, JSON: a.json}
		if d, ok := strings.CutPrefix(a.def, "DEFAULT"); ok {
			c.Default, c.HasDefault = strings.TrimSpace(d), true
		} else if d, ok := strings.CutPrefix(a.def, "default"); ok {
			c.Default, c.HasDefault = strings.TrimSpace(d), true
		}
		t.Columns[i] = c
	}
	e.view = t
	return t
}

// Seed sets db.name from a CREATE TABLE statement (SHOW CREATE TABLE,
// which names the table's default character set), as of pos.
func (h *History) Seed(db, name, createSQL string, pos change.Position) error {
	sh, err := shapeFromCreate(createSQL, nil, 0, h.mariadb, true)
	if err != nil {
		return fmt.Errorf("schemahist: %s: %w", tablemap.QuoteIdent(db)+"."+tablemap.QuoteIdent(name), err)
	}
	h.set(db, name, &entry{sh: sh, pos: pos})
	return nil
}

func (h *History) set(db, name string, e *entry) {
	e.db, e.name, e.enc = db, name, nil
	if e.sh != nil {
		e.sh.T.DB, e.sh.T.Name = db, name
	}
	h.tables[key(db, name)] = e
	h.changed()
}

// lose makes db.name follow its TABLE_MAP only, and returns the warning.
func (h *History) lose(db, name string, pos change.Position, why string) string {
	h.tables[key(db, name)] = &entry{db: db, name: name, pos: pos, unknown: why}
	h.changed()
	return fmt.Sprintf("schema history: %s at %s:%d: %s; the table follows its TABLE_MAP only until it is created again",
		quoteName(db, name), pos.File, pos.Offset, why)
}

func quoteName(db, name string) string {
	return tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
}

// Apply follows one statement. It returns warnings for the tables it
// leaves unknown (DDL binlogcdc cannot read), one per table.
func (h *History) Apply(st Statement) []string {
	var warns []string
	for _, a := range ParseDDL(st.SQL, st.DB) {
		if w := h.apply(st, a); w != "" {
			warns = append(warns, w)
		}
	}
	return warns
}

func (h *History) apply(st Statement, a Action) string {
	db, name := a.T.DB, a.T.Name
	cur := h.tables[key(db, name)]
	switch a.Kind {
	case ActCreate:
		if cur != nil && a.IfNotExists && !a.OrReplace {
			return "" // it exists: nothing happened
		}
		switch {
		case a.Like != "":
			from := h.tables[key(a.LikeT.DB, a.LikeT.Name)]
			if from == nil || from.sh == nil {
				// A copy of a table the history does not know: it follows
				// its TABLE_MAPs, as its source does.
				if cur != nil {
					delete(h.tables, key(db, name))
					h.changed()
				}
				return ""
			}
			h.set(db, name, &entry{sh: from.sh.Clone(), pos: st.Pos, coll: from.coll})
			return ""
		case !a.Usable:
			// CREATE TABLE … SELECT does not list all its columns: the
			// table follows its TABLE_MAPs (no warning: nothing went wrong).
			h.tables[key(db, name)] = &entry{db: db, name: name, pos: st.Pos, unknown: "CREATE TABLE … SELECT does not list its columns"}
			h.changed()
			return ""
		}
		sh, err := shapeFromCreate(st.SQL, nil, 0, h.mariadb, true)
		guess := st.CollationServer
		if st.CollationDatabase != 0 && strings.EqualFold(db, st.DB) {
			guess = st.CollationDatabase
		}
		e := &entry{pos: st.Pos, coll: guess}
		if err != nil {
			if guess != 0 {
				sh, err = shapeFromCreate(st.SQL, nil, guess, h.mariadb, true)
				e.createSQL = st.SQL
			}
		}
		if err != nil {
			return h.lose(db, name, st.Pos, "binlogcdc did not read CREATE TABLE: "+err.Error())
		}
		sh.Notes = nil
		e.sh = sh
		h.set(db, name, e)
	case ActDrop:
		if cur != nil {
			delete(h.tables, key(db, name))
			h.changed()
		}
	case ActTruncate:
	case ActRename:
		if cur == nil {
			if h.tables[key(a.To.DB, a.To.Name)] != nil {
				delete(h.tables, key(a.To.DB, a.To.Name))
				h.changed()
			}
			return ""
		}
		delete(h.tables, key(db, name))
		cur.view = nil
		h.set(a.To.DB, a.To.Name, cur)
	case ActAlter:
		if cur == nil || cur.sh == nil {
			return ""
		}
		sh, err := cur.sh.ApplyAlter(st.SQL, h.mariadb)
		if err != nil && cur.sh.DefColl == 0 && cur.coll != 0 {
			// A table created without a character column nor a default
			// character set: its default is its CREATE session's, a guess
			// as for a CREATE TABLE, which the TABLE_MAPs check.
			g := cur.sh.Clone()
			g.DefColl, g.Guessed = cur.coll, true
			sh, err = g.ApplyAlter(st.SQL, h.mariadb)
		}
		if err != nil {
			return h.lose(db, name, st.Pos, "binlogcdc did not read ALTER TABLE: "+err.Error())
		}
		sh.Notes = nil
		h.set(db, name, &entry{sh: sh, pos: st.Pos, coll: cur.coll})
	case ActDropDB:
		for k, e := range h.tables {
			if e.db == db {
				delete(h.tables, k)
			}
		}
		h.changed()
	}
	return ""
}

// Check compares a TABLE_MAP with the history's table of the same name.
// It returns the table when they agree, nil when the history does not
// know it; when they disagree the table follows its TABLE_MAP only from
// then on, and warn says so (once, naming pos). A TABLE_MAP already
// checked since the last change costs a pointer comparison.
func (h *History) Check(t *tablemap.Table, pos change.Position) (res *Table, warn string) {
	if t == h.last && h.lastGen == h.gen {
		return h.lastRes, ""
	}
	if c, ok := h.checked[t]; ok && c.gen == h.gen {
		h.last, h.lastGen, h.lastRes, h.lastAnn = t, h.gen, c.res, c.ann
		return c.res, ""
	}
	e := h.tables[key(t.DB, t.Name)]
	if e != nil && e.sh != nil {
		why, ok := agrees(e.sh.T, t)
		if !ok && e.createSQL != "" {
			// The default character set was a guess: the TABLE_MAP tells.
			if sh, err := shapeFromCreate(e.createSQL, t, 0, h.mariadb, true); err == nil {
				sh.Notes = nil
				if why, ok = agrees(sh.T, t); ok {
					h.set(t.DB, t.Name, &entry{sh: sh, pos: e.pos, coll: e.coll})
					e = h.tables[key(t.DB, t.Name)]
				}
			}
		}
		if !ok {
			warn = h.lose(t.DB, t.Name, pos, "the schema history disagrees with the TABLE_MAP ("+why+")")
			e = nil
		} else {
			if e.createSQL != "" {
				e.createSQL, e.enc = "", nil
			}
			res = e.table()
		}
	}
	if len(h.checked) >= maxChecked {
		clear(h.checked)
	}
	ann := t
	if res != nil && res.adds() {
		c := *t
		c.Columns = slices.Clone(t.Columns)
		for i := range c.Columns {
			c.Columns[i].Generated = res.Columns[i].Generated != ""
			c.Columns[i].Default = res.Columns[i].Default
			c.Columns[i].JSON = res.Columns[i].JSON
		}
		ann = &c
	}
	h.checked[t] = checked{gen: h.gen, res: res, ann: ann}
	h.last, h.lastGen, h.lastRes, h.lastAnn = t, h.gen, res, ann
	return res, warn
}

// Annotate is Check returning the TABLE_MAP with what the history adds
// to it (Column.Generated): t itself when nothing, or when the history
// does not know the table.
func (h *History) Annotate(t *tablemap.Table, pos change.Position) (*tablemap.Table, string) {
	if t == h.last && h.lastGen == h.gen {
		return h.lastAnn, ""
	}
	_, warn := h.Check(t, pos)
	return h.lastAnn, warn
}

// Gen counts the history's changes: it differs after any change since.
func (h *History) Gen() uint64 { return h.gen }

// agrees reports whether a derived table matches a TABLE_MAP: the same
// column names, types and NULL (visibility aside: MariaDB does not log
// it); else what differs.
func agrees(d, m *tablemap.Table) (string, bool) {
	if len(d.Columns) != len(m.Columns) {
		return fmt.Sprintf("%d columns, the TABLE_MAP has %d", len(d.Columns), len(m.Columns)), false
	}
	for i := range d.Columns {
		x, y := &d.Columns[i], &m.Columns[i]
		if !strings.EqualFold(x.Name, y.Name) {
			return fmt.Sprintf("column %d is %s, the TABLE_MAP says %s", i+1, tablemap.QuoteIdent(x.Name), tablemap.QuoteIdent(y.Name)), false
		}
		if !sameType(x, y) || x.Nullable != y.Nullable {
			return fmt.Sprintf("column %s differs in type", tablemap.QuoteIdent(x.Name)), false
		}
	}
	return "", true
}

func sameType(a, b *tablemap.Column) bool {
	return a.Type == b.Type && a.Length == b.Length && a.Unsigned == b.Unsigned &&
		(a.Collation == b.Collation || a.Collation == 0 || b.Collation == 0) && a.Compressed == b.Compressed &&
		a.Precision == b.Precision && a.Scale == b.Scale && a.FSP == b.FSP && a.Bits == b.Bits &&
		a.GeometryType == b.GeometryType && slices.Equal(a.EnumValues, b.EnumValues) && slices.Equal(a.SetValues, b.SetValues)
}
