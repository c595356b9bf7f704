package schemahist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// This file derives the table an ALTER TABLE statement leaves from the
// table before it (a TABLE_MAP, or an earlier derivation), as far as the
// columns and the primary key go: what a TABLE_MAP after it would say.
// A clause it does not understand makes the derivation fail, with the
// reason: then the schema after that ALTER is unknown.

// Shape is a derived table: the columns and primary key, the table's
// default collation (0: unknown), and the type names a TABLE_MAP cannot
// give (lower-cased column name → UUID, INET4, INET6).
type Shape struct {
	T         *tablemap.Table
	DefColl   uint32
	TypeNames map[string]string
	Attrs     map[string]colAttrs // lower-cased column name → its clauses
	// Guessed says DefColl is a guess (the server's default), and Notes
	// list the columns that took it.
	Guessed bool
	Notes   []string
	// Rooted: derived from the CREATE TABLE statement (so the type names
	// and visibility of every column are known), not from a TABLE_MAP.
	Rooted bool
	// Generated accepts generated columns (their Attrs say which); else
	// they are refused (recover cannot rebuild them).
	Generated bool
}

// Clone returns a copy that changes independently.
func (s *Shape) Clone() *Shape {
	t := *s.T
	t.Columns = slices.Clone(s.T.Columns)
	n := &Shape{T: &t, DefColl: s.DefColl, TypeNames: map[string]string{}, Attrs: map[string]colAttrs{}, Guessed: s.Guessed, Rooted: s.Rooted, Generated: s.Generated}
	for k, v := range s.TypeNames {
		n.TypeNames[k] = v
	}
	for k, v := range s.Attrs {
		n.Attrs[k] = v
	}
	return n
}

// FromTableMap starts a shape from a TABLE_MAP. Its default collation is
// guessed from its text columns when they all share one.
func FromTableMap(t *tablemap.Table) *Shape {
	s := &Shape{T: t, TypeNames: map[string]string{}, Attrs: map[string]colAttrs{}}
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Collation == 0 || c.Collation == 63 {
			continue
		}
		if s.DefColl == 0 {
			s.DefColl = c.Collation
		} else if s.DefColl != c.Collation {
			s.DefColl = 0
			break
		}
	}
	return s
}

