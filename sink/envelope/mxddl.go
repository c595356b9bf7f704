package envelope

// Maxwell's DDL records (--ddl --format maxwell): one per table or
// database a statement changed (change.Change.Schema, split so by the
// pipeline's DDLPerChange), shaped as Maxwell's ResolvedSchemaChange
// subclasses serialize: table-create, table-alter, table-drop,
// database-create, database-alter, database-drop, with the tables as
// Maxwell's Table and ColumnDef serialize them.

import (
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// appendDDL writes c's record, left open for AppendTail as every record
// (which closes a DDL transaction's records without "xid" or "commit").
func (m *maxwell) appendDDL(b []byte, c *change.Change) []byte {
	var sc change.SchemaChange
	if len(c.Schema) > 0 {
		sc = c.Schema[0]
	}
	b = append(b, `{"type":"`...)
	b = append(b, sc.Kind.String()...)
	b = append(b, `","database":`...)
	b = appendString(b, sc.DB)
	switch sc.Kind {
	case change.TableCreate, change.TableAlter, change.TableDrop:
		b = append(b, `,"table":`...)
		b = appendString(b, sc.Table)
		if sc.Kind == change.TableAlter && sc.Old != nil {
			b = append(b, `,"old":`...)
			b = appendMaxwellDef(b, sc.Old)
		}
		if sc.Kind != change.TableDrop && sc.New != nil {
			b = append(b, `,"def":`...)
			b = appendMaxwellDef(b, sc.New)
		}
	case change.DatabaseCreate, change.DatabaseAlter:
		b = append(b, `,"charset":`...)
		b = appendNullString(b, sc.Charset)
	}
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, c.Time.Unix(), 10)
	b = append(b, `,"sql":`...)
	b = appendString(b, c.SQL)
	b = append(b, `,"position":`...)
	return appendString(b, c.Pos.File+":"+strconv.FormatUint(c.Pos.Offset, 10))
}

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// appendMaxwellDef writes a table as Maxwell's Table serializes.
func appendMaxwellDef(b []byte, d *change.TableDef) []byte {
	t := d.Table
	b = append(b, `{"database":`...)
	b = appendString(b, t.DB)
	b = append(b, `,"charset":`...)
	b = appendNullString(b, d.Charset)
	b = append(b, `,"table":`...)
	b = appendString(b, t.Name)
	b = append(b, `,"columns":[`...)
	for i := range t.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		typeName := ""
		if i < len(d.Columns) {
			typeName = d.Columns[i].TypeName
		}
		b = appendMaxwellColumn(b, &t.Columns[i], typeName)
	}
	b = append(b, `],"primary-key":[`...)
	b = appendPKNames(b, t)
	return append(b, "]}"...)
}

// appendMaxwellColumn writes a column as Maxwell's ColumnDefSerializer
// does: type and name, then "signed" for integers, "charset" for strings
// ("binary" for binary strings and blobs), "enum-values" for ENUM and
// SET, "column-length" (the fractional seconds) for DATETIME, TIMESTAMP
// and TIME, nothing more for the others.
func appendMaxwellColumn(b []byte, c *tablemap.Column, typeName string) []byte {
	name := typeName
	if name == "" {
		name = maxwellType(c)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, name)
	b = append(b, `,"name":`...)
	b = appendString(b, c.Name)
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		b = append(b, `,"signed":`...)
		b = strconv.AppendBool(b, !c.Unsigned)
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		vals := c.EnumValues
		if c.Type == mysql.MYSQL_TYPE_SET {
			vals = c.SetValues
		}
		b = append(b, `,"enum-values":[`...)
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v)
		}
		b = append(b, ']')
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2,
		mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		b = append(b, `,"column-length":`...)
		b = strconv.AppendInt(b, int64(c.FSP), 10)
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		if typeName == "" {
			b = append(b, `,"charset":`...)
			b = appendNullString(b, columnCharset(c))
		}
	}
	return append(b, '}')
}

// maxwellType is Maxwell's type name: the SQL type without its length
// and attributes.
func maxwellType(c *tablemap.Column) string {
	s := mysqlType(c) // canal.go
	if i := strings.IndexAny(s, "( "); i >= 0 {
		s = s[:i]
	}
	return s
}

// columnCharset names a string column's character set ("binary" for
// binary strings).
func columnCharset(c *tablemap.Column) string {
	if c.IsBinary() {
		return "binary"
	}
	if cs, ok := charset.Lookup(c.Collation); ok {
		return cs.Charset
	}
	return ""
}

// appendPKNames writes the primary key's column names, spelled as the
// columns are (Maxwell's getPKList, Debezium's primaryKeyColumnNames).
func appendPKNames(b []byte, t *tablemap.Table) []byte {
	for i, n := range t.PKNames {
		if i > 0 {
			b = append(b, ',')
		}
		if i < len(t.PrimaryKey) && t.PrimaryKey[i] >= 0 && t.PrimaryKey[i] < len(t.Columns) {
			n = t.Columns[t.PrimaryKey[i]].Name
		}
		b = appendString(b, n)
	}
	return b
}
