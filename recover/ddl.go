package recovery

import (
	"strings"
)

// This file recognises the DDL statements that create, end, rename or
// alter a table, from the statement text of a binlog QUERY event. It is a
// small lexer and a parser for those statements only, not a SQL parser:
// anything it does not recognise is not about a table's life.

type tokKind uint8

const (
	tWord   tokKind = iota // unquoted word: keyword or identifier
	tQuoted                // `identifier`
	tString                // 'text' or "text"
	tNumber                // 12, 1.5, 1e3
	tPunct                 // one character: . , ( ) ; = …
)

type token struct {
	kind       tokKind
	text       string // unquoted text (for tString/tQuoted, escapes resolved)
	start, end int    // byte offsets in the statement
	introducer string // for tString: a preceding _charset or N, X, B
}

func (t token) is(kw string) bool { return t.kind == tWord && strings.EqualFold(t.text, kw) }

func (t token) isPunct(c byte) bool { return t.kind == tPunct && t.text[0] == c }

// ident reports whether t can name a table or column.
func (t token) ident() bool { return t.kind == tWord || t.kind == tQuoted || t.kind == tString }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// lex splits a statement into tokens, skipping white space and comments.
// The text of executable comments (/*!50100 … */, /*M!100100 … */) is
// lexed: the server runs it.
func lex(sql string) []token {
	var toks []token
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < n && sql[i+1] == '*':
			if i+2 < n && (sql[i+2] == '!' || (sql[i+2] == 'M' && i+3 < n && sql[i+3] == '!')) {
				i += 3
				if sql[i-1] == 'M' {
					i++
				}
				for i < n && sql[i] >= '0' && sql[i] <= '9' {
					i++
				}
				continue
			}
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += 2 + end + 2
		case c == '*' && i+1 < n && sql[i+1] == '/':
			i += 2 // the end of an executable comment
		case c == '#' || (c == '-' && i+2 < n && sql[i+1] == '-' && (sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n')):
			nl := strings.IndexByte(sql[i:], '\n')
			if nl < 0 {
				return toks
			}
			i += nl + 1
		case c == '`':
			var b strings.Builder
			j := i + 1
			for j < n {
				if sql[j] == '`' {
					if j+1 < n && sql[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(sql[j])
				j++
			}
			toks = append(toks, token{kind: tQuoted, text: b.String(), start: i, end: min(j+1, n)})
			i = j + 1
		case c == '\'' || c == '"':
			text, j := lexString(sql, i)
			t := token{kind: tString, text: text, start: i, end: j}
			if k := len(toks) - 1; k >= 0 && toks[k].kind == tWord && toks[k].end == i {
				w := toks[k].text
				if w[0] == '_' || strings.EqualFold(w, "N") || strings.EqualFold(w, "X") || strings.EqualFold(w, "B") {
					t.introducer, t.start = w, toks[k].start
					toks = toks[:k]
				}
			} else if k >= 0 && toks[k].kind == tWord && toks[k].text[0] == '_' {
				// _utf8mb4 'text'
				t.introducer, t.start = toks[k].text, toks[k].start
				toks = toks[:k]
			}
			toks = append(toks, t)
			i = j
		case isWordByte(c):
			j := i
			for j < n && isWordByte(sql[j]) {
				j++
			}
			kind := tWord
			if allDigits(sql[i:j]) && (len(toks) == 0 || !toks[len(toks)-1].isPunct('.') || toks[len(toks)-1].end != i) {
				kind = tNumber
				// 1.5, 1.5e3, 1e-3
				if j+1 < n && sql[j] == '.' && sql[j+1] >= '0' && sql[j+1] <= '9' {
					j++
					for j < n && sql[j] >= '0' && sql[j] <= '9' {
						j++
					}
				}
				if j+1 < n && (sql[j] == 'e' || sql[j] == 'E') {
					k := j + 1
					if k < n && (sql[k] == '+' || sql[k] == '-') {
						k++
					}
					if k < n && sql[k] >= '0' && sql[k] <= '9' {
						for k < n && sql[k] >= '0' && sql[k] <= '9' {
							k++
						}
						j = k
					}
				}
			}
			toks = append(toks, token{kind: kind, text: sql[i:j], start: i, end: j})
			i = j
		default:
			toks = append(toks, token{kind: tPunct, text: sql[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return toks
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// lexString reads a quoted string starting at sql[i] (backslash escapes
// and doubled quotes) and returns its value and the offset after it.
func lexString(sql string, i int) (string, int) {
	q := sql[i]
	var b strings.Builder
	j := i + 1
	for j < len(sql) {
		c := sql[j]
		switch {
		case c == '\\' && j+1 < len(sql):
			j++
			switch e := sql[j]; e {
			case '0':
				b.WriteByte(0)
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
			j++
		case c == q:
			if j+1 < len(sql) && sql[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1
		default:
			b.WriteByte(c)
			j++
		}
	}
	return b.String(), j
}

// tableName is a table named in a statement.
type tableName struct {
	db, name   string
	start, end int // where the name (with its qualifier) is in the statement
}

// parser walks the tokens of one statement.
type parser struct {
	toks []token
	i    int
	db   string // the statement's default database
}

func (p *parser) peek(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return token{kind: tPunct, text: ";", start: -1, end: -1}
}

func (p *parser) done() bool { return p.i >= len(p.toks) || p.peek(0).isPunct(';') }

// accept consumes the keywords kws if they come next, in order.
func (p *parser) accept(kws ...string) bool {
	for k, kw := range kws {
		if !p.peek(k).is(kw) {
			return false
		}
	}
	p.i += len(kws)
	return true
}

// name reads [db.]name.
func (p *parser) name() (tableName, bool) {
	t := p.peek(0)
	if !t.ident() {
		return tableName{}, false
	}
	p.i++
	n := tableName{db: p.db, name: t.text, start: t.start, end: t.end}
	if p.peek(0).isPunct('.') && p.peek(1).ident() {
		n.db, n.name, n.end = t.text, p.peek(1).text, p.peek(1).end
		p.i += 2
	}
	return n, true
}

// skipWait skips MariaDB's WAIT n / NOWAIT.
func (p *parser) skipWait() {
	if p.accept("NOWAIT") {
		return
	}
	if p.peek(0).is("WAIT") && p.peek(1).kind == tNumber {
		p.i += 2
	}
}

// skipGroup skips a parenthesised group starting at the current '('.
func (p *parser) skipGroup() {
	depth := 0
	for ; p.i < len(p.toks); p.i++ {
		switch {
		case p.toks[p.i].isPunct('('):
			depth++
		case p.toks[p.i].isPunct(')'):
			depth--
			if depth == 0 {
				p.i++
				return
			}
		}
	}
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
	kind actionKind
	t    tableName // the table (for actDropDB: t.db)
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
	kind     colOpKind
	name, to string   // opRename: name → to; opAdd, opDrop: name
	def      *literal // opAdd: the DEFAULT, when it is a literal
	defExpr  bool     // opAdd: the DEFAULT is an expression (not known)
}

// literal is a constant from a DEFAULT clause.
type literal struct {
	null   bool
	number string // a numeric literal
	text   string // a string literal (when number == "" and !null)
}

// parseDDL returns what the statement does to tables; nil for a
// statement that does not create, drop, truncate, rename or alter one.
// db is the statement's default database.
func parseDDL(sql, db string) []action {
	p := &parser{toks: lex(sql), db: db}
	switch {
	case p.accept("CREATE"):
		return p.create()
	case p.accept("DROP"):
		return p.drop()
	case p.accept("TRUNCATE"):
		p.accept("TABLE")
		n, ok := p.name()
		if !ok {
			return nil
		}
		return []action{{kind: actTruncate, t: n}}
	case p.accept("RENAME"):
		if !p.accept("TABLE") && !p.accept("TABLES") {
			return nil // RENAME USER
		}
		ifExists := p.accept("IF", "EXISTS")
		var out []action
		for {
			from, ok := p.name()
			if !ok {
				return out
			}
			p.skipWait()
			if !p.accept("TO") {
				return out
			}
			to, ok := p.name()
			if !ok {
				return out
			}
			out = append(out, action{kind: actRename, t: from, to: to, ifExists: ifExists})
			if !p.peek(0).isPunct(',') {
				return out
			}
			p.i++
		}
	case p.accept("ALTER"):
		return p.alter()
	}
	return nil
}

func (p *parser) create() []action {
	orReplace := p.accept("OR", "REPLACE")
	if p.accept("DATABASE") || p.accept("SCHEMA") {
		if !orReplace {
			return nil
		}
		p.accept("IF", "NOT", "EXISTS")
		if t := p.peek(0); t.ident() {
			return []action{{kind: actDropDB, t: tableName{db: t.text}}}
		}
		return nil
	}
	if p.peek(0).is("TEMPORARY") {
		return nil // temporary tables are not logged in row format, and are not recoverable
	}
	if !p.accept("TABLE") {
		// CREATE [ONLINE|OFFLINE] [UNIQUE|FULLTEXT|SPATIAL] INDEX … ON t
		for k := 0; k < 4; k++ {
			if p.peek(k).is("INDEX") {
				return p.indexOn()
			}
		}
		return nil
	}
	a := action{kind: actCreate, orReplace: orReplace}
	a.ifNotExists = p.accept("IF", "NOT", "EXISTS")
	n, ok := p.name()
	if !ok {
		return nil
	}
	a.t = n
	switch {
	case p.accept("LIKE"):
		if src, ok := p.name(); ok {
			a.like = src.db + "." + src.name
		}
	case p.peek(0).isPunct('(') && p.peek(1).is("LIKE"):
		p.i += 2
		if src, ok := p.name(); ok {
			a.like = src.db + "." + src.name
		}
	case p.peek(0).isPunct('('):
		p.skipGroup()
		a.usable = true
		// CREATE TABLE t (…) [options] [AS] SELECT …
		for ; !p.done(); p.i++ {
			if p.peek(0).is("SELECT") || p.peek(0).is("TABLE") || p.peek(0).is("VALUES") {
				a.usable = false
				break
			}
			if p.peek(0).isPunct('(') {
				p.skipGroup()
				p.i--
			}
		}
	}
	return []action{a}
}

// indexOn reads "… ON t" of CREATE/DROP INDEX: an alteration of t.
func (p *parser) indexOn() []action {
	for ; !p.done(); p.i++ {
		if p.peek(0).is("ON") {
			p.i++
			if n, ok := p.name(); ok {
				return []action{{kind: actAlter, t: n, alter: &alterInfo{}}}
			}
			return nil
		}
	}
	return nil
}

func (p *parser) drop() []action {
	if p.accept("DATABASE") || p.accept("SCHEMA") {
		ifExists := p.accept("IF", "EXISTS")
		if t := p.peek(0); t.ident() {
			return []action{{kind: actDropDB, t: tableName{db: t.text}, ifExists: ifExists}}
		}
		return nil
	}
	if p.peek(0).is("INDEX") {
		return p.indexOn()
	}
	if p.peek(0).is("TEMPORARY") {
		return nil
	}
	if !p.accept("TABLE") && !p.accept("TABLES") {
		return nil
	}
	ifExists := p.accept("IF", "EXISTS")
	var out []action
	for {
		n, ok := p.name()
		if !ok {
			return out
		}
		out = append(out, action{kind: actDrop, t: n, ifExists: ifExists})
		if !p.peek(0).isPunct(',') {
			return out
		}
		p.i++
	}
}

func (p *parser) alter() []action {
	p.accept("ONLINE")
	p.accept("IGNORE")
	if !p.accept("TABLE") {
		return nil
	}
	ifExists := p.accept("IF", "EXISTS")
	n, ok := p.name()
	if !ok {
		return nil
	}
	p.skipWait()
	info := &alterInfo{}
	var renameTo *tableName
	other := false
	// Clauses, separated by top-level commas.
	for !p.done() {
		start := p.i
		depth := 0
		for ; !p.done(); p.i++ {
			t := p.peek(0)
			if t.isPunct('(') {
				depth++
			} else if t.isPunct(')') {
				depth--
			} else if t.isPunct(',') && depth == 0 {
				break
			}
		}
		clause := p.toks[start:p.i]
		if !p.done() {
			p.i++ // the comma
		}
		if len(clause) == 0 {
			continue
		}
		if to, ok := alterRename(clause, p.db); ok {
			renameTo = &to
			continue
		}
		other = true
		info.clause(clause)
	}
	var out []action
	if other {
		out = append(out, action{kind: actAlter, t: n, alter: info, ifExists: ifExists})
	}
	if renameTo != nil {
		out = append(out, action{kind: actRename, t: n, to: *renameTo, ifExists: ifExists})
	}
	if len(out) == 0 {
		// ALTER TABLE t (nothing, or only options we do not split): still an alteration.
		out = append(out, action{kind: actAlter, t: n, alter: info, ifExists: ifExists})
	}
	return out
}

// alterRename recognises "RENAME [TO|AS] name" (not RENAME COLUMN/INDEX/KEY).
func alterRename(clause []token, db string) (tableName, bool) {
	if !clause[0].is("RENAME") || len(clause) < 2 {
		return tableName{}, false
	}
	rest := clause[1:]
	switch {
	case rest[0].is("COLUMN") || rest[0].is("INDEX") || rest[0].is("KEY"):
		return tableName{}, false
	case rest[0].is("TO") || rest[0].is("AS"):
		rest = rest[1:]
	}
	p := &parser{toks: rest, db: db}
	n, ok := p.name()
	return n, ok && p.done()
}

// clause records what one ALTER TABLE clause does to columns.
func (a *alterInfo) clause(c []token) {
	p := &parser{toks: c}
	notColumn := func() bool {
		for _, kw := range []string{"INDEX", "KEY", "PRIMARY", "UNIQUE", "FULLTEXT", "SPATIAL", "CONSTRAINT",
			"FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "VERSIONING"} {
			if p.peek(0).is(kw) {
				return true
			}
		}
		return false
	}
	switch {
	case p.accept("RENAME", "COLUMN"):
		from := p.peek(0)
		if from.ident() && p.peek(1).is("TO") && p.peek(2).ident() {
			a.ops = append(a.ops, colOp{kind: opRename, name: from.text, to: p.peek(2).text})
		}
	case p.accept("CHANGE"):
		p.accept("COLUMN")
		p.accept("IF", "EXISTS")
		from, to := p.peek(0), p.peek(1)
		if from.ident() && to.ident() && !strings.EqualFold(from.text, to.text) {
			a.ops = append(a.ops, colOp{kind: opRename, name: from.text, to: to.text})
		}
	case p.accept("DROP"):
		if notColumn() {
			return
		}
		p.accept("COLUMN")
		p.accept("IF", "EXISTS")
		if t := p.peek(0); t.ident() {
			a.ops = append(a.ops, colOp{kind: opDrop, name: t.text})
		}
	case p.accept("ADD"):
		if notColumn() {
			return
		}
		p.accept("COLUMN")
		p.accept("IF", "NOT", "EXISTS")
		if p.peek(0).isPunct('(') {
			// ADD (a INT, b INT)
			p.i++
			for !p.done() {
				start, depth := p.i, 0
				for ; p.i < len(p.toks); p.i++ {
					t := p.peek(0)
					if t.isPunct('(') {
						depth++
					} else if t.isPunct(')') {
						if depth == 0 {
							break
						}
						depth--
					} else if t.isPunct(',') && depth == 0 {
						break
					}
				}
				a.addColumn(p.toks[start:p.i])
				if p.i >= len(p.toks) || p.peek(0).isPunct(')') {
					break
				}
				p.i++
			}
			return
		}
		a.addColumn(p.toks[p.i:])
	}
}

// addColumn records "name type … [DEFAULT x] …".
func (a *alterInfo) addColumn(def []token) {
	if len(def) == 0 || !def[0].ident() {
		return
	}
	op := colOp{kind: opAdd, name: def[0].text}
	depth := 0
	for k := 1; k < len(def); k++ {
		t := def[k]
		if t.isPunct('(') {
			depth++
			continue
		}
		if t.isPunct(')') {
			depth--
			continue
		}
		if depth != 0 || !t.is("DEFAULT") || k+1 >= len(def) {
			continue
		}
		v := def[k+1]
		neg := ""
		if (v.isPunct('-') || v.isPunct('+')) && k+2 < len(def) && def[k+2].kind == tNumber {
			if v.isPunct('-') {
				neg = "-"
			}
			v = def[k+2]
		}
		switch {
		case v.is("NULL"):
			op.def = &literal{null: true}
		case v.is("TRUE"):
			op.def = &literal{number: "1"}
		case v.is("FALSE"):
			op.def = &literal{number: "0"}
		case v.kind == tNumber:
			op.def = &literal{number: neg + v.text}
		case v.kind == tString && (v.introducer == "" || v.introducer[0] == '_' || strings.EqualFold(v.introducer, "N")):
			op.def = &literal{text: v.text}
		default:
			op.defExpr = true
		}
		break
	}
	a.ops = append(a.ops, op)
}
