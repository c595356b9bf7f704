package recovery

import (
	"strings"

	"github.com/binlogcdc/binlogcdc/internal/sqllex"
)

// This file recognises the DDL statements that create, end, rename or
// alter a table, from the statement text of a binlog QUERY event, with the
// lexer of internal/sqllex: anything it does not recognise is not about a
// table's life.

type (
	token     = sqllex.Token
	tableName = sqllex.TableName
)

const (
	tWord   = sqllex.Word
	tQuoted = sqllex.Quoted
	tString = sqllex.String
	tNumber = sqllex.Number
	tPunct  = sqllex.Punct
)

func lex(sql string) []token { return sqllex.Lex(sql) }

// parser walks one statement's tokens (sqllex.Parser) with the
// table-life statements below as its methods.
type parser struct{ sqllex.Parser }

func newParser(sql, db string) *parser {
	return &parser{sqllex.Parser{Toks: lex(sql), DB: db}}
}

type actionKind uint8

const (
	actCreate   actionKind = iota + 1 // CREATE TABLE
	actDrop                           // DROP TABLE
	actTruncate                       // TRUNCATE TABLE
	actRename                         // RENAME TABLE, ALTER TABLE … RENAME
	actAlter                          // ALTER TABLE (other than a bare rename), CREATE/DROP INDEX
	actDropDB                         // DROP DATABASE, CREATE OR REPLACE DATABASE
)

// action is one thing a statement does to one table.
type action struct {
	Kind actionKind
	t    tableName // the table (for actDropDB: t.DB)
	to   tableName // actRename: the new name

	ifNotExists, orReplace, ifExists bool

	// actCreate: usable says the statement defines the columns itself
	// (not LIKE, not … SELECT); like names the LIKE source.
	usable bool
	like   string
	// actAlter: what it does to columns.
	alter *alterInfo
}

// alterInfo is what an ALTER TABLE does to the columns, as far as moving
// rows written before it to the table after it needs: column renames,
// added columns with their DEFAULT, dropped columns.
type alterInfo struct {
	ops []colOp
}

type colOpKind uint8

const (
	opRename colOpKind = iota + 1
	opAdd
	opDrop
)

type colOp struct {
	Kind     colOpKind
	Name, to string   // opRename: name → to; opAdd, opDrop: name
	def      *literal // opAdd: the DEFAULT, when it is a literal
	defExpr  bool     // opAdd: the DEFAULT is an expression (not known)
	autoInc  bool     // opAdd: AUTO_INCREMENT (the server numbers the rows)
}

// literal is a constant from a DEFAULT clause.
type literal struct {
	null   bool
	number string // a numeric literal
	Text   string // a string literal (when number == "" and !null)
}

// parseDDL returns what the statement does to tables; nil for a
// statement that does not create, drop, truncate, rename or alter one.
// db is the statement's default database.
func parseDDL(sql, db string) []action {
	p := newParser(sql, db)
	switch {
	case p.Accept("CREATE"):
		return p.create()
	case p.Accept("DROP"):
		return p.drop()
	case p.Accept("TRUNCATE"):
		p.Accept("TABLE")
		n, ok := p.Name()
		if !ok {
			return nil
		}
		return []action{{Kind: actTruncate, t: n}}
	case p.Accept("RENAME"):
		if !p.Accept("TABLE") && !p.Accept("TABLES") {
			return nil // RENAME USER
		}
		ifExists := p.Accept("IF", "EXISTS")
		var out []action
		for {
			from, ok := p.Name()
			if !ok {
				return out
			}
			p.SkipWait()
			if !p.Accept("TO") {
				return out
			}
			to, ok := p.Name()
			if !ok {
				return out
			}
			out = append(out, action{Kind: actRename, t: from, to: to, ifExists: ifExists})
			if !p.Peek(0).IsPunct(',') {
				return out
			}
			p.I++
		}
	case p.Accept("ALTER"):
		return p.alter()
	}
	return nil
}

