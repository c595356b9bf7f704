package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// This file builds a table's tablemap.Table, the schema a TABLE_MAP with
// binlog_row_metadata=FULL would carry, from the server:
//
//   - the result-set metadata of "SELECT <every column> … LIMIT 0" gives
//     each column's name, type, UNSIGNED, collation id (the session has
//     character_set_results NULL, so it is the column's own), fractional
//     digits, scale and byte length;
//   - SHOW FULL COLUMNS gives the column list (with INVISIBLE columns,
//     which SELECT * leaves out but the binlog carries) and what the
//     result-set metadata cannot: ENUM/SET labels, DECIMAL precision,
//     GEOMETRY subtypes, MariaDB's COMPRESSED attribute and its INET4,
//     INET6 and UUID types (logged as BINARY(4)/BINARY(16));
//   - SHOW INDEX gives the primary key, with prefix lengths.
//
// Each column also gets a select expression: the form the snapshot reads
// it in, chosen so that it converts to exactly the bytes the binlog holds
// (see values.go).

// column is one column as the snapshot reads it.
type column struct {
	expr string // the select expression
	kind readKind
}

type readKind uint8

const (
	readText      readKind = iota // the value's text (temporal, DECIMAL, JSON)
	readInt                       // an integer
	readFloat                     // FLOAT, read as DOUBLE
	readDouble                    // DOUBLE
	readCell                      // raw bytes, decoded as a binlog cell (strings, BIT, GEOMETRY)
	readIndex                     // ENUM/SET: col+0, decoded as a binlog cell
	readTimestamp                 // TIMESTAMP text in UTC
	readUTF8                      // CHAR, VARCHAR, TEXT in a UTF-8 (or ASCII) charset: the text as it is when valid
	readEnumLabel                 // ENUM whose labels name its members (labelsName): the label, looked up
)

// tableSchema is a table as the snapshot reads it.
type tableSchema struct {
	table     *tablemap.Table
	cols      []column
	showTypes []string // each column's type as SHOW COLUMNS gives it
}

type showColumn struct {
	name, typ, collation, null, key, extra string
}

func loadSchema(c *client.Conn, db, name string, mariadb bool) (*tableSchema, error) {
	qname := tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
	// SHOW statements and labels as UTF-8 text.
	if _, err := c.Execute("SET SESSION character_set_results = utf8mb4"); err != nil {
		return nil, err
	}
	r, err := c.Execute("SHOW FULL COLUMNS FROM " + qname)
	if err != nil {
		return nil, fmt.Errorf("snapshot: SHOW FULL COLUMNS FROM %s: %w", qname, err)
	}
	var show []showColumn
	for i := range r.Values {
		s := func(col string) string { v, _ := r.GetStringByName(i, col); return v }
		show = append(show, showColumn{s("Field"), s("Type"), s("Collation"), s("Null"), s("Key"), s("Extra")})
	}
	if len(show) == 0 {
		return nil, fmt.Errorf("snapshot: %s has no columns", qname)
	}
	t := &tablemap.Table{DB: db, Name: name}
	ki, err := c.Execute("SHOW INDEX FROM " + qname)
	if err != nil {
		return nil, fmt.Errorf("snapshot: SHOW INDEX FROM %s: %w", qname, err)
	}
	type part struct {
		seq    int
		col    string
		prefix int
	}
	// The primary key as the server's TABLE_MAP names it: PRIMARY, or
	// without one the first UNIQUE key whose columns are all NOT NULL and
	// whole (the server's TABLE_SHARE::primary_key; SHOW INDEX lists the
	// keys in the server's order).
	notNull := map[string]bool{}
	for _, sc := range show {
		notNull[strings.ToLower(sc.name)] = sc.null != "YES"
	}
	keys := map[string][]part{}
	var order []string
	bad := map[string]bool{}
	for i := range ki.Values {
		k, _ := ki.GetStringByName(i, "Key_name")
		nonUnique, _ := ki.GetIntByName(i, "Non_unique")
		seq, _ := ki.GetIntByName(i, "Seq_in_index")
		col, _ := ki.GetStringByName(i, "Column_name")
		sub, _ := ki.GetIntByName(i, "Sub_part") // NULL: the whole column
		if _, ok := keys[k]; !ok {
			order = append(order, k)
		}
		keys[k] = append(keys[k], part{int(seq), col, int(sub)})
		if k != "PRIMARY" && (nonUnique != 0 || sub != 0 || !notNull[strings.ToLower(col)]) {
			bad[k] = true
		}
	}
	pk := keys["PRIMARY"]
	for _, k := range order {
		if pk != nil {
			break
		}
		if !bad[k] {
			pk = keys[k]
		}
	}

	if _, err := c.Execute("SET SESSION character_set_results = NULL"); err != nil {
		return nil, err
	}
	list := make([]string, len(show))
	for i, sc := range show {
		list[i] = tablemap.QuoteIdent(sc.name)
	}
	meta, err := c.Execute("SELECT " + strings.Join(list, ", ") + " FROM " + qname + " LIMIT 0")
	if err != nil {
		return nil, fmt.Errorf("snapshot: reading %s: %w", qname, err)
	}
	if len(meta.Fields) != len(show) {
		return nil, fmt.Errorf("snapshot: %s: %d columns in SHOW COLUMNS, %d in a SELECT of them", qname, len(show), len(meta.Fields))
	}
	ts := &tableSchema{table: t}
	for i, f := range meta.Fields {
		col, rc, err := buildColumn(f, show[i], mariadb)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %s column %s: %w", qname, tablemap.QuoteIdent(show[i].name), err)
		}
		t.Columns = append(t.Columns, col)
		ts.cols = append(ts.cols, rc)
		ts.showTypes = append(ts.showTypes, show[i].typ)
	}
	for seq := 1; seq <= len(pk); seq++ {
		for _, p := range pk {
			if p.seq != seq {
				continue
			}
			for j := range t.Columns {
				if strings.EqualFold(t.Columns[j].Name, p.col) {
					t.PrimaryKey = append(t.PrimaryKey, j)
					t.PrimaryKeyPrefix = append(t.PrimaryKeyPrefix, p.prefix)
					t.PKNames = append(t.PKNames, t.Columns[j].Name)
				}
			}
		}
	}
	if len(t.PrimaryKey) != len(pk) {
		return nil, fmt.Errorf("snapshot: %s: the primary key names columns SHOW COLUMNS does not list", qname)
	}
	return ts, nil
}

