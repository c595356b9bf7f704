package schemahist

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

// ActionKind is what a DDL statement does to a table.
type ActionKind uint8

const (
	ActCreate   ActionKind = iota + 1 // CREATE TABLE
	ActDrop                           // DROP TABLE
	ActTruncate                       // TRUNCATE TABLE
	ActRename                         // RENAME TABLE, ALTER TABLE … RENAME
	ActAlter                          // ALTER TABLE (other than a bare rename), CREATE/DROP INDEX
	ActDropDB                         // DROP DATABASE, CREATE OR REPLACE DATABASE
)

// Action is one thing a statement does to one table.
type Action struct {
	Kind ActionKind
	T    tableName // the table (for ActDropDB: T.DB)
	To   tableName // ActRename: the new name

	IfNotExists, OrReplace, IfExists bool

	// ActCreate: Usable says the statement defines the columns itself
	// (not LIKE, not … SELECT); Like names the LIKE source.
	Usable bool
	Like   string
	LikeT  tableName // the LIKE source as a name
	// ActAlter: what it does to columns.
	Alter *AlterInfo
}

// AlterInfo is what an ALTER TABLE does to the columns, as far as moving
// rows written before it to the table after it needs: column renames,
// added columns with their DEFAULT, dropped columns.
type AlterInfo struct {
	Ops []ColOp
}

// ColOpKind is what an ALTER TABLE clause does to one column.
type ColOpKind uint8

const (
	OpRename ColOpKind = iota + 1
	OpAdd
	OpDrop
)

// ColOp is one column operation of an ALTER TABLE.
type ColOp struct {
	Kind     ColOpKind
	Name, To string   // OpRename: Name → To; OpAdd, OpDrop: Name
	Def      *Literal // OpAdd: the DEFAULT, when it is a literal
	DefExpr  bool     // OpAdd: the DEFAULT is an expression (not known)
	AutoInc  bool     // OpAdd: AUTO_INCREMENT (the server numbers the rows)
}

// Literal is a constant from a DEFAULT clause.
type Literal struct {
	Null   bool
	Number string // a numeric literal
	Text   string // a string literal (when Number == "" and !Null)
}

// ParseDDL returns what the statement does to tables; nil for a
// statement that does not create, drop, truncate, rename or alter one.
// db is the statement's default database.
func ParseDDL(sql, db string) []Action {
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
		return []Action{{Kind: ActTruncate, T: n}}
	case p.Accept("RENAME"):
		if !p.Accept("TABLE") && !p.Accept("TABLES") {
			return nil // RENAME USER
		}
		ifExists := p.Accept("IF", "EXISTS")
		var out []Action
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
			out = append(out, Action{Kind: ActRename, T: from, To: to, IfExists: ifExists})
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

func (p *parser) create() []Action {
	orReplace := p.Accept("OR", "REPLACE")
	if p.Accept("DATABASE") || p.Accept("SCHEMA") {
		if !orReplace {
			return nil
		}
		p.Accept("IF", "NOT", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			return []Action{{Kind: ActDropDB, T: tableName{DB: t.Text}}}
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
	a := Action{Kind: ActCreate, OrReplace: orReplace}
	a.IfNotExists = p.Accept("IF", "NOT", "EXISTS")
	n, ok := p.Name()
	if !ok {
		return nil
	}
	a.T = n
	switch {
	case p.Accept("LIKE"):
		if src, ok := p.Name(); ok {
			a.Like, a.LikeT = src.DB+"."+src.Name, src
		}
	case p.Peek(0).IsPunct('(') && p.Peek(1).Is("LIKE"):
		p.I += 2
		if src, ok := p.Name(); ok {
			a.Like, a.LikeT = src.DB+"."+src.Name, src
		}
	case p.Peek(0).IsPunct('('):
		p.SkipGroup()
		a.Usable = true
		// CREATE TABLE t (…) [options] [AS] SELECT …
		for ; !p.Done(); p.I++ {
			if p.Peek(0).Is("SELECT") || p.Peek(0).Is("TABLE") || p.Peek(0).Is("VALUES") {
				a.Usable = false
				break
			}
			if p.Peek(0).IsPunct('(') {
				p.SkipGroup()
				p.I--
			}
		}
	}
	return []Action{a}
}

// indexOn reads "… ON t" of CREATE/DROP INDEX: an alteration of t.
func (p *parser) indexOn() []Action {
	for ; !p.Done(); p.I++ {
		if p.Peek(0).Is("ON") {
			p.I++
			if n, ok := p.Name(); ok {
				return []Action{{Kind: ActAlter, T: n, Alter: &AlterInfo{}}}
			}
			return nil
		}
	}
	return nil
}

func (p *parser) drop() []Action {
	if p.Accept("DATABASE") || p.Accept("SCHEMA") {
		ifExists := p.Accept("IF", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			return []Action{{Kind: ActDropDB, T: tableName{DB: t.Text}, IfExists: ifExists}}
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
	var out []Action
	for {
		n, ok := p.Name()
		if !ok {
			return out
		}
		out = append(out, Action{Kind: ActDrop, T: n, IfExists: ifExists})
		if !p.Peek(0).IsPunct(',') {
			return out
		}
		p.I++
	}
}

func (p *parser) alter() []Action {
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
	info := &AlterInfo{}
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
	var out []Action
	if other {
		out = append(out, Action{Kind: ActAlter, T: n, Alter: info, IfExists: ifExists})
	}
	if renameTo != nil {
		out = append(out, Action{Kind: ActRename, T: n, To: *renameTo, IfExists: ifExists})
	}
	if len(out) == 0 {
		// ALTER TABLE t (nothing, or only options we do not split): still an alteration.
		out = append(out, Action{Kind: ActAlter, T: n, Alter: info, IfExists: ifExists})
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
func (a *AlterInfo) clause(c []token) {
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
			a.Ops = append(a.Ops, ColOp{Kind: OpRename, Name: from.Text, To: p.Peek(2).Text})
		}
	case p.Accept("CHANGE"):
		p.Accept("COLUMN")
		p.Accept("IF", "EXISTS")
		from, to := p.Peek(0), p.Peek(1)
		if from.Ident() && to.Ident() && !strings.EqualFold(from.Text, to.Text) {
			a.Ops = append(a.Ops, ColOp{Kind: OpRename, Name: from.Text, To: to.Text})
		}
	case p.Accept("DROP"):
		if notColumn() {
			return
		}
		p.Accept("COLUMN")
		p.Accept("IF", "EXISTS")
		if t := p.Peek(0); t.Ident() {
			a.Ops = append(a.Ops, ColOp{Kind: OpDrop, Name: t.Text})
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
func (a *AlterInfo) addColumn(def []token) {
	if len(def) == 0 || !def[0].Ident() {
		return
	}
	op := ColOp{Kind: OpAdd, Name: def[0].Text}
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
			op.AutoInc = true
		}
		if depth != 0 || !t.Is("DEFAULT") || k+1 >= len(def) || op.Def != nil || op.DefExpr {
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
			op.Def = &Literal{Null: true}
		case v.Is("TRUE"):
			op.Def = &Literal{Number: "1"}
		case v.Is("FALSE"):
			op.Def = &Literal{Number: "0"}
		case v.Kind == tNumber:
			op.Def = &Literal{Number: neg + v.Text}
		case v.Kind == tString && (v.Introducer == "" || v.Introducer[0] == '_' || strings.EqualFold(v.Introducer, "N")):
			op.Def = &Literal{Text: v.Text}
		default:
			op.DefExpr = true
		}
	}
	a.Ops = append(a.Ops, op)
}
