// Package sqllex is a small lexer for SQL statement text as it appears in
// binlog QUERY events, and a token walker for the few statements binlogcdc
// must understand (DDL that creates, drops, renames or alters tables,
// account management). It is not a SQL parser: callers recognise the
// statements they need and treat anything else as unknown.
package sqllex

import "strings"

// Kind is the kind of a token.
type Kind uint8

const (
	Word   Kind = iota // unquoted word: keyword or identifier
	Quoted             // `identifier`
	String             // 'text' or "text"
	Number             // 12, 1.5, 1e3
	Punct              // one character: . , ( ) ; = …
)

// Token is one lexical token of a statement.
type Token struct {
	Kind       Kind
	Text       string // unquoted text (for String/Quoted, escapes resolved)
	Start, End int    // byte offsets in the statement
	Introducer string // for String: a preceding _charset or N, X, B
}

// Is reports whether t is the keyword kw (any letter case).
func (t Token) Is(kw string) bool { return t.Kind == Word && strings.EqualFold(t.Text, kw) }

// IsPunct reports whether t is the punctuation c.
func (t Token) IsPunct(c byte) bool { return t.Kind == Punct && t.Text[0] == c }

// Ident reports whether t can name a table or column.
func (t Token) Ident() bool { return t.Kind == Word || t.Kind == Quoted || t.Kind == String }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// Lex splits a statement into tokens, skipping white space and comments.
// The text of executable comments (/*!50100 … */, /*M!100100 … */) is
// lexed: the server runs it.
func Lex(sql string) []Token {
	var toks []Token
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
			toks = append(toks, Token{Kind: Quoted, Text: b.String(), Start: i, End: min(j+1, n)})
			i = j + 1
		case c == '\'' || c == '"':
			text, j := lexString(sql, i)
			t := Token{Kind: String, Text: text, Start: i, End: j}
			if k := len(toks) - 1; k >= 0 && toks[k].Kind == Word && toks[k].End == i {
				w := toks[k].Text
				if w[0] == '_' || strings.EqualFold(w, "N") || strings.EqualFold(w, "X") || strings.EqualFold(w, "B") {
					t.Introducer, t.Start = w, toks[k].Start
					toks = toks[:k]
				}
			} else if k >= 0 && toks[k].Kind == Word && toks[k].Text[0] == '_' {
				// _utf8mb4 'text'
				t.Introducer, t.Start = toks[k].Text, toks[k].Start
				toks = toks[:k]
			}
			toks = append(toks, t)
			i = j
		case isWordByte(c):
			j := i
			for j < n && isWordByte(sql[j]) {
				j++
			}
			kind := Word
			if allDigits(sql[i:j]) && (len(toks) == 0 || !toks[len(toks)-1].IsPunct('.') || toks[len(toks)-1].End != i) {
				kind = Number
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
			toks = append(toks, Token{Kind: kind, Text: sql[i:j], Start: i, End: j})
			i = j
		default:
			toks = append(toks, Token{Kind: Punct, Text: sql[i : i+1], Start: i, End: i + 1})
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

// TableName is a table named in a statement.
type TableName struct {
	DB, Name   string
	Start, End int // where the name (with its qualifier) is in the statement
}

// Parser walks the tokens of one statement.
type Parser struct {
	Toks []Token
	I    int    // the next token
	DB   string // the statement's default database
}

// Peek returns the token k places ahead (a ';' past the end).
func (p *Parser) Peek(k int) Token {
	if p.I+k < len(p.Toks) {
		return p.Toks[p.I+k]
	}
	return Token{Kind: Punct, Text: ";", Start: -1, End: -1}
}

// Done reports whether the statement has ended.
func (p *Parser) Done() bool { return p.I >= len(p.Toks) || p.Peek(0).IsPunct(';') }

// Accept consumes the keywords kws if they come next, in order.
func (p *Parser) Accept(kws ...string) bool {
	for k, kw := range kws {
		if !p.Peek(k).Is(kw) {
			return false
		}
	}
	p.I += len(kws)
	return true
}

// Name reads [db.]name.
func (p *Parser) Name() (TableName, bool) {
	t := p.Peek(0)
	if !t.Ident() {
		return TableName{}, false
	}
	p.I++
	n := TableName{DB: p.DB, Name: t.Text, Start: t.Start, End: t.End}
	if p.Peek(0).IsPunct('.') && p.Peek(1).Ident() {
		n.DB, n.Name, n.End = t.Text, p.Peek(1).Text, p.Peek(1).End
		p.I += 2
	}
	return n, true
}

// SkipWait skips MariaDB's WAIT n / NOWAIT.
func (p *Parser) SkipWait() {
	if p.Accept("NOWAIT") {
		return
	}
	if p.Peek(0).Is("WAIT") && p.Peek(1).Kind == Number {
		p.I += 2
	}
}

// SkipGroup skips a parenthesised group starting at the current '('.
func (p *Parser) SkipGroup() {
	depth := 0
	for ; p.I < len(p.Toks); p.I++ {
		switch {
		case p.Toks[p.I].IsPunct('('):
			depth++
		case p.Toks[p.I].IsPunct(')'):
			depth--
			if depth == 0 {
				p.I++
				return
			}
		}
	}
}