func (p *parser) create() []action {
	orReplace := p.Accept("OR", "REPLACE")
	if p.Accept("DATABASE") || p.Accept("SCHEMA") {
		if !orReplace {
			return nil
		}
		p.Accept("IF", "NOT", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			return []action{{Kind: actDropDB, t: tableName{DB: t.Text}}}
		}
		return nil
	}
	if p.Peek(0).Is("TEMPORARY") {
		return nil // temporary tables are not logged in row format, and are not recoverable
	}
	if !p.Accept("TABLE") {
		// CREATE [ONLINE|OFFLINE] [UNIQUE|FULLTEXT|SPATIAL] INDEX … ON t
		for k := 0; k < 4; k++ {
			if p.Peek(k).Is("INDEX") {
				return p.indexOn()
			}
		}
		return nil
	}
	a := action{Kind: actCreate, orReplace: orReplace}
	a.ifNotExists = p.Accept("IF", "NOT", "EXISTS")
	n, ok := p.Name()
	if !ok {
		return nil
	}
	a.t = n
	switch {
	case p.Accept("LIKE"):
		if src, ok := p.Name(); ok {
			a.like = src.DB + "." + src.Name
		}
	case p.Peek(0).IsPunct('(') && p.Peek(1).Is("LIKE"):
		p.I += 2
		if src, ok := p.Name(); ok {
			a.like = src.DB + "." + src.Name
		}
	case p.Peek(0).IsPunct('('):
		p.SkipGroup()
		a.usable = true
		// CREATE TABLE t (…) [options] [AS] SELECT …
		for ; !p.Done(); p.I++ {
			if p.Peek(0).Is("SELECT") || p.Peek(0).Is("TABLE") || p.Peek(0).Is("VALUES") {
				a.usable = false
				break
			}
			if p.Peek(0).IsPunct('(') {
				p.SkipGroup()
				p.I--
			}
		}
	}
	return []action{a}
}

// indexOn reads "… ON t" of CREATE/DROP INDEX: an alteration of t.
func (p *parser) indexOn() []action {
	for ; !p.Done(); p.I++ {
		if p.Peek(0).Is("ON") {
			p.I++
			if n, ok := p.Name(); ok {
				return []action{{Kind: actAlter, t: n, alter: &alterInfo{}}}
			}
			return nil
		}
	}
	return nil
}

func (p *parser) drop() []action {
	if p.Accept("DATABASE") || p.Accept("SCHEMA") {
		ifExists := p.Accept("IF", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			return []action{{Kind: actDropDB, t: tableName{DB: t.Text}, ifExists: ifExists}}
		}
		return nil
	}
	if p.Peek(0).Is("INDEX") {
		return p.indexOn()
	}
	if p.Peek(0).Is("TEMPORARY") {
		return nil
	}
	if !p.Accept("TABLE") && !p.Accept("TABLES") {
		return nil
	}
	ifExists := p.Accept("IF", "EXISTS")
	var out []action
	for {
		n, ok := p.Name()
		if !ok {
			return out
		}
		out = append(out, action{Kind: actDrop, t: n, ifExists: ifExists})
		if !p.Peek(0).IsPunct(',') {
			return out
		}
		p.I++
	}
}

func (p *parser) alter() []action {
	p.Accept("ONLINE")
	p.Accept("IGNORE")
	if !p.Accept("TABLE") {
		return nil
	}
	ifExists := p.Accept("IF", "EXISTS")
	n, ok := p.Name()
	if !ok {
		return nil
	}
	p.SkipWait()
	info := &alterInfo{}
	var renameTo *tableName
	other := false
	// Clauses, separated by top-level commas.
	for !p.Done() {
		start := p.I
		depth := 0
		for ; !p.Done(); p.I++ {
			t := p.Peek(0)
			if t.IsPunct('(') {
				depth++
			} else if t.IsPunct(')') {
				depth--
			} else if t.IsPunct(',') && depth == 0 {
				break
			}
		}
		clause := p.Toks[start:p.I]
		if !p.Done() {
			p.I++ // the comma
		}
		if len(clause) == 0 {
			continue
		}
		if to, ok := alterRename(clause, p.DB); ok {
			renameTo = &to
			continue
		}
		other = true
		info.clause(clause)
	}
	var out []action
	if other {
		out = append(out, action{Kind: actAlter, t: n, alter: info, ifExists: ifExists})
	}
	if renameTo != nil {
		out = append(out, action{Kind: actRename, t: n, to: *renameTo, ifExists: ifExists})
	}
	if len(out) == 0 {
		// ALTER TABLE t (nothing, or only options we do not split): still an alteration.
		out = append(out, action{Kind: actAlter, t: n, alter: info, ifExists: ifExists})
	}
	return out
}

