// Package ddl says what a DDL statement from a binlog QUERY event is
// about: what kind of statement it is and which tables (or databases) it
// touches, so that table filters can select DDL the way they select rows.
// It reads the statement with the lexer of internal/sqllex and recognises
// statements by their leading keywords; a statement it does not recognise
// is Unknown, never guessed.
package ddl

import (
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
)

// Kind is what a statement is about.
type Kind uint8

const (
	// Unknown: a statement this package does not recognise. Its objects
	// are not known.
	Unknown Kind = iota
	// Table: creates, alters, drops, renames, truncates or maintains
	// tables, views, sequences, indexes or triggers; Tables names every
	// table it touches (for a trigger: the table it is on).
	Table
	// Database: CREATE, ALTER or DROP DATABASE; DBs names it.
	Database
	// Routine: a stored procedure, function, package, event or a trigger
	// named without its table (DROP TRIGGER); DBs names its database.
	Routine
	// Account: users, roles, grants and passwords (CREATE/ALTER/DROP/
	// RENAME USER, CREATE/DROP ROLE, GRANT, REVOKE, SET PASSWORD, SET
	// [DEFAULT] ROLE, FLUSH PRIVILEGES) and servers (CREATE/ALTER/DROP
	// SERVER, which hold passwords too). Its text may hold secrets: see
	// Redact.
	Account
)

func (k Kind) String() string {
	switch k {
	case Table:
		return "table"
	case Database:
		return "database"
	case Routine:
		return "routine"
	case Account:
		return "account"
	}
	return "unknown"
}

// Name is a table (or view, sequence) named by a statement, with its
// database: the statement's default database when it names none.
type Name struct{ DB, Table string }

// Statement is what Parse found.
type Statement struct {
	Kind Kind
	// Verb is the statement's leading keywords, upper case ("DROP TABLE",
	// "CREATE INDEX", "GRANT"), for messages.
	Verb string
	// Tables (Kind Table): every table the statement touches, in the
	// order it names them: all of DROP TABLE a, b; both sides of each
	// RENAME; the new table and the LIKE source of CREATE TABLE … LIKE;
	// the table of an index or trigger; the partner of EXCHANGE PARTITION.
	Tables []Name
	// DBs (Kind Database, Routine): the database(s) named.
	DBs []string
	// Drop (Kind Database): DROP DATABASE or CREATE OR REPLACE DATABASE,
	// which end every table in it.
	Drop bool
	// NeedsDB: the statement may depend on its default database (a name
	// without a database, or a body: views, triggers, routines). A
	// statement on tables that names each with its database does not:
	// it can run where the default database does not exist.
	NeedsDB bool
}

// Parse reads one statement; db is its default database (the QUERY
// event's). A statement whose names cannot all be read is Unknown.
func Parse(sql, db string) Statement {
	p := &parser{Parser: sqllex.Parser{Toks: sqllex.Lex(sql), DB: db}}
	st, ok := p.statement()
	if !ok {
		return Statement{Kind: Unknown, Verb: st.Verb, NeedsDB: true}
	}
	st.NeedsDB = p.defaulted || st.Kind != Table && st.Kind != Database ||
		st.Verb == "CREATE VIEW" || st.Verb == "ALTER VIEW" || st.Verb == "CREATE TRIGGER"
	return st
}

type parser struct {
	sqllex.Parser
	defaulted bool // a name took the default database
}

