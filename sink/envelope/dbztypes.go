package envelope

// A column's typeName, jdbcType, length and scale as Debezium's MySQL DDL
// parser (3.6.1: MySqlAntlrDdlParser's data types, DataTypeResolver,
// ColumnDefinitionParserListener) gives them from the type as declared
// (change.ColumnDef.Declared), which the schema history keeps: the name
// as written (INTEGER, DEC, BOOL, DOUBLE PRECISION, CHARACTER VARYING),
// the java.sql.Types code of that name, the declared length and scale
// (defaults: DECIMAL 10,0, BIT 1, NCHAR 1), then UNSIGNED, SIGNED,
// ZEROFILL and BINARY as declared; SERIAL is BIGINT UNSIGNED.

import (
	"math"
	"strconv"
	"strings"
)

// dbzDeclared is what Debezium's parser gives a column declared decl;
// ok is false for a declaration it does not describe (then the type is
// named from the binlog).
type dbzDeclared struct {
	typeName      string
	jdbc          int
	length, scale int // -1: unset
	serial        bool
	national      bool // NCHAR, NVARCHAR, NATIONAL …: charset utf8
}

// dbzTypes maps a type's main words (upper case, as the parser's lexer
// reads them) to its java.sql.Types code.
var dbzTypes = map[string]int{
	"TINYINT": -6, "INT1": -6, "SMALLINT": 5, "INT2": 5, "MEDIUMINT": 4, "INT3": 4, "MIDDLEINT": 4,
	"INT": 4, "INTEGER": 4, "INT4": 4, "BIGINT": -5, "INT8": -5, "SERIAL": -5,
	"REAL": 7, "DOUBLE": 8, "DOUBLE PRECISION": 8, "FLOAT8": 8, "FLOAT": 6, "FLOAT4": 6,
	"DECIMAL": 3, "DEC": 3, "FIXED": 3, "NUMERIC": 2, "BIT": -7, "BOOL": 16, "BOOLEAN": 16,
	"TIME": 92, "TIMESTAMP": 2014, "DATETIME": 93, "DATE": 91, "YEAR": 4,
	"BINARY": -2, "VARBINARY": -3, "BLOB": 2004, "TINYBLOB": 2004, "MEDIUMBLOB": 2004, "LONGBLOB": 2004, "LONG VARBINARY": 2004,
	"CHAR": 1, "CHARACTER": 1, "CHAR VARYING": 12, "CHARACTER VARYING": 12, "VARCHAR": 12, "VARCHARACTER": 12,
	"TINYTEXT": 12, "TEXT": 12, "MEDIUMTEXT": 12, "LONGTEXT": 12, "LONG": 12, "LONG VARCHAR": 12,
	"LONG CHAR VARYING": 12, "LONG CHARACTER VARYING": 12,
	"NCHAR": -15, "NATIONAL CHAR": -15, "NATIONAL CHARACTER": -15,
	"NVARCHAR": -9, "NCHAR VARCHAR": -9, "NCHAR VARYING": -9, "NATIONAL VARCHAR": -9,
	"NATIONAL CHAR VARYING": -9, "NATIONAL CHARACTER VARYING": -9,
	"JSON": 1111, "GEOMETRY": 1111, "POINT": 1111, "LINESTRING": 1111, "POLYGON": 1111, "MULTIPOINT": 1111,
	"MULTILINESTRING": 1111, "MULTIPOLYGON": 1111, "GEOMETRYCOLLECTION": 1111,
}

func parseDeclared(decl string) (d dbzDeclared, ok bool) {
	d.length, d.scale = -1, -1
	open := strings.IndexByte(decl, '(')
	head, args, tail := decl, "", ""
	if open >= 0 {
		end := strings.IndexByte(decl[open:], ')')
		if end < 0 {
			return d, false
		}
		head, args, tail = decl[:open], decl[open+1:open+end], decl[open+end+1:]
	}
	var name, mods []string
	for k, w := range strings.Fields(strings.ToUpper(head + " " + tail)) {
		switch w {
		case "SIGNED", "UNSIGNED", "ZEROFILL", "BINARY":
			if k > 0 {
				mods = append(mods, w)
				continue
			}
		}
		if len(mods) > 0 {
			return d, false
		}
		name = append(name, w)
	}
	d.typeName = strings.Join(name, " ")
	if d.jdbc, ok = dbzTypes[d.typeName]; !ok {
		return d, false
	}
	if args != "" {
		parts := strings.Split(args, ",")
		if len(parts) > 2 {
			return d, false
		}
		for k, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > math.MaxInt32 { // Connect's int32
				return d, false
			}
			if k == 0 {
				d.length = n
			} else {
				d.scale = n
			}
		}
	}
	switch d.jdbc {
	case 3, 2: // DECIMAL, NUMERIC: (10,0) by default
		if d.length < 0 {
			d.length = 10
		}
		if d.scale < 0 {
			d.scale = 0
		}
	case -7: // BIT
		if d.length < 0 {
			d.length = 1
		}
	case -15, -9:
		d.national = true
		if d.jdbc == -15 && d.length < 0 {
			d.length = 1
		}
	}
	if len(mods) > 0 {
		d.typeName += " " + strings.Join(mods, " ")
	}
	if name[0] == "SERIAL" {
		d.typeName, d.serial = "BIGINT UNSIGNED", true
	}
	return d, true
}