func (s *Shape) index(name string) int {
	for i := range s.T.Columns {
		if strings.EqualFold(s.T.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// pkNames returns the primary key's column names.
func (s *Shape) pkNames() []string {
	var out []string
	for _, i := range s.T.PrimaryKey {
		out = append(out, s.T.Columns[i].Name)
	}
	return out
}

// setPK sets the primary key from column names (with prefixes).
func (s *Shape) setPK(names []string, prefix []int) {
	s.T.PrimaryKey, s.T.PrimaryKeyPrefix, s.T.PKNames = nil, nil, nil
	for k, n := range names {
		i := s.index(n)
		if i < 0 {
			continue
		}
		s.T.PrimaryKey = append(s.T.PrimaryKey, i)
		p := 0
		if k < len(prefix) {
			p = prefix[k]
		}
		s.T.PrimaryKeyPrefix = append(s.T.PrimaryKeyPrefix, p)
		s.T.PKNames = append(s.T.PKNames, s.T.Columns[i].Name)
		s.T.Columns[i].Nullable = false
	}
}

// ApplyAlter returns the shape after the ALTER TABLE statement sql.
func (s *Shape) ApplyAlter(sql string, mariadb bool) (*Shape, error) {
	p := &parser{sqllex.Parser{Toks: lex(sql)}}
	if p.Peek(0).Is("CREATE") || p.Peek(0).Is("DROP") {
		// CREATE … INDEX … ON t, DROP INDEX i ON t: only DROP INDEX
		// `PRIMARY` changes what a TABLE_MAP says.
		n := s.Clone()
		if p.Accept("DROP", "INDEX") && (p.Peek(0).Is("PRIMARY") || p.Peek(0).Kind == tQuoted && strings.EqualFold(p.Peek(0).Text, "PRIMARY")) {
			n.setPK(nil, nil)
		}
		return n, nil
	}
	p.Accept("ALTER")
	p.Accept("ONLINE")
	p.Accept("IGNORE")
	if !p.Accept("TABLE") {
		return nil, fmt.Errorf("not ALTER TABLE")
	}
	p.Accept("IF", "EXISTS")
	if _, ok := p.Name(); !ok {
		return nil, fmt.Errorf("no table name")
	}
	p.SkipWait()
	n := s.Clone()
	pk := n.pkNames()
	var prefix []int
	prefix = append(prefix, n.T.PrimaryKeyPrefix...)
	for _, clause := range splitTop(p.Toks[p.I:]) {
		if len(clause) > 0 && clause[len(clause)-1].IsPunct(';') {
			clause = clause[:len(clause)-1]
		}
		if len(clause) == 0 {
			continue
		}
		var err error
		pk, prefix, err = n.clause(sql, clause, pk, prefix, mariadb)
		if err != nil {
			return nil, fmt.Errorf("%w (in %.60q)", err, sql[clause[0].Start:clause[len(clause)-1].End])
		}
	}
	n.setPK(pk, prefix)
	return n, nil
}

// tableOptions are clauses that change neither the columns nor the key.
var tableOptions = map[string]bool{
	"ENGINE": true, "ROW_FORMAT": true, "COMMENT": true, "AUTO_INCREMENT": true, "ALGORITHM": true, "LOCK": true,
	"FORCE": true, "KEY_BLOCK_SIZE": true, "STATS_AUTO_RECALC": true, "STATS_PERSISTENT": true, "STATS_SAMPLE_PAGES": true,
	"PACK_KEYS": true, "CHECKSUM": true, "PAGE_CHECKSUM": true, "DELAY_KEY_WRITE": true, "MAX_ROWS": true, "MIN_ROWS": true,
	"AVG_ROW_LENGTH": true, "ENCRYPTED": true, "ENCRYPTION_KEY_ID": true, "PAGE_COMPRESSED": true,
	"PAGE_COMPRESSION_LEVEL": true, "TRANSACTIONAL": true, "UNION": true, "INSERT_METHOD": true, "DATA": true,
	"ORDER": true, "ENABLE": true, "DISABLE": true, "PARTITION": true, "REMOVE": true, "COALESCE": true,
	"REORGANIZE": true, "ANALYZE": true, "CHECK": true, "OPTIMIZE": true, "REBUILD": true, "REPAIR": true,
	"TRUNCATE": true, "EXCHANGE": true, "DISCARD": true, "IMPORT": true, "WITH": true, "WITHOUT": true,
	"TABLESPACE": true, "STORAGE": true, "SECONDARY_ENGINE": true, "STATS_AUTO_UPDATE": true, "PARTITIONS": true,
	"IETF_QUOTES": true, "SEQUENCE": true, "INDEX": false,
}

func isIndexWord(t token) bool {
	for _, kw := range []string{"INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PERIOD", "SYSTEM", "PARTITION", "VECTOR"} {
		if t.Is(kw) {
			return true
		}
	}
	return false
}

// clause applies one clause; pk is the primary key's column names.
func (n *Shape) clause(sql string, c []token, pk []string, prefix []int, mariadb bool) ([]string, []int, error) {
	p := &parser{sqllex.Parser{Toks: c}}
	first := strings.ToUpper(c[0].Text)
	if c[0].Kind == tWord && tableOptions[first] {
		return pk, prefix, nil
	}
	switch {
	case p.Accept("ADD"):
		p.Accept("CONSTRAINT")
		constraint := len(c) > 1 && c[1].Is("CONSTRAINT")
		if p.Peek(0).Ident() && p.Peek(1).Is("PRIMARY") && constraint {
			p.I++ // the constraint's name
		}
		if p.Accept("PRIMARY", "KEY") {
			names, pre, err := keyParts(p)
			return names, pre, err
		}
		if isIndexWord(p.Peek(0)) || p.Peek(0).Ident() && constraint {
			return pk, prefix, nil
		}
		p.Accept("COLUMN")
		ifNot := p.Accept("IF", "NOT", "EXISTS")
		if p.Peek(0).IsPunct('(') {
			inner, ok := groupInner(c, p.I)
			if !ok {
				return nil, nil, fmt.Errorf("unclosed parenthesis")
			}
			for _, def := range splitTop(inner) {
				var err error
				if pk, err = n.addColumn(sql, def, ifNot, pk, mariadb); err != nil {
					return nil, nil, err
				}
			}
			return pk, prefix, nil
		}
		pk, err := n.addColumn(sql, c[p.I:], ifNot, pk, mariadb)
		return pk, prefix, err
	case p.Accept("MODIFY"), p.Accept("CHANGE"):
		change := c[0].Is("CHANGE")
		p.Accept("COLUMN")
		ifExists := p.Accept("IF", "EXISTS")
		old := p.Peek(0)
		if change {
			p.I++
		}
		if p.I >= len(c) {
			return nil, nil, fmt.Errorf("%s without a column definition", strings.ToUpper(c[0].Text))
		}
		def, pos := placement(c[p.I:])
		i := n.index(old.Text)
		if i < 0 {
			if ifExists {
				return pk, prefix, nil
			}
			return nil, nil, fmt.Errorf("column %s is not in the table", tablemap.QuoteIdent(old.Text))
		}
		d, err := n.parseColDef(sql, def, mariadb)
		if err != nil {
			return nil, nil, err
		}
		for k := range pk {
			if strings.EqualFold(pk[k], old.Text) {
				pk[k] = d.col.Name
			}
		}
		delete(n.TypeNames, strings.ToLower(old.Text))
		delete(n.Attrs, strings.ToLower(old.Text))
		n.T.Columns = slices.Delete(n.T.Columns, i, i+1)
		at, err := n.at(pos, i)
		if err != nil {
			return nil, nil, err
		}
		return n.insert(d, at, pk, prefix)
	case p.Accept("DROP"):
		if p.Accept("PRIMARY", "KEY") {
			return nil, nil, nil
		}
		if isIndexWord(p.Peek(0)) || p.Peek(0).Is("CONSTRAINT") {
			return pk, prefix, nil
		}
		p.Accept("COLUMN")
		ifExists := p.Accept("IF", "EXISTS")
		name := p.Peek(0)
		i := n.index(name.Text)
		if i < 0 {
			if ifExists {
				return pk, prefix, nil
			}
			return nil, nil, fmt.Errorf("column %s is not in the table", tablemap.QuoteIdent(name.Text))
		}
		n.T.Columns = slices.Delete(n.T.Columns, i, i+1)
		delete(n.TypeNames, strings.ToLower(name.Text))
		delete(n.Attrs, strings.ToLower(name.Text))
		for k := 0; k < len(pk); k++ {
			if strings.EqualFold(pk[k], name.Text) {
				pk = slices.Delete(slices.Clone(pk), k, k+1)
				if k < len(prefix) {
					prefix = slices.Delete(slices.Clone(prefix), k, k+1)
				}
				k--
			}
		}
		return pk, prefix, nil
	case p.Accept("RENAME"):
		if p.Accept("COLUMN") {
			from, to := p.Peek(0), p.Peek(2)
			i := n.index(from.Text)
			if i < 0 || !p.Peek(1).Is("TO") {
				return nil, nil, fmt.Errorf("RENAME COLUMN not understood")
			}
			n.T.Columns[i].Name = to.Text
			if tn, ok := n.TypeNames[strings.ToLower(from.Text)]; ok {
				delete(n.TypeNames, strings.ToLower(from.Text))
				n.TypeNames[strings.ToLower(to.Text)] = tn
			}
			if a, ok := n.Attrs[strings.ToLower(from.Text)]; ok {
				delete(n.Attrs, strings.ToLower(from.Text))
				n.Attrs[strings.ToLower(to.Text)] = a
			}
			for k := range pk {
				if strings.EqualFold(pk[k], from.Text) {
					pk[k] = to.Text
				}
			}
		}
		return pk, prefix, nil // RENAME INDEX/KEY, RENAME TO table
	case p.Accept("ALTER"):
		if p.Accept("INDEX") || p.Accept("KEY") || p.Accept("CHECK") || p.Accept("CONSTRAINT") {
			return pk, prefix, nil
		}
		p.Accept("COLUMN")
		p.Accept("IF", "EXISTS")
		i := n.index(p.Peek(0).Text)
		if i < 0 {
			return nil, nil, fmt.Errorf("column %s is not in the table", tablemap.QuoteIdent(p.Peek(0).Text))
		}
		p.I++
		key := strings.ToLower(n.T.Columns[i].Name)
		a := n.Attrs[key]
		switch {
		case p.Accept("SET", "INVISIBLE"):
			n.T.Columns[i].Visible = false
		case p.Accept("SET", "VISIBLE"):
			n.T.Columns[i].Visible = true
		case p.Accept("SET", "DEFAULT") && !p.Done():
			a.def = "DEFAULT " + sql[c[p.I].Start:c[len(c)-1].End]
		case p.Accept("DROP", "DEFAULT"):
			a.def = ""
		}
		n.Attrs[key] = a
		return pk, prefix, nil // SET DEFAULT, DROP DEFAULT
	case p.Accept("CONVERT", "TO"):
		p.Accept("CHARACTER", "SET")
		p.Accept("CHARSET")
		cs := p.Peek(0).Text
		coll := ""
		if p.Peek(1).Is("COLLATE") {
			coll = p.Peek(2).Text
		}
		id := collationOf(cs, coll, mariadb)
		if id == 0 {
			return nil, nil, fmt.Errorf("unknown character set %q", cs)
		}
		if err := n.convertTo(id, mariadb); err != nil {
			return nil, nil, err
		}
		return pk, prefix, nil
	case c[0].Is("DEFAULT") || c[0].Is("CHARACTER") || c[0].Is("CHARSET") || c[0].Is("COLLATE"):
		cs, coll := "", ""
		for k := 0; k+1 < len(c); k++ {
			switch {
			case c[k].Is("CHARSET") || (c[k].Is("SET") && k > 0 && c[k-1].Is("CHARACTER")):
				cs = c[k+1].Text
				if c[k+1].IsPunct('=') && k+2 < len(c) {
					cs = c[k+2].Text
				}
			case c[k].Is("COLLATE"):
				coll = c[k+1].Text
				if c[k+1].IsPunct('=') && k+2 < len(c) {
					coll = c[k+2].Text
				}
			}
		}
		if id := collationOf(cs, coll, mariadb); id != 0 {
			n.DefColl, n.Guessed = id, false
		}
		return pk, prefix, nil
	}
	return nil, nil, fmt.Errorf("clause %s not understood", first)
}

// addColumn applies ADD COLUMN def [FIRST|AFTER x].
func (n *Shape) addColumn(sql string, c []token, ifNotExists bool, pk []string, mariadb bool) ([]string, error) {
	def, pos := placement(c)
	if len(def) > 0 && n.index(def[0].Text) >= 0 {
		if ifNotExists {
			return pk, nil
		}
		return nil, fmt.Errorf("column %s exists", tablemap.QuoteIdent(def[0].Text))
	}
	d, err := n.parseColDef(sql, def, mariadb)
	if err != nil {
		return nil, err
	}
	at, err := n.at(pos, len(n.T.Columns))
	if err != nil {
		return nil, err
	}
	pk, _, err = n.insert(d, at, pk, nil)
	return pk, err
}

// insert puts a parsed column at index at.
func (n *Shape) insert(d *colDef, at int, pk []string, prefix []int) ([]string, []int, error) {
	at = min(max(at, 0), len(n.T.Columns))
	n.T.Columns = slices.Insert(n.T.Columns, at, d.col)
	if d.typeName != "" {
		n.TypeNames[strings.ToLower(d.col.Name)] = d.typeName
	}
	if n.Attrs == nil {
		n.Attrs = map[string]colAttrs{}
	}
	n.Attrs[strings.ToLower(d.col.Name)] = d.attrs
	if d.pk {
		pk, prefix = []string{d.col.Name}, nil
	}
	return pk, prefix, nil
}

// placement splits a trailing FIRST / AFTER col off a definition.
type place struct {
	first bool
	after string
}

func placement(def []token) ([]token, place) {
	k := len(def)
	switch {
	case k >= 2 && def[k-1].Is("FIRST"):
		return def[:k-1], place{first: true}
	case k >= 3 && def[k-2].Is("AFTER") && def[k-1].Ident():
		return def[:k-2], place{after: def[k-1].Text}
	}
	return def, place{}
}

// at returns where pl puts a column (dflt when it says nothing).
func (n *Shape) at(pl place, dflt int) (int, error) {
	switch {
	case pl.first:
		return 0, nil
	case pl.after != "":
		i := n.index(pl.after)
		if i < 0 {
			return 0, fmt.Errorf("AFTER %s: no such column", tablemap.QuoteIdent(pl.after))
		}
		return i + 1, nil
	}
	return dflt, nil
}

// convertTo applies CONVERT TO CHARACTER SET: every text column takes
// the collation, CHAR/VARCHAR keep their length in characters. MariaDB
// keeps the bytes of ENUM and SET labels and reads them in the new
// character set ('ü' in utf8mb4 becomes 'Ã¼' in latin1; the values are
// then matched by label, so a row's 'ü' becomes the error value): an
// error when those bytes are not text in the new character set, or
// binlogcdc cannot encode the old one.
func (n *Shape) convertTo(id uint32, mariadb bool) error {
	to, _ := charset.LookupFlavor(id, mariadb)
	for i := range n.T.Columns {
		c := &n.T.Columns[i]
		if c.Collation == 0 || c.Collation == 63 || c.Type == mysql.MYSQL_TYPE_JSON {
			continue
		}
		from, _ := charset.LookupFlavor(c.Collation, mariadb)
		if mariadb && from.Charset != to.Charset {
			for _, p := range []*[]string{&c.EnumValues, &c.SetValues} {
				labels := slices.Clone(*p)
				*p = labels
				for k, l := range labels {
					b, ok := EncodeText(l, c.Collation)
					var out []byte
					var err error
					if ok {
						out, err = charset.Decode(nil, id, b)
					}
					if !ok || err != nil || strings.ContainsRune(string(out), utf8.RuneError) {
						return fmt.Errorf("CONVERT TO CHARACTER SET %s keeps the bytes of the label '%s' of column %s, which binlogcdc cannot read in %[1]s", to.Charset, l, tablemap.QuoteIdent(c.Name))
					}
					labels[k] = string(out)
				}
			}
		}
		switch c.Type {
		case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
			if from.MaxLen > 0 {
				c.Length = c.Length / from.MaxLen * to.MaxLen
			}
		case mysql.MYSQL_TYPE_BLOB:
			// A TEXT type grows to hold as many characters (TEXT in latin1
			// becomes MEDIUMTEXT in utf8mb4); it never shrinks.
			if from.MaxLen > 0 && to.MaxLen > from.MaxLen {
				need := (1<<(8*c.Length) - 1) / from.MaxLen * to.MaxLen
				for c.Length < 4 && need > 1<<(8*c.Length)-1 {
					c.Length++
				}
			}
		}
		c.Collation = id
	}
	n.DefColl, n.Guessed = id, false
	return nil
}

// parseColDef reads a column definition with the table's default
// collation, noting where that default is a guess.
func (n *Shape) parseColDef(sql string, def []token, mariadb bool) (*colDef, error) {
	d, err := parseColDef(sql, def, n.DefColl, mariadb)
	if err == nil && d.attrs.Generated != "" && !n.Generated {
		return nil, fmt.Errorf("generated columns are not derived from DDL")
	}
	if err == nil && n.Guessed && !d.charsetGiven && d.col.Collation != 0 && d.col.Collation != 63 {
		name := "?"
		if c, ok := charset.LookupFlavor(n.DefColl, mariadb); ok {
			name = c.Name
		}
		n.Notes = append(n.Notes, fmt.Sprintf("column %s names no character set and the table's default is not in the binlogs: it is taken to be %s (the default of the DDL session's database, or of the server)",
			tablemap.QuoteIdent(d.col.Name), name))
	}
	return d, err
}

// keyParts reads "[name] [USING x] (col[(n)] [ASC|DESC], …)".
func keyParts(p *parser) ([]string, []int, error) {
	for !p.Done() && !p.Peek(0).IsPunct('(') {
		p.I++
	}
	if p.Done() {
		return nil, nil, fmt.Errorf("PRIMARY KEY without columns")
	}
	inner, ok := groupInner(p.Toks, p.I)
	if !ok {
		return nil, nil, fmt.Errorf("PRIMARY KEY: unclosed parenthesis")
	}
	var names []string
	var prefix []int
	for _, part := range splitTop(inner) {
		if len(part) == 0 || !part[0].Ident() {
			return nil, nil, fmt.Errorf("PRIMARY KEY part not understood")
		}
		names = append(names, part[0].Text)
		pre := 0
		if len(part) >= 3 && part[1].IsPunct('(') {
			pre, _ = strconv.Atoi(part[2].Text)
		}
		prefix = append(prefix, pre)
	}
	return names, prefix, nil
}

// groupInner returns the tokens inside the parenthesised group that
// opens at toks[i]; false when it is not closed.
func groupInner(toks []token, i int) ([]token, bool) {
	end := skipGroupAt(toks, i)
	if end <= i+1 || end > len(toks) || !toks[end-1].IsPunct(')') {
		return nil, false
	}
	return toks[i+1 : end-1], true
}