func (p *parser) statement() (Statement, bool) {
	first := p.Peek(0)
	if first.Kind != sqllex.Word {
		return Statement{}, false
	}
	p.I++
	verb := upper(first.Text)
	switch verb {
	case "CREATE", "ALTER", "DROP":
		return p.object(verb)
	case "RENAME":
		if p.Accept("USER") {
			return Statement{Kind: Account, Verb: "RENAME USER"}, true
		}
		if !p.Accept("TABLE") && !p.Accept("TABLES") {
			return Statement{Verb: "RENAME"}, false
		}
		st := Statement{Kind: Table, Verb: "RENAME TABLE"}
		p.Accept("IF", "EXISTS")
		for {
			from, ok := p.Name()
			if !ok {
				return st, false
			}
			p.SkipWait()
			if !p.Accept("TO") {
				return st, false
			}
			to, ok := p.Name()
			if !ok {
				return st, false
			}
			st.add(from, to)
			if !p.Peek(0).IsPunct(',') {
				return st, p.Done()
			}
			p.I++
		}
	case "TRUNCATE":
		st := Statement{Kind: Table, Verb: "TRUNCATE TABLE"}
		p.Accept("TABLE")
		n, ok := p.Name()
		st.add(n)
		return st, ok
	case "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK", "CHECKSUM":
		st := Statement{Kind: Table, Verb: verb + " TABLE"}
		p.Accept("NO_WRITE_TO_BINLOG")
		p.Accept("LOCAL")
		if !p.Accept("TABLE") && !p.Accept("TABLES") {
			return st, false
		}
		return st, p.nameList(&st)
	case "GRANT", "REVOKE":
		return Statement{Kind: Account, Verb: verb}, true
	case "SET":
		switch {
		case p.Accept("PASSWORD"):
			return Statement{Kind: Account, Verb: "SET PASSWORD"}, true
		case p.Accept("ROLE"), p.Accept("DEFAULT", "ROLE"):
			return Statement{Kind: Account, Verb: "SET ROLE"}, true
		}
		return Statement{Verb: "SET"}, false
	case "FLUSH":
		p.Accept("NO_WRITE_TO_BINLOG")
		p.Accept("LOCAL")
		if p.Accept("PRIVILEGES") {
			return Statement{Kind: Account, Verb: "FLUSH PRIVILEGES"}, true
		}
		return Statement{Verb: "FLUSH"}, false
	}
	return Statement{Verb: verb}, false
}

// object reads CREATE/ALTER/DROP and what follows.
func (p *parser) object(verb string) (Statement, bool) {
	orReplace := verb == "CREATE" && p.Accept("OR", "REPLACE")
	p.skipPrefix()
	w := upper(p.Peek(0).Text)
	if p.Peek(0).Kind != sqllex.Word {
		return Statement{Verb: verb}, false
	}
	p.I++
	st := Statement{Verb: verb + " " + w}
	switch w {
	case "DATABASE", "SCHEMA":
		st.Kind, st.Verb = Database, verb+" DATABASE"
		p.Accept("IF", "NOT", "EXISTS")
		p.Accept("IF", "EXISTS")
		t := p.Peek(0)
		if !t.Ident() || verb == "ALTER" && isDBOption(t) {
			if verb == "ALTER" {
				// ALTER DATABASE without a name: the default database.
				st.DBs = []string{p.DB}
				return st, p.DB != ""
			}
			return st, false
		}
		st.DBs = []string{t.Text}
		st.Drop = verb == "DROP" || orReplace
		return st, true
	case "TABLE", "TABLES", "SEQUENCE", "VIEW":
		st.Kind = Table
		if w == "TABLES" {
			st.Verb = verb + " TABLE"
		}
		p.Accept("IF", "NOT", "EXISTS")
		p.Accept("IF", "EXISTS")
		if verb == "DROP" {
			return st, p.nameList(&st)
		}
		n, ok := p.Name()
		if !ok {
			return st, false
		}
		st.add(n)
		p.SkipWait()
		switch {
		case w == "VIEW":
			return st, true
		case verb == "ALTER":
			return st, p.alterTable(&st)
		case verb == "CREATE" && w == "TABLE":
			return st, p.createLike(&st)
		}
		return st, true
	case "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "ONLINE", "OFFLINE":
		// CREATE [ONLINE|OFFLINE] [UNIQUE|FULLTEXT|SPATIAL] INDEX i … ON t;
		// DROP INDEX [IF EXISTS] i ON t.
		st.Kind, st.Verb = Table, verb+" INDEX"
		return st, p.on(&st)
	case "TRIGGER":
		st.Verb = verb + " TRIGGER"
		if verb != "CREATE" {
			// DROP TRIGGER [IF EXISTS] [db.]name: the table is not named.
			p.Accept("IF", "EXISTS")
			n, ok := p.Name()
			st.Kind, st.DBs = Routine, []string{n.DB}
			return st, ok && n.DB != ""
		}
		st.Kind = Table
		return st, p.on(&st)
	case "PROCEDURE", "FUNCTION", "EVENT", "PACKAGE", "AGGREGATE":
		if w == "AGGREGATE" {
			p.Accept("FUNCTION")
			st.Verb = verb + " FUNCTION"
		}
		if w == "PACKAGE" {
			p.Accept("BODY")
		}
		p.Accept("IF", "NOT", "EXISTS")
		p.Accept("IF", "EXISTS")
		n, ok := p.Name()
		st.Kind, st.DBs = Routine, []string{n.DB}
		return st, ok && n.DB != ""
	case "USER", "ROLE", "SERVER":
		st.Kind = Account
		return st, true
	}
	return st, false
}