// buildColumn makes the TABLE_MAP column and the way to read it.
func buildColumn(f *mysql.Field, sc showColumn, mariadb bool) (tablemap.Column, column, error) {
	name := sc.name
	q := tablemap.QuoteIdent(name)
	typ := strings.ToLower(sc.typ)
	base := typ
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	c := tablemap.Column{
		Name:      name,
		Unsigned:  f.Flag&mysql.UNSIGNED_FLAG != 0,
		Nullable:  sc.null == "YES",
		Visible:   true,
		Collation: uint32(f.Charset),
	}
	rc := column{expr: q, kind: readCell}
	length := int(f.ColumnLength)
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24,
		mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR:
		c.Type, rc.kind = f.Type, readInt
		c.Collation = 0
	case mysql.MYSQL_TYPE_FLOAT:
		// FLOAT's text has 6 digits; as DOUBLE it has every bit.
		c.Type, rc.kind, rc.expr = f.Type, readFloat, "CAST("+q+" AS DOUBLE)"
		c.Meta, c.Collation = 4, 0
	case mysql.MYSQL_TYPE_DOUBLE:
		c.Type, rc.kind = f.Type, readDouble
		c.Meta, c.Collation = 8, 0
	case mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL:
		p, s, ok := twoInts(typ)
		if !ok {
			return c, rc, fmt.Errorf("cannot read the precision of %q", sc.typ)
		}
		c.Type, c.Precision, c.Scale, rc.kind = mysql.MYSQL_TYPE_NEWDECIMAL, p, s, readText
		c.Collation = 0
	case mysql.MYSQL_TYPE_BIT:
		c.Type, c.Bits, c.Collation = f.Type, length, 0
		c.Meta = uint16(length/8)<<8 | uint16(length%8)
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		c.Type, rc.kind, c.Collation = mysql.MYSQL_TYPE_DATE, readText, 0
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		c.Type, c.FSP, rc.kind, c.Collation = mysql.MYSQL_TYPE_DATETIME2, fsp(f), readText, 0
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		c.Type, c.FSP, rc.kind, c.Collation = mysql.MYSQL_TYPE_TIMESTAMP2, fsp(f), readTimestamp, 0
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		c.Type, c.FSP, rc.kind, c.Collation = mysql.MYSQL_TYPE_TIME2, fsp(f), readText, 0
	case mysql.MYSQL_TYPE_JSON: // MySQL's JSON: the server's text of it
		c.Type, c.Length, rc.kind = f.Type, 4, readText
		c.Collation = 0
	case mysql.MYSQL_TYPE_GEOMETRY:
		c.Type, c.Length, c.Collation = f.Type, 4, 0
		c.GeometryType = geometryType(base)
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		c.Type, c.Length = mysql.MYSQL_TYPE_BLOB, blobPack(length)
		c.Compressed = strings.Contains(typ, "compressed")
		if base == "json" && !mariadb {
			c.Type, rc.kind = mysql.MYSQL_TYPE_JSON, readText
		}
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		c.Type, c.Length = mysql.MYSQL_TYPE_VARCHAR, length
		c.Compressed = strings.Contains(typ, "compressed")
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		switch {
		case base == "enum" || f.Flag&mysql.ENUM_FLAG != 0:
			labels, err := parseLabels(sc.typ)
			if err != nil {
				return c, rc, err
			}
			c.Type, c.EnumValues, rc.kind, rc.expr = mysql.MYSQL_TYPE_ENUM, labels, readIndex, q+"+0"
			c.Length = 1
			if len(labels) > 255 {
				c.Length = 2
			}
			if labelsName(labels, c.Collation) {
				rc.kind, rc.expr = readEnumLabel, q
			}
		case base == "set" || f.Flag&mysql.SET_FLAG != 0:
			labels, err := parseLabels(sc.typ)
			if err != nil {
				return c, rc, err
			}
			c.Type, c.SetValues, rc.kind, rc.expr = mysql.MYSQL_TYPE_SET, labels, readIndex, q+"+0"
			c.Length = (len(labels) + 7) / 8
			if c.Length > 4 {
				c.Length = 8
			}
		case base == "inet6" || base == "uuid":
			// The binlog holds the 16 bytes of the value (for a UUID in
			// RFC 4122 order, as CAST gives them).
			c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_STRING, 16, 63
			rc.expr = "CAST(" + q + " AS BINARY(16))"
		case base == "inet4":
			c.Type, c.Length, c.Collation = mysql.MYSQL_TYPE_STRING, 4, 63
			rc.expr = "CAST(" + q + " AS BINARY(4))"
		default:
			c.Type, c.Length = mysql.MYSQL_TYPE_STRING, length
		}
	default:
		return c, rc, fmt.Errorf("type %q (result type %d) is not supported", sc.typ, f.Type)
	}
	if c.Type == mysql.MYSQL_TYPE_ENUM || c.Type == mysql.MYSQL_TYPE_SET {
		c.Meta = uint16(c.Type)<<8 | uint16(c.Length)
	}
	if strings.Contains(strings.ToUpper(sc.extra), "INVISIBLE") && !mariadb {
		c.Visible = false
	}
	if rc.kind == readCell && plainText(&c) {
		rc.kind = readUTF8
	}
	return c, rc, nil
}

