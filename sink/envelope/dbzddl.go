package envelope

// Debezium's schema change records (--ddl --format debezium): the value
// of Debezium's SchemaChangeValue {source, ts_ms, databaseName,
// schemaName, ddl, tableChanges} with each table change as its
// ConnectTableChangeSerializer writes it, keyed {"databaseName":…}
// (SchemaChangeKey). The pipeline splits a statement into one change per
// table or database (DDLPerChangeOrWhole), as Debezium emits one event
// per table a statement changes.

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// SchemaTopic is Debezium's schema change topic: its topic.prefix.
func (d *debezium) SchemaTopic(prefix string) string { return prefix }

// appendSchemaChange writes c's schema change value.
func (d *debezium) appendSchemaChange(b []byte, c *change.Change) []byte {
	db, table := c.DB, ""
	var sc *change.SchemaChange
	if len(c.Schema) > 0 {
		sc = &c.Schema[0]
		db, table = sc.DB, sc.Table
	}
	b = append(b, '{')
	b = append(b, d.srcHead...)
	us := c.Time.UnixMicro()
	b = strconv.AppendInt(b, floorDiv(us, 1000), 10)
	b = append(b, `,"snapshot":"false","db":`...)
	b = appendString(b, db)
	b = append(b, `,"sequence":null,"ts_us":`...)
	b = strconv.AppendInt(b, us, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, us*1000, 10)
	b = append(b, `,"table":`...)
	b = appendNullString(b, table)
	b = append(b, `,"server_id":`...)
	b = strconv.AppendUint(b, uint64(c.ServerID), 10)
	b = append(b, `,"gtid":`...)
	b = appendNullString(b, c.GTID)
	b = append(b, `,"file":`...)
	b = appendString(b, c.Pos.File)
	b = append(b, `,"pos":`...)
	b = strconv.AppendUint(b, c.Pos.Offset, 10)
	b = append(b, `,"row":0,"thread":null,"query":null},"ts_ms":`...)
	b = strconv.AppendInt(b, d.opts.Now().UnixMilli(), 10)
	b = append(b, `,"databaseName":`...)
	b = appendString(b, db)
	b = append(b, `,"schemaName":null,"ddl":`...)
	b = appendString(b, c.SQL)
	b = append(b, `,"tableChanges":[`...)
	if sc != nil {
		b = appendTableChange(b, sc)
	}
	return append(b, "]}"...)
}

// appendTableChange writes a table's change {type, id, table}; nothing
// for a database's.
func appendTableChange(b []byte, sc *change.SchemaChange) []byte {
	var typ string
	id, def := sc.DB+"."+sc.Table, sc.New
	switch sc.Kind {
	case change.TableCreate:
		typ = "CREATE"
	case change.TableAlter:
		typ = "ALTER"
		if def != nil {
			id = def.Table.DB + "." + def.Table.Name // a rename: the new name
		}
	case change.TableDrop:
		typ, def = "DROP", nil // Debezium's DROP has no table
	default:
		return b
	}
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","id":`...)
	if def != nil {
		b = appendString(b, `"`+def.Table.DB+`"."`+def.Table.Name+`"`)
	} else {
		b = appendString(b, `"`+strings.Replace(id, ".", `"."`, 1)+`"`)
	}
	b = append(b, `,"table":`...)
	if def == nil {
		b = append(b, "null"...)
	} else {
		b = appendDbzTable(b, def)
	}
	return append(b, '}')
}

// appendDbzTable writes a table as ConnectTableChangeSerializer does.
func appendDbzTable(b []byte, d *change.TableDef) []byte {
	t := d.Table
	b = append(b, `{"defaultCharsetName":`...)
	b = appendNullString(b, d.Charset)
	b = append(b, `,"primaryKeyColumnNames":[`...)
	b = appendPKNames(b, t) // mxddl.go
	b = append(b, `],"columns":[`...)
	for i := range t.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		var cd change.ColumnDef
		if i < len(d.Columns) {
			cd = d.Columns[i]
		}
		b = appendDbzColumn(b, &t.Columns[i], &cd, i+1)
	}
	return append(b, `],"comment":null}`...)
}