// on adds the table after the next ON (of an index or a trigger).
func (p *parser) on(st *Statement) bool {
	for ; !p.Done(); p.I++ {
		if p.Peek(0).Is("ON") {
			p.I++
			n, ok := p.Name()
			st.add(n)
			return ok
		}
	}
	return false
}

// skipPrefix skips what may come between CREATE/ALTER and the object
// type: ALGORITHM = x, DEFINER = user, SQL SECURITY x, TEMPORARY, ONLINE,
// IGNORE.
func (p *parser) skipPrefix() {
	for !p.Done() {
		switch {
		case p.Peek(0).Is("ALGORITHM") && p.Peek(1).IsPunct('='):
			p.I += 3
		case p.Peek(0).Is("DEFINER") && p.Peek(1).IsPunct('='):
			p.I += 2
			// user, 'user'@'host', CURRENT_USER[()], CURRENT_ROLE
			p.I++
			if p.Peek(0).IsPunct('(') && p.Peek(1).IsPunct(')') {
				p.I += 2
			}
			if p.Peek(0).IsPunct('@') {
				p.I += 2
			}
		case p.Peek(0).Is("SQL") && p.Peek(1).Is("SECURITY"):
			p.I += 3
		case p.Peek(0).Is("TEMPORARY"), p.Peek(0).Is("IGNORE"):
			p.I++
		case (p.Peek(0).Is("ONLINE") || p.Peek(0).Is("OFFLINE")) && !p.Peek(1).Is("INDEX"):
			p.I++
		default:
			return
		}
	}
}

// nameList reads "a, b, …" to the end of the statement (RESTRICT,
// CASCADE, WAIT n, NOWAIT, and maintenance options may follow).
func (p *parser) nameList(st *Statement) bool {
	for {
		n, ok := p.Name()
		if !ok {
			return false
		}
		st.add(n)
		if !p.Peek(0).IsPunct(',') {
			return true
		}
		p.I++
	}
}

// createLike adds the source of CREATE TABLE x LIKE y / (LIKE y).
func (p *parser) createLike(st *Statement) bool {
	if p.Peek(0).IsPunct('(') && p.Peek(1).Is("LIKE") {
		p.I++
	}
	if p.Accept("LIKE") {
		n, ok := p.Name()
		st.add(n)
		return ok
	}
	return true
}

