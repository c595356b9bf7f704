package schemahist

// ApplyChanges: Apply that also says what the statement did, table by
// table, with each table as the history had it before and after
// (change.SchemaChange): what Maxwell's and Debezium's DDL records carry.

import (
	"slices"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
)

// ApplyChanges follows st as Apply does, and returns what it did to each
// table and database: a CREATE, ALTER or DROP DATABASE, and a CREATE,
// ALTER (or CREATE/DROP INDEX), RENAME or DROP TABLE. A table the history
// does not know has a nil Old or New. TRUNCATE, a CREATE TABLE IF NOT
// EXISTS of a table it knows, and statements about neither give none.
func (h *History) ApplyChanges(st Statement) (warns []string, changes []change.SchemaChange) {
	dbc, isDB := h.databaseStatement(st)
	if isDB && dbc.Kind != 0 {
		changes = append(changes, dbc)
	}
	for _, a := range ParseDDL(st.SQL, st.DB) {
		db, name := a.T.DB, a.T.Name
		sc := change.SchemaChange{DB: db, Table: name}
		exists := h.tables[key(db, name)] != nil
		switch a.Kind {
		case ActCreate:
			if !(exists && a.IfNotExists && !a.OrReplace) {
				sc.Kind = change.TableCreate
			}
		case ActDrop:
			sc.Kind, sc.Old = change.TableDrop, h.def(db, name)
		case ActRename, ActAlter:
			sc.Kind, sc.Old = change.TableAlter, h.def(db, name)
		case ActDropDB:
			if !isDB { // not the DROP of CREATE OR REPLACE DATABASE
				sc = change.SchemaChange{Kind: change.DatabaseDrop, DB: db}
			}
		}
		if w := h.apply(st, a); w != "" {
			warns = append(warns, w)
		}
		switch a.Kind {
		case ActCreate, ActAlter:
			sc.New = h.def(db, name)
		case ActRename:
			sc.New = h.def(a.To.DB, a.To.Name)
		}
		if sc.Kind != 0 {
			changes = append(changes, sc)
		}
	}
	return warns, changes
}

// def returns db.name as the history has it now (a copy), nil when it
// does not know it.
func (h *History) def(db, name string) *change.TableDef {
	e := h.tables[key(db, name)]
	if e == nil || e.sh == nil {
		return nil
	}
	t := *e.sh.T
	t.DB, t.Name = db, name
	t.Columns = slices.Clone(t.Columns)
	t.PKNames = slices.Clone(t.PKNames)
	t.PrimaryKey = slices.Clone(t.PrimaryKey)
	coll := e.sh.DefColl
	if coll == 0 {
		coll = e.coll
	}
	d := &change.TableDef{Table: &t, Charset: h.charsetOf(coll), Columns: make([]change.ColumnDef, len(t.Columns))}
	for i := range t.Columns {
		n := strings.ToLower(t.Columns[i].Name)
		a := e.sh.Attrs[n]
		c := change.ColumnDef{TypeName: e.sh.TypeNames[n], Declared: a.declared, AutoIncrement: a.autoInc, OnUpdate: a.onUpdate != "", Generated: a.Generated}
		if v, ok := cutKeyword(a.def, "DEFAULT"); ok {
			c.Default, c.HasDefault = v, true
		}
		if v, ok := cutKeyword(a.comment, "COMMENT"); ok {
			if toks := lex(v); len(toks) == 1 {
				v = toks[0].Text
			}
			c.Comment = v
		}
		d.Columns[i] = c
	}
	return d
}

// cutKeyword returns s without its leading keyword kw (any case).
func cutKeyword(s, kw string) (string, bool) {
	if len(s) < len(kw) || !strings.EqualFold(s[:len(kw)], kw) {
		return "", false
	}
	return strings.TrimSpace(s[len(kw):]), true
}

// charsetOf names the character set of a collation, "" for 0 or unknown.
func (h *History) charsetOf(coll uint32) string {
	if coll == 0 {
		return ""
	}
	if c, ok := charset.LookupFlavor(coll, h.mariadb); ok {
		return c.Charset
	}
	return ""
}

// databaseStatement reads CREATE DATABASE and ALTER DATABASE (isDB is
// true for them; sc.Kind is 0 for a CREATE DATABASE IF NOT EXISTS that
// cannot be told from one that did nothing: it is still written).
func (h *History) databaseStatement(st Statement) (sc change.SchemaChange, isDB bool) {
	p := newParser(st.SQL, st.DB)
	switch {
	case p.Accept("CREATE"):
		p.Accept("OR", "REPLACE")
		sc.Kind = change.DatabaseCreate
	case p.Accept("ALTER"):
		sc.Kind = change.DatabaseAlter
	default:
		return sc, false
	}
	if !p.Accept("DATABASE") && !p.Accept("SCHEMA") {
		return change.SchemaChange{}, false
	}
	p.Accept("IF", "NOT", "EXISTS")
	sc.DB = st.DB
	if t := p.Peek(0); t.Ident() && !isDBOption(t) {
		sc.DB = t.Text
		p.I++
	}
	cs, coll := "", ""
	for ; !p.Done(); p.I++ {
		t := p.Peek(0)
		switch {
		case t.Is("CHARACTER") && p.Peek(1).Is("SET"):
			p.I++
			cs = optionValue(p)
		case t.Is("CHARSET"):
			cs = optionValue(p)
		case t.Is("COLLATE"):
			coll = optionValue(p)
		}
	}
	switch {
	case cs != "":
		sc.Charset = strings.ToLower(cs)
	case coll != "":
		if id := collationOf("", coll, h.mariadb); id != 0 {
			sc.Charset = h.charsetOf(id)
		}
	case sc.Kind == change.DatabaseCreate:
		sc.Charset = h.charsetOf(st.CollationServer)
	}
	return sc, true
}

func isDBOption(t token) bool {
	for _, kw := range []string{"DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT", "READ", "ENCRYPTION"} {
		if t.Is(kw) {
			return true
		}
	}
	return false
}

// optionValue reads the value after an option's keyword (p at the
// keyword), past an optional '='.
func optionValue(p *parser) string {
	if p.Peek(1).IsPunct('=') {
		p.I++
	}
	if t := p.Peek(1); t.Ident() {
		p.I++
		return t.Text
	}
	return ""
}

// SetFlavor sets the flavor (New's mariadb) of a history that holds no
// table yet, for a reader that learns it from the binlog ('read').
func (h *History) SetFlavor(mariadb bool) {
	if len(h.tables) == 0 {
		h.mariadb = mariadb
	}
}