func appendDbzColumn(b []byte, c *tablemap.Column, cd *change.ColumnDef, pos int) []byte {
	typeName := strings.ToUpper(cd.TypeName)
	if typeName == "" {
		typeName = strings.ToUpper(maxwellType(c)) // mxddl.go
		if c.Unsigned {
			typeName += " UNSIGNED"
		}
	}
	length, scale := dbzLength(c)
	jdbc := jdbcType(c, cd.TypeName != "")
	charset := ""
	if isText(c) && !c.IsBinary() && cd.TypeName == "" {
		charset = columnCharset(c)
	}
	var decl dbzDeclared
	if cd.Declared != "" {
		var ok bool
		if decl, ok = parseDeclared(cd.Declared); ok { // dbztypes.go
			typeName, jdbc, length, scale = decl.typeName, decl.jdbc, decl.length, decl.scale
			if decl.national {
				charset = "utf8"
			}
		}
	}
	b = append(b, `{"name":`...)
	b = appendString(b, c.Name)
	b = append(b, `,"jdbcType":`...)
	b = strconv.AppendInt(b, int64(jdbc), 10)
	b = append(b, `,"nativeType":null,"typeName":`...)
	b = appendString(b, typeName)
	b = append(b, `,"typeExpression":`...)
	b = appendString(b, typeName)
	b = append(b, `,"charsetName":`...)
	b = appendNullString(b, charset)
	b = append(b, `,"length":`...)
	b = appendOptInt(b, length)
	b = append(b, `,"scale":`...)
	b = appendOptInt(b, scale)
	b = append(b, `,"position":`...)
	b = strconv.AppendInt(b, int64(pos), 10)
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, c.Nullable)
	// Debezium's DDL parser marks AUTO_INCREMENT, ON UPDATE and SERIAL
	// columns auto-incremented and generated (its test
	// shouldParseTimeWithNowDefault; serialColumn).
	auto := cd.AutoIncrement || cd.OnUpdate || decl.serial
	b = append(b, `,"autoIncremented":`...)
	b = strconv.AppendBool(b, auto)
	b = append(b, `,"generated":`...)
	b = strconv.AppendBool(b, auto || cd.Generated != "")
	// comment: null, as Debezium writes it by default
	// (include.schema.comments=false skips COMMENT clauses).
	b = append(b, `,"comment":null`...)
	b = append(b, `,"defaultValueExpression":`...)
	if v, ok := defaultExpression(cd); ok {
		b = appendString(b, v)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"enumValues":`...)
	vals := c.EnumValues
	if c.Type == mysql.MYSQL_TYPE_SET {
		vals = c.SetValues
	}
	if c.Type != mysql.MYSQL_TYPE_ENUM && c.Type != mysql.MYSQL_TYPE_SET {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendOptInt(b []byte, n int) []byte {
	if n < 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// isText reports the character types (and ENUM, SET), which have a
// character set.
func isText(c *tablemap.Column) bool {
	switch c.Type {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		return true
	}
	return false
}

// defaultExpression is Debezium's defaultValueExpression, as its MySQL
// DDL parser (3.6.1, DefaultValueParserListener) sets it from the
// DEFAULT operand: a string literal without its quotes and character set
// introducer (escapes as written: 'it”s' is it”s), a number with its
// sign, TRUE/FALSE as written, x'0F' and b'101' without their x'…'/b'…'
// ("0F", "101"), a temporal literal as its tokens (DATE'2024-01-01'),
// "1970-01-01 00:00:00" for NOW(), CURRENT_TIMESTAMP, LOCALTIME and
// LOCALTIMESTAMP; none for no DEFAULT, DEFAULT NULL and an expression
// ((…), which Debezium leaves unset, or MariaDB's unparenthesised ones,
// which its grammar does not read).
func defaultExpression(cd *change.ColumnDef) (string, bool) {
	v := strings.TrimSpace(cd.Default)
	if !cd.HasDefault || v == "" {
		return "", false
	}
	up := strings.ToUpper(v)
	if nowDefault.MatchString(up) {
		return "1970-01-01 00:00:00", true
	}
	switch {
	case up == "NULL", v[0] == '(':
		return "", false
	case up == "TRUE", up == "FALSE":
		return v, true
	case hexBinDefault.MatchString(v):
		return v[2 : len(v)-1], true // Debezium's unquoteBinary, 0x0F included
	}
	sign := ""
	if v[0] == '+' || v[0] == '-' {
		sign, v = v[:1], strings.TrimSpace(v[1:])
	}
	if numDefault.MatchString(v) {
		return sign + v, true
	}
	if m := temporalDefault.FindStringSubmatch(v); m != nil {
		return sign + m[1] + m[2], true
	}
	if m := textDefault.FindStringSubmatch(v); m != nil {
		lit := m[1]
		return sign + lit[1:len(lit)-1], true
	}
	return "", false
}

var (
	nowDefault      = regexp.MustCompile(`^(NOW|CURRENT_TIMESTAMP|LOCALTIME|LOCALTIMESTAMP)\s*(\(\s*\d*\s*\))?$`)
	hexBinDefault   = regexp.MustCompile(`^(?i)(0x[0-9a-f]+|x'[0-9a-f]+'|0b[01]+|b'[01]+')$`)
	numDefault      = regexp.MustCompile(`^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
	temporalDefault = regexp.MustCompile(`^(?i)(DATE|TIME|TIMESTAMP)\s*('[^']*')$`)
	textDefault     = regexp.MustCompile(`^(?:_[A-Za-z0-9]+\s*)?('(?:[^'\\]|''|\\.)*'|"(?:[^"\\]|""|\\.)*")$`)
)