// alterTable adds the new name of ALTER TABLE … RENAME [TO|AS] x and the
// partner of … EXCHANGE PARTITION p WITH TABLE y.
func (p *parser) alterTable(st *Statement) bool {
	depth := 0
	clauseStart := true
	for ; !p.Done(); p.I++ {
		t := p.Peek(0)
		switch {
		case t.IsPunct('('):
			depth++
		case t.IsPunct(')'):
			depth--
		case t.IsPunct(',') && depth == 0:
			clauseStart = true
			continue
		case depth == 0 && clauseStart && t.Is("RENAME") && !p.Peek(1).Is("COLUMN") && !p.Peek(1).Is("INDEX") && !p.Peek(1).Is("KEY") && !p.Peek(1).Is("CONSTRAINT"):
			p.I++
			if !p.Accept("TO") {
				p.Accept("AS")
			}
			n, ok := p.Name()
			if !ok {
				return false
			}
			st.add(n)
			p.I--
		case depth == 0 && (t.Is("WITH") || t.Is("TO") || t.Is("CONVERT")) && p.Peek(1).Is("TABLE"):
			// EXCHANGE PARTITION p WITH TABLE y; CONVERT PARTITION p TO
			// TABLE y; CONVERT TABLE y TO PARTITION p.
			p.I += 2
			n, ok := p.Name()
			if !ok {
				return false
			}
			st.add(n)
			p.I--
		}
		clauseStart = false
	}
	return true
}

// add appends names that are not there yet.
func (st *Statement) add(names ...Name) {
	for _, n := range names {
		if n.DB == "" && n.Table == "" {
			continue
		}
		dup := false
		for _, m := range st.Tables {
			if m == n {
				dup = true
				break
			}
		}
		if !dup {
			st.Tables = append(st.Tables, n)
		}
	}
}

// Name reads [db.]name as a Name; a name without a database (none
// given, no default database) is not read.
func (p *parser) Name() (Name, bool) {
	if !(p.Peek(1).IsPunct('.') && p.Peek(2).Ident()) {
		p.defaulted = true
	}
	n, ok := p.Parser.Name()
	if !ok || n.DB == "" {
		return Name{}, false
	}
	return Name{DB: n.DB, Table: n.Name}, true
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// isDBOption reports a word that starts ALTER DATABASE's options (when
// the statement names no database).
func isDBOption(t sqllex.Token) bool {
	for _, kw := range []string{"CHARACTER", "CHARSET", "DEFAULT", "COLLATE", "COMMENT", "UPGRADE"} {
		if t.Is(kw) {
			return true
		}
	}
	return false
}

// DMLTarget returns the one table a row statement (INSERT, REPLACE,
// UPDATE, DELETE, LOAD DATA) logged as text writes to, when it names
// exactly one: ok is false for multi-table UPDATE and DELETE and for
// anything it cannot read.
func DMLTarget(sql, db string) (n Name, ok bool) {
	p := &parser{Parser: sqllex.Parser{Toks: sqllex.Lex(sql), DB: db}}
	skip := func(kws ...string) {
		for again := true; again; {
			again = false
			for _, kw := range kws {
				if p.Accept(kw) {
					again = true
				}
			}
		}
	}
	switch {
	case p.Accept("INSERT"), p.Accept("REPLACE"):
		skip("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "INTO")
	case p.Accept("UPDATE"):
		skip("LOW_PRIORITY", "IGNORE")
		if n, ok = p.Name(); !ok || !p.Peek(0).Is("SET") {
			return Name{}, false // UPDATE a, b / a JOIN b …
		}
		return n, true
	case p.Accept("DELETE"):
		skip("LOW_PRIORITY", "QUICK", "IGNORE")
		if !p.Accept("FROM") {
			return Name{}, false // DELETE a, b FROM …
		}
		if n, ok = p.Name(); !ok || p.Peek(0).Is("USING") || p.Peek(0).IsPunct(',') || p.Peek(0).Is("JOIN") {
			return Name{}, false
		}
		return n, true
	case p.Accept("LOAD"):
		for !p.Done() && !(p.Peek(0).Is("INTO") && p.Peek(1).Is("TABLE")) {
			p.I++
		}
		if !p.Accept("INTO", "TABLE") {
			return Name{}, false
		}
	default:
		return Name{}, false
	}
	return p.Name()
}