// labelsName reports whether an ENUM's members are told apart by the
// label the server sends for them (the column read as it is, not as
// col+0, which costs the server an addition and a number's text per
// row): its charset is UTF-8 or ASCII (the label's bytes are those SHOW
// COLUMNS gives), and no label is empty or the same bytes as another
// (the error value, index 0, is sent as ”). Up to 32 members: the
// converter looks the label up among them in turn.
func labelsName(labels []string, collation uint32) bool {
	if !charset.IsUTF8Compatible(collation) || len(labels) > 32 {
		return false
	}
	seen := make(map[string]bool, len(labels))
	for _, l := range labels {
		if l == "" || seen[l] {
			return false
		}
		seen[l] = true
	}
	return true
}

// plainText: the column's binlog value is its text when that is valid
// UTF-8 (rowevent's decodeString: no padding, no conversion).
func plainText(c *tablemap.Column) bool {
	switch c.Type {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BLOB:
		return !c.Compressed && !c.IsBinary() && charset.IsUTF8Compatible(c.Collation)
	}
	return false
}

func fsp(f *mysql.Field) int {
	if f.Decimal > 6 {
		return 0
	}
	return int(f.Decimal)
}

func blobPack(length int) int {
	switch {
	case length <= 0xff:
		return 1
	case length <= 0xffff:
		return 2
	case length <= 0xffffff:
		return 3
	}
	return 4
}

func geometryType(base string) int {
	switch base {
	case "point":
		return 1
	case "linestring":
		return 2
	case "polygon":
		return 3
	case "multipoint":
		return 4
	case "multilinestring":
		return 5
	case "multipolygon":
		return 6
	case "geometrycollection", "geomcollection":
		return 7
	}
	return 0
}

// twoInts reads "decimal(10,2)".
func twoInts(typ string) (int, int, bool) {
	i, j := strings.IndexByte(typ, '('), strings.IndexByte(typ, ')')
	if i < 0 || j < i {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(typ[i+1:j], ",")
	if !ok {
		b = "0"
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(a))
	s, err2 := strconv.Atoi(strings.TrimSpace(b))
	return p, s, err1 == nil && err2 == nil
}

// parseLabels reads the labels of "enum('a','b')" or "set(…)".
func parseLabels(typ string) ([]string, error) {
	toks := sqllex.Lex(typ)
	var labels []string
	for _, t := range toks {
		if t.Kind == sqllex.String {
			labels = append(labels, t.Text)
		}
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("cannot read the labels of %q", typ)
	}
	return labels, nil
}