// dbzLength is the column's length and scale as Debezium's DDL parser
// sets them (-1: unset): characters of CHAR and VARCHAR, bytes of BINARY
// and VARBINARY, DECIMAL's precision and scale, BIT's bits, the
// fractional digits of TIME, DATETIME and TIMESTAMP (when not 0), 1 for
// ENUM, the number of SET labels and of the commas between them.
// Integer display widths are not in the binlog, and are left unset.
func dbzLength(c *tablemap.Column) (length, scale int) {
	switch c.Type {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		if c.IsBinary() {
			return c.Length, -1
		}
		return charLength(c), -1
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return c.Precision, c.Scale
	case mysql.MYSQL_TYPE_BIT:
		return c.Bits, -1
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2,
		mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		if c.FSP > 0 {
			return c.FSP, -1
		}
	case mysql.MYSQL_TYPE_ENUM:
		return 1, -1 // Debezium's parser: 1 for any ENUM
	case mysql.MYSQL_TYPE_SET:
		return max(0, 2*len(c.SetValues)-1), -1 // the labels and the commas between them
	}
	return -1, -1
}

// jdbcType is the java.sql.Types code Debezium's MySQL DDL parser gives
// the type; named is a type the binlog cannot name (UUID, INET4, INET6:
// OTHER).
func jdbcType(c *tablemap.Column, named bool) int {
	if named {
		return 1111 // OTHER
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		return -6 // TINYINT
	case mysql.MYSQL_TYPE_SHORT:
		return 5 // SMALLINT
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_YEAR:
		return 4 // INTEGER
	case mysql.MYSQL_TYPE_LONGLONG:
		return -5 // BIGINT
	case mysql.MYSQL_TYPE_FLOAT:
		return 6 // FLOAT
	case mysql.MYSQL_TYPE_DOUBLE:
		return 8 // DOUBLE
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return 3 // DECIMAL
	case mysql.MYSQL_TYPE_BIT:
		return -7 // BIT
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return 91 // DATE
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return 92 // TIME
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return 93 // TIMESTAMP
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return 2014 // TIMESTAMP_WITH_TIMEZONE
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		return 1 // CHAR
	case mysql.MYSQL_TYPE_STRING:
		if c.IsBinary() {
			return -2 // BINARY
		}
		return 1 // CHAR
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		if c.IsBinary() {
			return -3 // VARBINARY
		}
		return 12 // VARCHAR
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		if c.IsBinary() {
			return 2004 // BLOB
		}
		return 12 // VARCHAR (TEXT)
	}
	return 1111 // OTHER: JSON, geometry, VECTOR
}
