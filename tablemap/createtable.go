package tablemap

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/internal/charset"
)

// CreateOptions change what CreateTable writes.
type CreateOptions struct {
	// DB and Name replace the table's database and name when not empty.
	DB, Name string
	// MariaDB names collations as MariaDB does (the flavors number a few
	// collations differently; see charset.LookupFlavor).
	MariaDB bool
}

// CreateTableNote is the comment CreateTable puts before the statement:
// what a TABLE_MAP cannot carry, so a rebuilt table lacks it.
const CreateTableNote = "-- Rebuilt by binlogcdc from the binlog's TABLE_MAP metadata (binlog_row_metadata=FULL).\n" +
	"-- The binlog does not carry, so this table lacks: column defaults, secondary indexes\n" +
	"-- and UNIQUE keys, AUTO_INCREMENT, comments, generated-column expressions (generated\n" +
	"-- columns become plain columns), foreign keys, CHECK constraints, display widths,\n" +
	"-- FLOAT(M,D) precision, ZEROFILL, and table options (engine, row format, partitioning).\n"

// CreateTable returns a CREATE TABLE statement (without a trailing ';')
// for t as its TABLE_MAP describes it, preceded by CreateTableNote:
//
//   - exact column types: CHAR/VARCHAR lengths in characters (the binlog's
//     byte length divided by the charset's maximum character length),
//     BINARY/VARBINARY(n), the TEXT and BLOB sizes from their pack length,
//     DECIMAL(p,s), fractional seconds, ENUM and SET labels, UNSIGNED,
//     BIT(n), YEAR, JSON (MySQL), GEOMETRY subtypes, VECTOR(n), MariaDB's
//     COMPRESSED attribute;
//   - NULL / NOT NULL, INVISIBLE, CHARACTER SET and COLLATE per column;
//   - the PRIMARY KEY, with prefix lengths.
//
// Identifiers are quoted with backticks. It fails for a column type it
// cannot write exactly (pre-5.0 DECIMAL, a VECTOR without its dimensions,
// an unknown collation).
func CreateTable(t *Table, opts CreateOptions) (string, error) {
	db, name := t.DB, t.Name
	if opts.DB != "" {
		db = opts.DB
	}
	if opts.Name != "" {
		name = opts.Name
	}
	if name == "" {
		return "", fmt.Errorf("tablemap: CreateTable: the table has no name")
	}
	if len(t.Columns) == 0 {
		return "", fmt.Errorf("tablemap: CreateTable %s.%s: no columns", db, name)
	}
	var b strings.Builder
	b.WriteString(CreateTableNote)
	b.WriteString("CREATE TABLE ")
	if db != "" {
		b.WriteString(QuoteIdent(db))
		b.WriteByte('.')
	}
	b.WriteString(QuoteIdent(name))
	b.WriteString(" (\n")
	for i := range t.Columns {
		c := &t.Columns[i]
		def, err := ColumnDefinition(c, opts.MariaDB)
		if err != nil {
			return "", fmt.Errorf("tablemap: CreateTable %s.%s: column %s: %w", db, name, QuoteIdent(c.Name), err)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(QuoteIdent(c.Name))
		b.WriteByte(' ')
		b.WriteString(def)
	}
	if len(t.PrimaryKey) > 0 {
		b.WriteString(",\n  PRIMARY KEY (")
		for k, idx := range t.PrimaryKey {
			if idx < 0 || idx >= len(t.Columns) {
				return "", fmt.Errorf("tablemap: CreateTable %s.%s: primary key column %d of %d", db, name, idx, len(t.Columns))
			}
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(QuoteIdent(t.Columns[idx].Name))
			if k < len(t.PrimaryKeyPrefix) && t.PrimaryKeyPrefix[k] > 0 {
				b.WriteString("(" + strconv.Itoa(t.PrimaryKeyPrefix[k]) + ")")
			}
		}
		b.WriteByte(')')
	}
	b.WriteString("\n)")
	return b.String(), nil
}

// QuoteIdent quotes an identifier with backticks, doubling embedded ones.
func QuoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// ColumnDefinition returns the column's definition as CREATE TABLE writes
// it after the name: "VARCHAR(20) CHARACTER SET latin1 COLLATE
// latin1_swedish_ci NOT NULL".
func ColumnDefinition(c *Column, mariadb bool) (string, error) {
	typ, text, err := columnType(c, mariadb)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(typ)
	if text {
		coll, ok := charset.LookupFlavor(c.Collation, mariadb)
		if !ok {
			return "", &charset.UnknownCollationError{ID: c.Collation}
		}
		b.WriteString(" CHARACTER SET " + coll.Charset + " COLLATE " + coll.Name)
	}
	if c.Nullable {
		b.WriteString(" NULL")
	} else {
		b.WriteString(" NOT NULL")
	}
	if !c.Visible {
		b.WriteString(" INVISIBLE")
	}
	return b.String(), nil
}

// columnType returns the type and whether it takes a character set.
func columnType(c *Column, mariadb bool) (typ string, text bool, err error) {
	unsigned := ""
	if c.Unsigned {
		unsigned = " UNSIGNED"
	}
	fsp := func(base string) string {
		if c.FSP > 0 {
			return base + "(" + strconv.Itoa(c.FSP) + ")"
		}
		return base
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		return "TINYINT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_SHORT:
		return "SMALLINT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_INT24:
		return "MEDIUMINT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_LONG:
		return "INT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_LONGLONG:
		return "BIGINT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_FLOAT:
		return "FLOAT" + unsigned, false, nil
	case mysql.MYSQL_TYPE_DOUBLE:
		return "DOUBLE" + unsigned, false, nil
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return fmt.Sprintf("DECIMAL(%d,%d)", c.Precision, c.Scale) + unsigned, false, nil
	case mysql.MYSQL_TYPE_YEAR:
		// MariaDB logs YEAR as unsigned; YEAR takes no UNSIGNED.
		return "YEAR", false, nil
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return "DATE", false, nil
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return fsp("TIME"), false, nil
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return fsp("DATETIME"), false, nil
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return fsp("TIMESTAMP"), false, nil
	case mysql.MYSQL_TYPE_BIT:
		return "BIT(" + strconv.Itoa(c.Bits) + ")", false, nil
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		labels, kw := c.EnumValues, "ENUM"
		if c.Type == mysql.MYSQL_TYPE_SET {
			labels, kw = c.SetValues, "SET"
		}
		if len(labels) == 0 {
			return "", false, fmt.Errorf("%s without labels in the metadata", kw)
		}
		var b strings.Builder
		b.WriteString(kw + "(")
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteLabel(l))
		}
		b.WriteByte(')')
		return b.String(), c.Collation != 0 && c.Collation != 63, nil
	case mysql.MYSQL_TYPE_STRING:
		if c.IsBinary() {
			return "BINARY(" + strconv.Itoa(c.Length) + ")", false, nil
		}
		n, err := chars(c, mariadb)
		return "CHAR(" + strconv.Itoa(n) + ")", true, err
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		if c.IsBinary() {
			return "VARBINARY(" + strconv.Itoa(c.Length) + ")" + compressed(c), false, nil
		}
		n, err := chars(c, mariadb)
		return "VARCHAR(" + strconv.Itoa(n) + ")" + compressed(c), true, err
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		size := map[int]string{1: "TINY", 2: "", 3: "MEDIUM", 4: "LONG"}
		prefix, ok := size[c.Length]
		if !ok {
			return "", false, fmt.Errorf("BLOB pack length %d is not 1..4", c.Length)
		}
		if c.IsBinary() {
			return prefix + "BLOB" + compressed(c), false, nil
		}
		return prefix + "TEXT" + compressed(c), true, nil
	case mysql.MYSQL_TYPE_JSON:
		return "JSON", false, nil
	case mysql.MYSQL_TYPE_GEOMETRY:
		names := []string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}
		if c.GeometryType < 0 || c.GeometryType >= len(names) {
			return "", false, fmt.Errorf("unknown geometry type %d", c.GeometryType)
		}
		return names[c.GeometryType], false, nil
	case mysql.MYSQL_TYPE_VECTOR:
		if c.Dimensions <= 0 {
			return "", false, fmt.Errorf("VECTOR without its dimensions in the metadata")
		}
		return "VECTOR(" + strconv.Itoa(c.Dimensions) + ")", false, nil
	case mysql.MYSQL_TYPE_DECIMAL:
		return "", false, fmt.Errorf("pre-MySQL 5.0 DECIMAL: its precision is not in the binlog")
	case TypeBlobCompressed, TypeVarcharCompressed:
		// FromEvent turns these into VARCHAR/BLOB with Compressed set.
		return "", false, fmt.Errorf("MariaDB COMPRESSED column with its raw binlog type %d", c.Type)
	}
	return "", false, fmt.Errorf("binlog column type %d cannot be written as a column definition", c.Type)
}

// compressed is MariaDB's attribute for a COMPRESSED column, or "".
func compressed(c *Column) string {
	if c.Compressed {
		return " COMPRESSED"
	}
	return ""
}

// chars converts a CHAR/VARCHAR byte length to characters.
func chars(c *Column, mariadb bool) (int, error) {
	coll, ok := charset.LookupFlavor(c.Collation, mariadb)
	if !ok {
		return 0, &charset.UnknownCollationError{ID: c.Collation}
	}
	if coll.MaxLen <= 1 {
		return c.Length, nil
	}
	return (c.Length + coll.MaxLen - 1) / coll.MaxLen, nil
}

// quoteLabel writes an ENUM or SET label as a string literal, the way
// SHOW CREATE TABLE does.
func quoteLabel(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
