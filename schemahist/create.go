package schemahist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// DefaultCollation returns the collation the text columns that name no
// character set had (0: there are none, or the table names its own).
func DefaultCollation(create string, final *tablemap.Table) (uint32, error) {
	toks := lex(create)
	p := &parser{sqllex.Parser{Toks: toks}}
	p.Accept("CREATE", "TABLE")
	if _, ok := p.Name(); !ok || !p.Peek(0).IsPunct('(') {
		return 0, nil
	}
	open := p.I
	p.SkipGroup()
	body := toks[open+1 : max(open+1, p.I-1)]
	for _, t := range toks[p.I:] {
		if t.Is("CHARSET") || t.Is("CHARACTER") || t.Is("COLLATE") {
			return 0, nil // the table names its default
		}
	}
	byName := map[string]*tablemap.Column{}
	for i := range final.Columns {
		byName[strings.ToLower(final.Columns[i].Name)] = &final.Columns[i]
	}
	var coll uint32
	for _, def := range splitTop(body) {
		if len(def) < 2 || !def[0].Ident() || (def[0].Kind == tWord && isConstraintWord(def[0].Text)) {
			continue
		}
		if !isTextType(def[1]) {
			continue
		}
		explicit := false
		for _, t := range def[2:] {
			if t.Is("CHARSET") || t.Is("CHARACTER") || t.Is("COLLATE") || t.Is("BINARY") || t.Is("ASCII") || t.Is("UNICODE") || t.Is("BYTE") {
				explicit = true
				break
			}
		}
		if explicit {
			continue
		}
		c := byName[strings.ToLower(def[0].Text)]
		if c == nil || c.Collation == 0 || c.Collation == 63 {
			continue
		}
		if coll != 0 && coll != c.Collation {
			return 0, errors.New("the binlog's CREATE TABLE statement leaves the character set of its text columns to the database default, and they differ in the binlog: the target database's default applies")
		}
		coll = c.Collation
	}
	return coll, nil
}

func isConstraintWord(w string) bool {
	switch strings.ToUpper(w) {
	case "PRIMARY", "KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "CONSTRAINT", "FOREIGN", "CHECK", "PERIOD", "SYSTEM":
		return true
	}
	return false
}

func isTextType(t token) bool {
	if t.Kind != tWord {
		return false
	}
	switch strings.ToUpper(t.Text) {
	case "CHAR", "VARCHAR", "CHARACTER", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "LONG", "ENUM", "SET":
		return true
	}
	return false
}

