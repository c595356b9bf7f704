package schemahist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// This file reads a column definition of CREATE TABLE or ALTER TABLE
// ("name type [attributes]") into a tablemap.Column: the column as its
// TABLE_MAP would describe it, so that the schema after an ALTER TABLE
// that no row change followed is known. What it cannot read exactly it
// refuses, with the reason.

// colDef is a column definition read from DDL text.
type colDef struct {
	col tablemap.Column
	// typeName is the type as the statement wrote it when the TABLE_MAP
	// cannot name it (MariaDB UUID, INET4, INET6): "" otherwise.
	typeName string
	pk       bool // an inline PRIMARY KEY
	// charsetGiven: the definition names its character set or collation
	// (else the table's default applies).
	charsetGiven bool
	// text is the definition's source text after the name.
	text string
	// attrs are its DEFAULT, ON UPDATE and COMMENT clauses.
	attrs colAttrs
}

// colAttrs are the clauses of a column definition a TABLE_MAP lacks, as
// the statement wrote them ("DEFAULT 'x'", "ON UPDATE
// CURRENT_TIMESTAMP", "COMMENT 'y'"); "" when absent. Generated is
// "VIRTUAL" or "STORED" (MariaDB's PERSISTENT) for a generated column.
type colAttrs struct {
	def, onUpdate, comment string
	Generated              string
	autoInc                bool // AUTO_INCREMENT
	// declared is the type as declared (change.ColumnDef.Declared).
	declared string
	// json: MariaDB's JSON, a LONGTEXT declared JSON or checked by
	// CHECK (json_valid(column)), which is how SHOW CREATE TABLE shows a
	// JSON column (tablemap.Column.JSON).
	json bool
}

