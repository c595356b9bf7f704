package ddl

import (
	"strings"

	"github.com/binlogcdc/binlogcdc/internal/sqllex"
)

// Redacted replaces a secret in statement text. It is not a SQL literal,
// so a redacted statement cannot be run by mistake.
const Redacted = "<redacted>"

// Redact returns an account statement's text with its secrets replaced by
// Redacted: every literal after the first IDENTIFIED, PASSWORD or
// OLD_PASSWORD keyword (IDENTIFIED BY 'x', IDENTIFIED BY PASSWORD '*hash',
// IDENTIFIED WITH/VIA plugin AS/USING 'x', PASSWORD('x'), SET PASSWORD
// [FOR u] = 'x', CREATE SERVER … OPTIONS (PASSWORD 'x')). User and host
// names written before that keyword are kept; later ones may be redacted
// too (it errs on the side of hiding). Other statements are returned as
// they are. changed reports whether anything was replaced.
func Redact(sql string) (out string, changed bool) {
	if Parse(sql, "").Kind != Account {
		return sql, false
	}
	toks := sqllex.Lex(sql)
	var b strings.Builder
	last, armed := 0, false
	for k, t := range toks {
		if t.Is("IDENTIFIED") || t.Is("PASSWORD") || t.Is("OLD_PASSWORD") {
			armed = true
			continue
		}
		if !armed || !secret(t) {
			continue
		}
		if t.Kind != sqllex.String && k > 0 && !valuePlace(toks[k-1]) {
			continue // a number that is no password: MAX_USER_CONNECTIONS 10
		}
		b.WriteString(sql[last:t.Start])
		b.WriteString(Redacted)
		last, changed = t.End, true
	}
	if !changed {
		return sql, false
	}
	b.WriteString(sql[last:])
	return b.String(), true
}

// secret reports a token that can carry a password: a string, a number,
// or a hex/bit literal (0x…, 0b…).
func secret(t sqllex.Token) bool {
	switch t.Kind {
	case sqllex.String, sqllex.Number:
		return true
	case sqllex.Word:
		return len(t.Text) > 2 && t.Text[0] == '0' && (t.Text[1] == 'x' || t.Text[1] == 'X' || t.Text[1] == 'b' || t.Text[1] == 'B')
	}
	return false
}

// valuePlace reports a token after which a password value may come.
func valuePlace(t sqllex.Token) bool {
	return t.Is("BY") || t.Is("AS") || t.Is("USING") || t.Is("PASSWORD") || t.IsPunct('=') || t.IsPunct('(') || t.IsPunct(',')
}