// splitTop splits tokens at top-level commas.
func splitTop(toks []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range toks {
		switch {
		case t.IsPunct('('):
			depth++
		case t.IsPunct(')'):
			depth--
		case t.IsPunct(',') && depth == 0:
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

// ShapeFromCreate reads the columns and primary key of a CREATE TABLE
// statement. Text columns that name no character set take the table's
// DEFAULT CHARSET, or else the one the TABLE_MAPs show for them.
//
// guess is the collation to take for the table's default when neither
// says it (the server's or database's default, with a note; 0: none).
func ShapeFromCreate(sql string, first *tablemap.Table, guess uint32, mariadb bool) (*Shape, error) {
	return shapeFromCreate(sql, first, guess, mariadb, false)
}

// shapeFromCreate is ShapeFromCreate, accepting generated columns when
// generated is set.
func shapeFromCreate(sql string, first *tablemap.Table, guess uint32, mariadb, generated bool) (*Shape, error) {
	toks := lex(sql)
	p := &parser{sqllex.Parser{Toks: toks}}
	p.Accept("CREATE")
	p.Accept("OR", "REPLACE")
	if !p.Accept("TABLE") {
		return nil, fmt.Errorf("not CREATE TABLE")
	}
	p.Accept("IF", "NOT", "EXISTS")
	if _, ok := p.Name(); !ok || !p.Peek(0).IsPunct('(') {
		return nil, fmt.Errorf("no column list")
	}
	open := p.I
	p.SkipGroup()
	body := toks[open+1 : max(open+1, p.I-1)]
	sh := &Shape{T: &tablemap.Table{}, TypeNames: map[string]string{}, Attrs: map[string]colAttrs{}, Rooted: true, Generated: generated}
	cs, coll := "", ""
	for k := p.I; k+1 < len(toks); k++ {
		t := toks[k]
		v := toks[k+1]
		if v.IsPunct('=') && k+2 < len(toks) {
			v = toks[k+2]
		}
		switch {
		case t.Is("CHARSET") || t.Is("SET") && k > 0 && toks[k-1].Is("CHARACTER"):
			cs = v.Text
		case t.Is("COLLATE"):
			coll = v.Text
		}
	}
	if cs != "" || coll != "" {
		sh.DefColl = collationOf(cs, coll, mariadb)
	}
	if sh.DefColl == 0 && first != nil {
		if c, err := DefaultCollation(sql, first); err == nil {
			sh.DefColl = c
		}
	}
	if sh.DefColl == 0 && guess != 0 {
		sh.DefColl, sh.Guessed = guess, true
	}
	var pk []string
	var prefix []int
	for _, def := range splitTop(body) {
		if len(def) == 0 {
			continue
		}
		dp := &parser{sqllex.Parser{Toks: def}}
		if def[0].Kind == tWord && isConstraintWord(def[0].Text) {
			if dp.Accept("CONSTRAINT") && dp.Peek(0).Ident() && !dp.Peek(0).Is("PRIMARY") {
				dp.I++
			}
			if dp.Accept("PRIMARY", "KEY") {
				var err error
				if pk, prefix, err = keyParts(dp); err != nil {
					return nil, err
				}
			}
			continue
		}
		d, err := sh.parseColDef(sql, def, mariadb)
		if err != nil {
			return nil, err
		}
		if pk, prefix, err = sh.insert(d, len(sh.T.Columns), pk, prefix); err != nil {
			return nil, err
		}
	}
	sh.setPK(pk, prefix)
	return sh, nil
}

// WithVisibility returns the TABLE_MAP m with the columns' visibility of
// the derived table d (MariaDB does not log it), m itself when they agree.
func WithVisibility(m, d *tablemap.Table) *tablemap.Table {
	same := true
	for i := range m.Columns {
		if m.Columns[i].Visible != d.Columns[i].Visible {
			same = false
		}
	}
	if same {
		return m
	}
	t := *m
	t.Columns = slices.Clone(m.Columns)
	for i := range t.Columns {
		t.Columns[i].Visible = d.Columns[i].Visible
	}
	return &t
}

// EncodeText returns UTF-8 text in the collation's character set (the
// bytes a binary column gets from a text column); false when binlogcdc
// cannot encode that character set.
func EncodeText(s string, coll uint32) ([]byte, bool) {
	if cs, ok := charset.LookupFlavor(coll, true); ok && (cs.Charset == "utf8mb4" || cs.Charset == "utf8mb3" || cs.Charset == "ascii") {
		return []byte(s), true
	}
	cs, ok := charset.LookupFlavor(coll, true)
	if !ok || cs.MaxLen != 1 {
		return nil, false
	}
	m, _ := singleByteEncoders.Load(coll)
	if m == nil {
		enc := map[rune]byte{}
		for b := 255; b >= 0; b-- {
			out, err := charset.Decode(nil, coll, []byte{byte(b)})
			if err != nil {
				return nil, false
			}
			if r, n := utf8.DecodeRune(out); n == len(out) && r != utf8.RuneError {
				enc[r] = byte(b)
			}
		}
		m, _ = singleByteEncoders.LoadOrStore(coll, enc)
	}
	enc := m.(map[rune]byte)
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := enc[r]
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

var singleByteEncoders sync.Map // collation → map[rune]byte

// ParseColumn reads one column definition ("name type [attributes]") as
// CREATE TABLE would, in a table whose default collation is defColl.
func ParseColumn(sql string, defColl uint32, mariadb bool) (tablemap.Column, error) {
	d, err := parseColDef(sql, lex(sql), defColl, mariadb)
	if err != nil {
		return tablemap.Column{}, err
	}
	return d.col, nil
}

// Collation returns the id of a character set's default collation, or of
// the collation coll when given; 0 when unknown.
func Collation(cs, coll string, mariadb bool) uint32 { return collationOf(cs, coll, mariadb) }