func (a colAttrs) String() string {
	var out []string
	for _, s := range []string{a.def, a.onUpdate, a.comment} {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// parseColDef reads "name type [attributes]" from def (tokens of sql).
// defColl is the table's default collation (0: unknown); mariadb picks
// the flavor's collation ids.
func parseColDef(sql string, def []token, defColl uint32, mariadb bool) (*colDef, error) {
	if len(def) < 2 || !def[0].Ident() {
		return nil, fmt.Errorf("not a column definition")
	}
	d := &colDef{col: tablemap.Column{Name: def[0].Text, Nullable: true, Visible: true}}
	if def[len(def)-1].End <= len(sql) && def[1].Start <= def[len(def)-1].End {
		d.text = sql[def[1].Start:def[len(def)-1].End]
	}
	c := &d.col
	i := 1
	word := strings.ToUpper(def[i].Text)
	if def[i].Kind != tWord {
		return nil, fmt.Errorf("no type for column %s", tablemap.QuoteIdent(c.Name))
	}
	i++
	// args reads a parenthesised list of numbers or strings.
	args := func() ([]token, bool) {
		if i >= len(def) || !def[i].IsPunct('(') {
			return nil, false
		}
		var out []token
		for i++; i < len(def) && !def[i].IsPunct(')'); i++ {
			if !def[i].IsPunct(',') {
				out = append(out, def[i])
			}
		}
		i++
		return out, true
	}
	num := func(a []token, k, dflt int) int {
		if k < len(a) {
			if n, err := strconv.Atoi(a[k].Text); err == nil {
				return n
			}
		}
		return dflt
	}
	text := false // takes a character set
	chars := 0    // CHAR/VARCHAR length in characters; TEXT(n) byte bound
	textKind := ""
	switch word {
	case "NATIONAL":
		if i < len(def) {
			word = "N" + strings.ToUpper(def[i].Text)
			i++
		}
	case "CHARACTER", "CHAR":
		if i < len(def) && def[i].Is("VARYING") {
			word = "VARCHAR"
			i++
		}
	case "LONG":
		if i < len(def) && (def[i].Is("VARCHAR") || def[i].Is("VARBINARY")) {
			word = "LONG" + strings.ToUpper(def[i].Text)
			i++
		} else {
			word = "MEDIUMTEXT"
		}
	case "DOUBLE":
		if i < len(def) && def[i].Is("PRECISION") {
			i++
		}
	}
	setColl := func(cs string) { c.Collation = collationOf(cs, "", mariadb) }
	switch word {
	case "TINYINT", "INT1", "BOOL", "BOOLEAN":
		c.Type = mysql.MYSQL_TYPE_TINY
		args() // the display width
	case "SMALLINT", "INT2":
		c.Type = mysql.MYSQL_TYPE_SHORT
		args()
	case "MEDIUMINT", "INT3", "MIDDLEINT":
		c.Type = mysql.MYSQL_TYPE_INT24
		args()
	case "INT", "INTEGER", "INT4":
		c.Type = mysql.MYSQL_TYPE_LONG
		args()
	case "BIGINT", "INT8":
		c.Type = mysql.MYSQL_TYPE_LONGLONG
		args()
	case "SERIAL":
		c.Type, c.Unsigned, c.Nullable = mysql.MYSQL_TYPE_LONGLONG, true, false
	case "FLOAT", "FLOAT4":
		a, _ := args()
		switch {
		case len(a) == 2:
			return nil, fmt.Errorf("FLOAT(M,D) is not reproduced")
		case len(a) == 1 && num(a, 0, 0) > 24:
			c.Type, c.Length = mysql.MYSQL_TYPE_DOUBLE, 8
		default:
			c.Type, c.Length = mysql.MYSQL_TYPE_FLOAT, 4
		}
	case "DOUBLE", "REAL", "FLOAT8":
		if a, _ := args(); len(a) == 2 {
			return nil, fmt.Errorf("DOUBLE(M,D) is not reproduced")
		}
		c.Type, c.Length = mysql.MYSQL_TYPE_DOUBLE, 8
	case "DECIMAL", "DEC", "NUMERIC", "FIXED", "NUMBER":
		a, _ := args()
		c.Type, c.Precision, c.Scale = mysql.MYSQL_TYPE_NEWDECIMAL, num(a, 0, 10), num(a, 1, 0)
	case "DATE":
		c.Type = mysql.MYSQL_TYPE_DATE
	case "TIME", "DATETIME", "TIMESTAMP":
		a, _ := args()
		c.FSP = num(a, 0, 0)
		c.Type = map[string]byte{"TIME": mysql.MYSQL_TYPE_TIME2, "DATETIME": mysql.MYSQL_TYPE_DATETIME2, "TIMESTAMP": mysql.MYSQL_TYPE_TIMESTAMP2}[word]
		c.Meta = uint16(c.FSP)
	case "YEAR":
		args()
		c.Type, c.Unsigned = mysql.MYSQL_TYPE_YEAR, true
	case "BIT":
		a, _ := args()
		c.Type, c.Bits = mysql.MYSQL_TYPE_BIT, num(a, 0, 1)
	case "CHAR", "CHARACTER", "NCHAR", "NCHARACTER":
		a, _ := args()
		c.Type, chars, text, textKind = mysql.MYSQL_TYPE_STRING, num(a, 0, 1), true, "CHAR"
		if word[0] == 'N' {
			setColl("utf8mb3")
		}
	case "VARCHAR", "NVARCHAR", "VARCHAR2", "NCHARVARYING", "NVARCHAR2":
		a, ok := args()
		if !ok {
			return nil, fmt.Errorf("VARCHAR without a length")
		}
		c.Type, chars, text, textKind = mysql.MYSQL_TYPE_VARCHAR, num(a, 0, 0), true, "VARCHAR"
		if word[0] == 'N' {
			setColl("utf8mb3")
		}
	case "BINARY":
		a, _ := args()
		c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_STRING, num(a, 0, 1), 63
	case "VARBINARY":
		a, ok := args()
		if !ok {
			return nil, fmt.Errorf("VARBINARY without a length")
		}
		c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_VARCHAR, num(a, 0, 0), 63
	case "UUID", "INET6":
		c.Type, c.Length, c.Collation, d.typeName = mysql.MYSQL_TYPE_STRING, 16, 63, word
	case "INET4":
		c.Type, c.Length, c.Collation, d.typeName = mysql.MYSQL_TYPE_STRING, 4, 63, word
	case "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "LONGVARCHAR":
		a, _ := args()
		c.Type, text, textKind = mysql.MYSQL_TYPE_BLOB, true, word
		chars = num(a, 0, -1)
	case "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "LONGVARBINARY":
		a, _ := args()
		c.Type, c.Collation = mysql.MYSQL_TYPE_BLOB, 63
		c.Length = blobPack(word, num(a, 0, -1), 1)
	case "JSON":
		// MariaDB: LONGTEXT utf8mb4_bin with a JSON_VALID check.
		if !mariadb {
			return nil, fmt.Errorf("MySQL JSON columns are not derived from DDL")
		}
		c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_BLOB, 4, collationOf("utf8mb4", "utf8mb4_bin", mariadb)
		d.charsetGiven = true
		d.attrs.json = true
	case "ENUM", "SET":
		a, _ := args()
		var labels []string
		for _, t := range a {
			if t.Kind != tString {
				return nil, fmt.Errorf("%s label is not a string", word)
			}
			labels = append(labels, t.Text)
		}
		text = true
		if word == "ENUM" {
			c.Type, c.EnumValues = mysql.MYSQL_TYPE_ENUM, labels
			c.Length = 1
			if len(labels) > 255 {
				c.Length = 2
			}
		} else {
			c.Type, c.SetValues = mysql.MYSQL_TYPE_SET, labels
			c.Length = (len(labels) + 7) / 8
			if c.Length > 4 {
				c.Length = 8
			}
		}
	case "GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION":
		c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_GEOMETRY, 4, 63
		c.GeometryType = slices.Index([]string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}, word)
	default:
		return nil, fmt.Errorf("type %s is not derived from DDL", word)
	}
	typeToks := def[1:i]
	// Attributes.
	csName, collName := "", ""
	binaryAttr, zerofill, signedness := false, false, ""
	for ; i < len(def); i++ {
		t := def[i]
		switch {
		case t.Is("AUTO_INCREMENT"):
			d.attrs.autoInc = true
		case t.Is("UNSIGNED"):
			c.Unsigned, signedness = true, "UNSIGNED"
		case t.Is("ZEROFILL"):
			c.Unsigned, zerofill = true, true
		case t.Is("SIGNED"):
			signedness = "SIGNED"
		case t.Is("NOT") && i+1 < len(def) && def[i+1].Is("NULL"):
			c.Nullable = false
			i++
		case t.Is("NULL"):
			c.Nullable = true
		case t.Is("CHARACTER") && i+2 < len(def) && def[i+1].Is("SET"):
			csName = def[i+2].Text
			i += 2
		case t.Is("CHARSET") && i+1 < len(def):
			csName = def[i+1].Text
			i++
		case t.Is("COLLATE") && i+1 < len(def):
			collName = def[i+1].Text
			i++
		case t.Is("BINARY") && text:
			binaryAttr = true
		case t.Is("BYTE") && text && textKind == "CHAR":
			c.Collation, text = 63, false
			c.Length = chars
		case t.Is("ASCII"):
			csName = "latin1"
		case t.Is("UNICODE"):
			csName = "ucs2"
		case t.Is("PRIMARY") && i+1 < len(def) && def[i+1].Is("KEY"):
			d.pk = true
			c.Nullable = false
			i++
		case t.Is("INVISIBLE"):
			c.Visible = false
		case t.Is("COMPRESSED"):
			c.Compressed = true
			if i+2 < len(def) && def[i+1].IsPunct('=') { // COMPRESSED=zlib
				i += 2
			}
		case t.Is("AS") || t.Is("GENERATED"):
			// [GENERATED ALWAYS] AS (expr) [VIRTUAL|STORED|PERSISTENT]
			if t.Is("GENERATED") {
				i++
				if i < len(def) && def[i].Is("ALWAYS") {
					i++
				}
				if i >= len(def) || !def[i].Is("AS") {
					return nil, fmt.Errorf("GENERATED without AS in column %s", tablemap.QuoteIdent(c.Name))
				}
			}
			i++
			if i >= len(def) || !def[i].IsPunct('(') {
				return nil, fmt.Errorf("generated column %s without a parenthesised expression", tablemap.QuoteIdent(c.Name))
			}
			i = skipGroupAt(def, i) - 1
			d.attrs.Generated = "VIRTUAL"
			if i+1 < len(def) && (def[i+1].Is("STORED") || def[i+1].Is("PERSISTENT")) {
				d.attrs.Generated = "STORED"
				i++
			} else if i+1 < len(def) && def[i+1].Is("VIRTUAL") {
				i++
			}
		case t.Is("DEFAULT"), t.Is("COMMENT"), t.Is("ON"), t.Is("CHECK"), t.Is("REFERENCES"):
			// Their operand: a literal, a word (a function call), or a
			// parenthesised expression.
			start := i
			onUpdate := t.Is("ON") && i+1 < len(def) && def[i+1].Is("UPDATE")
			if onUpdate {
				i++
			}
			if i+1 < len(def) {
				i++
				if (def[i].IsPunct('-') || def[i].IsPunct('+')) && i+1 < len(def) {
					i++
				}
				switch {
				case def[i].IsPunct('('):
					i = skipGroupAt(def, i) - 1
				case i+1 < len(def) && def[i+1].IsPunct('('): // CURRENT_TIMESTAMP(6), a function
					i = skipGroupAt(def, i+1) - 1
				}
			}
			text := sql[def[start].Start:def[min(i, len(def)-1)].End]
			switch {
			case t.Is("DEFAULT"):
				d.attrs.def = text
			case t.Is("COMMENT"):
				d.attrs.comment = text
			case onUpdate:
				d.attrs.onUpdate = text
			case t.Is("CHECK") && c.Type == mysql.MYSQL_TYPE_BLOB && isJSONValidCheck(text, c.Name):
				d.attrs.json = true
			}
		case t.IsPunct('('):
			i = skipGroupAt(def, i) - 1
		}
	}
	if text {
		switch {
		case csName != "" || collName != "":
			d.charsetGiven = true
			c.Collation = collationOf(csName, collName, mariadb)
			if c.Collation == 0 {
				return nil, fmt.Errorf("unknown character set or collation %q %q", csName, collName)
			}
		case c.Collation != 0: // NCHAR
			d.charsetGiven = true
		default:
			c.Collation = defColl
		}
		if binaryAttr {
			if cs, ok := charset.LookupFlavor(c.Collation, mariadb); ok {
				c.Collation = collationOf(cs.Charset, cs.Charset+"_bin", mariadb)
			}
		}
		if c.Collation == 0 {
			return nil, fmt.Errorf("the character set of column %s is the table's default, which is unknown", tablemap.QuoteIdent(c.Name))
		}
		if err := setTextLength(c, textKind, chars, mariadb); err != nil {
			return nil, err
		}
	}
	if c.Type != mysql.MYSQL_TYPE_ENUM && c.Type != mysql.MYSQL_TYPE_SET && d.typeName == "" {
		d.attrs.declared = declaredType(typeToks, signedness, zerofill, binaryAttr)
	}
	return d, nil
}

// declaredType is a column's type as declared: its words as written,
// its arguments, then its options as MySQL applies them (ZEROFILL
// implies UNSIGNED; of SIGNED and UNSIGNED the last counts):
// "integer(11) UNSIGNED ZEROFILL", "double precision(20,2)", "char(60) BINARY".
func declaredType(toks []token, signedness string, zerofill, binary bool) string {
	var b strings.Builder
	for k, t := range toks {
		glue := k == 0 || t.IsPunct('(') || t.IsPunct(')') || t.IsPunct(',') || toks[k-1].IsPunct('(') || toks[k-1].IsPunct(',')
		if !glue {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	switch {
	case zerofill:
		b.WriteString(" UNSIGNED ZEROFILL")
	case signedness != "":
		b.WriteString(" " + signedness)
	}
	if binary {
		b.WriteString(" BINARY")
	}
	return b.String()
}

// setTextLength sets the binlog byte length of a text column of n
// characters in its collation (TEXT types: their pack length).
func setTextLength(c *tablemap.Column, kind string, n int, mariadb bool) error {
	if kind == "" {
		return nil
	}
	cs, ok := charset.LookupFlavor(c.Collation, mariadb)
	if !ok {
		return fmt.Errorf("unknown collation %d", c.Collation)
	}
	switch kind {
	case "CHAR", "VARCHAR":
		c.Length = n * cs.MaxLen
	default:
		c.Length = blobPack(kind, n, cs.MaxLen)
	}
	return nil
}

// blobPack is the pack length of a TEXT/BLOB type (n: TEXT(n)'s bound in
// characters, -1 when none).
func blobPack(kind string, n, maxLen int) int {
	switch kind {
	case "TINYTEXT", "TINYBLOB":
		return 1
	case "MEDIUMTEXT", "MEDIUMBLOB", "LONGVARCHAR", "LONGVARBINARY":
		return 3
	case "LONGTEXT", "LONGBLOB":
		return 4
	}
	if n < 0 {
		return 2
	}
	switch b := n * maxLen; {
	case b < 256:
		return 1
	case b < 65536:
		return 2
	case b < 1<<24:
		return 3
	}
	return 4
}

func skipGroupAt(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].IsPunct('(') {
			depth++
		} else if toks[i].IsPunct(')') {
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

var collIndex struct {
	once        sync.Once
	byName      [2]map[string]uint32 // [mariadb] collation name → id
	defaultOfCS [2]map[string]uint32 // [mariadb] charset → default collation id
}

// collationOf returns the id of the collation coll (or, without one, of
// the charset cs's default collation) on the flavor; 0 when unknown.
func collationOf(cs, coll string, mariadb bool) uint32 {
	collIndex.once.Do(func() {
		for f := 0; f < 2; f++ {
			collIndex.byName[f], collIndex.defaultOfCS[f] = map[string]uint32{}, map[string]uint32{}
			for id := uint32(1); id < 4096; id++ {
				c, ok := charset.LookupFlavor(id, f == 1)
				if !ok || c.ID != id {
					continue
				}
				collIndex.byName[f][strings.ToLower(c.Name)] = id
				// The flavor's own default has the lower id (ids the flavor
				// lacks fall back to the other's entries, defaults included).
				if cs := strings.ToLower(c.Charset); c.Default && collIndex.defaultOfCS[f][cs] == 0 {
					collIndex.defaultOfCS[f][cs] = id
				}
			}
		}
	})
	f := 0
	if mariadb {
		f = 1
	}
	cs, coll = strings.ToLower(cs), strings.ToLower(coll)
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	if strings.HasPrefix(coll, "utf8_") {
		coll = "utf8mb3_" + coll[5:]
	}
	if coll != "" {
		return collIndex.byName[f][coll]
	}
	if cs == "binary" {
		return 63
	}
	return collIndex.defaultOfCS[f][cs]
}

// isJSONValidCheck reports whether check, a column's CHECK clause, is
// CHECK (json_valid(name)): MariaDB's JSON type, as SHOW CREATE TABLE
// writes it ("`j` longtext … CHECK (json_valid(`j`))").
func isJSONValidCheck(check, name string) bool {
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '`' {
			return -1
		}
		return r
	}, check)
	rest, ok := strings.CutPrefix(strings.ToLower(s), "check(json_valid(")
	return ok && strings.EqualFold(rest, strings.ReplaceAll(name, " ", "")+"))")
}