// alterRename recognises "RENAME [TO|AS] name" (not RENAME COLUMN/INDEX/KEY).
func alterRename(clause []token, db string) (tableName, bool) {
	if !clause[0].Is("RENAME") || len(clause) < 2 {
		return tableName{}, false
	}
	rest := clause[1:]
	switch {
	case rest[0].Is("COLUMN") || rest[0].Is("INDEX") || rest[0].Is("KEY"):
		return tableName{}, false
	case rest[0].Is("TO") || rest[0].Is("AS"):
		rest = rest[1:]
	}
	p := &parser{sqllex.Parser{Toks: rest, DB: db}}
	n, ok := p.Name()
	return n, ok && p.Done()
}

// clause records what one ALTER TABLE clause does to columns.
func (a *alterInfo) clause(c []token) {
	p := &parser{sqllex.Parser{Toks: c}}
	notColumn := func() bool {
		for _, kw := range []string{"INDEX", "KEY", "PRIMARY", "UNIQUE", "FULLTEXT", "SPATIAL", "CONSTRAINT",
			"FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "VERSIONING"} {
			if p.Peek(0).Is(kw) {
				return true
			}
		}
		return false
	}
	switch {
	case p.Accept("RENAME", "COLUMN"):
		from := p.Peek(0)
		if from.Ident() && p.Peek(1).Is("TO") && p.Peek(2).Ident() {
			a.ops = append(a.ops, colOp{Kind: opRename, Name: from.Text, to: p.Peek(2).Text})
		}
	case p.Accept("CHANGE"):
		p.Accept("COLUMN")
		p.Accept("IF", "EXISTS")
		from, to := p.Peek(0), p.Peek(1)
		if from.Ident() && to.Ident() && !strings.EqualFold(from.Text, to.Text) {
			a.ops = append(a.ops, colOp{Kind: opRename, Name: from.Text, to: to.Text})
		}
	case p.Accept("DROP"):
		if notColumn() {
			return
		}
		p.Accept("COLUMN")
		p.Accept("IF", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			a.ops = append(a.ops, colOp{Kind: opDrop, Name: t.Text})
		}
	case p.Accept("ADD"):
		if notColumn() {
			return
		}
		p.Accept("COLUMN")
		p.Accept("IF", "NOT", "EXISTS")
		if p.Peek(0).IsPunct('(') {
			// ADD (a INT, b INT)
			p.I++
			for !p.Done() {
				start, depth := p.I, 0
				for ; p.I < len(p.Toks); p.I++ {
					t := p.Peek(0)
					if t.IsPunct('(') {
						depth++
					} else if t.IsPunct(')') {
						if depth == 0 {
							break
						}
						depth--
					} else if t.IsPunct(',') && depth == 0 {
						break
					}
				}
				a.addColumn(p.Toks[start:p.I])
				if p.I >= len(p.Toks) || p.Peek(0).IsPunct(')') {
					break
				}
				p.I++
			}
			return
		}
		a.addColumn(p.Toks[p.I:])
	}
}

// addColumn records "name type … [DEFAULT x] …".
func (a *alterInfo) addColumn(def []token) {
	if len(def) == 0 || !def[0].Ident() {
		return
	}
	op := colOp{Kind: opAdd, Name: def[0].Text}
	depth := 0
	for k := 1; k < len(def); k++ {
		t := def[k]
		if t.IsPunct('(') {
			depth++
			continue
		}
		if t.IsPunct(')') {
			depth--
			continue
		}
		if depth == 0 && t.Is("AUTO_INCREMENT") || t.Is("SERIAL") && k == 1 {
			op.autoInc = true
		}
		if depth != 0 || !t.Is("DEFAULT") || k+1 >= len(def) || op.def != nil || op.defExpr {
			continue
		}
		v := def[k+1]
		neg := ""
		if (v.IsPunct('-') || v.IsPunct('+')) && k+2 < len(def) && def[k+2].Kind == tNumber {
			if v.IsPunct('-') {
				neg = "-"
			}
			v = def[k+2]
		}
		switch {
		case v.Is("NULL"):
			op.def = &literal{null: true}
		case v.Is("TRUE"):
			op.def = &literal{number: "1"}
		case v.Is("FALSE"):
			op.def = &literal{number: "0"}
		case v.Kind == tNumber:
			op.def = &literal{number: neg + v.Text}
		case v.Kind == tString && (v.Introducer == "" || v.Introducer[0] == '_' || strings.EqualFold(v.Introducer, "N")):
			op.def = &literal{Text: v.Text}
		default:
			op.defExpr = true
		}
	}
	a.ops = append(a.ops, op)
}
