package envelope

import (
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// canal writes Canal's flat JSON messages (fields in Canal's
// alphabetical order), one per row change, with every value as a string.
type canal struct {
	now    func() time.Time
	id     int64
	keys   jsonl.Encoder
	tables map[*tablemap.Table]*cnTable
	pieces
}

type cnTable struct {
	cols  [][]byte // `"name":` per column
	db    []byte   // `,"database":…,"es":`
	types []byte   // `,"isDdl":false,"mysqlType":{…},"old":`
	pk    []byte   // `,"pkNames":[…],"sql":"","sqlType":{…},"table":…,"ts":`
}

func (cn *canal) table(t *tablemap.Table) *cnTable {
	if k, ok := cn.tables[t]; ok {
		return k
	}
	if cn.tables == nil || len(cn.tables) > 4096 {
		cn.tables = map[*tablemap.Table]*cnTable{}
	}
	k := &cnTable{}
	for _, c := range t.Columns {
		k.cols = append(k.cols, append(appendString(nil, c.Name), ':'))
	}
	k.db = append(k.db, `,"database":`...)
	k.db = appendString(k.db, t.DB)
	k.db = append(k.db, `,"es":`...)
	k.types = append(k.types, `,"isDdl":false,"mysqlType":{`...)
	for i := range t.Columns {
		if i > 0 {
			k.types = append(k.types, ',')
		}
		k.types = append(k.types, k.cols[i]...)
		k.types = appendString(k.types, mysqlType(&t.Columns[i]))
	}
	k.types = append(k.types, `},"old":`...)
	k.pk = append(k.pk, `,"pkNames":`...)
	if len(t.PKNames) == 0 {
		k.pk = append(k.pk, "null"...)
	} else {
		k.pk = append(k.pk, '[')
		for i, n := range t.PKNames {
			if i > 0 {
				k.pk = append(k.pk, ',')
			}
			k.pk = appendString(k.pk, n)
		}
		k.pk = append(k.pk, ']')
	}
	k.pk = append(k.pk, `,"sql":"","sqlType":{`...)
	for i := range t.Columns {
		if i > 0 {
			k.pk = append(k.pk, ',')
		}
		k.pk = append(k.pk, k.cols[i]...)
		k.pk = strconv.AppendInt(k.pk, int64(sqlType(&t.Columns[i])), 10)
	}
	k.pk = append(k.pk, `},"table":`...)
	k.pk = appendString(k.pk, t.Name)
	k.pk = append(k.pk, `,"ts":`...)
	cn.tables[t] = k
	return k
}

func (cn *canal) NeedsTail() bool                                    { return false }
func (cn *canal) AppendTail(b []byte, _ change.TxEnd, _ bool) []byte { return b }

func (cn *canal) AppendValue(b []byte, c *change.Change) ([]byte, error) {
	cn.begin()
	b, err := cn.appendValueRecord(b, c)
	if perr := cn.end(); err == nil {
		err = perr
	}
	return b, err
}

func (cn *canal) appendValueRecord(b []byte, c *change.Change) ([]byte, error) {
	cn.id++
	if c.Op == change.DDL {
		return cn.appendDDL(b, c), nil
	}
	k := cn.table(c.Table)
	row, other := c.After, c.Before
	if c.Op == change.Delete {
		row, other = c.Before, nil
	}
	b = append(b, `{"data":[{`...)
	first := true
	for i := range c.Table.Columns {
		v := column(row, i)
		if v.IsAbsent() {
			// MINIMAL images: a column the update did not change is in
			// the before image only (the key); a column in neither is
			// left out, never written as null.
			if v = column(other, i); v.IsAbsent() {
				continue
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, k.cols[i]...)
		b = cn.appendValue(b, &c.Table.Columns[i], v)
	}
	b = append(b, `}]`...)
	b = append(b, k.db...)
	b = strconv.AppendInt(b, c.Time.UnixMilli(), 10)
	b = cn.appendGTIDAndID(b, c)
	b = append(b, k.types...)
	if c.Op == change.Update {
		// old: one map per row of data, the previous values of the
		// columns that changed.
		b = append(b, `[{`...)
		n := 0
		for i := range c.Table.Columns {
			bv, ok := changed(c, i)
			if !ok {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, k.cols[i]...)
			b = cn.appendValue(b, &c.Table.Columns[i], bv)
		}
		b = append(b, `}]`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, k.pk...)
	b = appendMillis(b, cn.now())
	b = append(b, `,"type":"`...)
	switch c.Op {
	case change.Insert, change.Snapshot:
		b = append(b, "INSERT"...)
	case change.Update:
		b = append(b, "UPDATE"...)
	default:
		b = append(b, "DELETE"...)
	}
	return append(b, '"', '}'), nil
}

func (cn *canal) appendGTIDAndID(b []byte, c *change.Change) []byte {
	b = append(b, `,"gtid":`...)
	if c.GTID == "" {
		b = append(b, `""`...)
	} else {
		b = appendString(b, c.GTID)
	}
	b = append(b, `,"id":`...)
	return strconv.AppendInt(b, cn.id, 10)
}

// appendDDL writes a DDL statement as Canal does: isDdl true, the
// statement in sql, type from its verb.
func (cn *canal) appendDDL(b []byte, c *change.Change) []byte {
	table := ""
	db := c.DB
	if c.Touches != nil && len(c.Touches.Tables) > 0 {
		table, db = c.Touches.Tables[0].Table, c.Touches.Tables[0].DB
	}
	b = append(b, `{"data":null,"database":`...)
	b = appendString(b, db)
	b = append(b, `,"es":`...)
	b = strconv.AppendInt(b, c.Time.UnixMilli(), 10)
	b = cn.appendGTIDAndID(b, c)
	b = append(b, `,"isDdl":true,"mysqlType":null,"old":null,"pkNames":null,"sql":`...)
	b = appendString(b, c.SQL)
	b = append(b, `,"sqlType":null,"table":`...)
	b = appendString(b, table)
	b = append(b, `,"ts":`...)
	b = appendMillis(b, cn.now())
	b = append(b, `,"type":"`...)
	b = append(b, canalDDLType(c.SQL)...)
	return append(b, '"', '}')
}

// canalDDLType is Canal's EventType name for a DDL statement.
func canalDDLType(sql string) string {
	w := strings.Fields(strings.ToUpper(sql))
	has := func(i int, s string) bool { return len(w) > i && w[i] == s }
	switch {
	case has(0, "CREATE") && (has(1, "INDEX") || has(2, "INDEX") || has(1, "UNIQUE") || has(1, "FULLTEXT") || has(1, "SPATIAL")):
		return "CINDEX"
	case has(0, "CREATE") && (has(1, "TABLE") || has(1, "TEMPORARY")):
		return "CREATE"
	case has(0, "DROP") && has(1, "INDEX"):
		return "DINDEX"
	case has(0, "DROP") && (has(1, "TABLE") || has(1, "TEMPORARY")):
		return "ERASE"
	case has(0, "ALTER") && (has(1, "TABLE") || has(2, "TABLE")):
		return "ALTER"
	case has(0, "TRUNCATE"):
		return "TRUNCATE"
	case has(0, "RENAME"):
		return "RENAME"
	}
	return "QUERY"
}

// AppendKey: Canal itself leaves the key null and partitions by its own
// configuration; binlogcdc keys each row by its primary key values (a
// JSON array, as --format json does), so that a row's changes stay in
// order on one partition.
func (cn *canal) AppendKey(b []byte, c *change.Change) ([]byte, bool) {
	if c.Op == change.DDL {
		return b, false
	}
	return cn.keys.AppendKey(b, c)
}

func (cn *canal) AppendBeforeKey(b []byte, c *change.Change) ([]byte, bool) {
	if c.Op == change.DDL {
		return b, false
	}
	return cn.keys.AppendBeforeKey(b, c)
}

// appendCanalValue writes a value as a JSON string (Canal's flat
// messages carry every value as text).
func (cn *canal) appendValue(b []byte, col *tablemap.Column, v change.Value) []byte {
	if cn.large(v) {
		switch v.Kind() {
		case change.Null, change.Absent, change.Int, change.Uint, change.Float32, change.Float64, change.Vector:
		case change.Bytes, change.Geometry:
			return cn.base64(b, v.Bytes())
		default:
			return cn.str(b, v.Bytes())
		}
	}
	return appendCanalValue(b, col, v)
}

func appendCanalValue(b []byte, col *tablemap.Column, v change.Value) []byte {
	switch v.Kind() {
	case change.Null, change.Absent:
		return append(b, "null"...)
	case change.Int:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int(), 10)
		return append(b, '"')
	case change.Uint:
		b = append(b, '"')
		b = strconv.AppendUint(b, v.Uint(), 10)
		return append(b, '"')
	case change.Float32:
		b = append(b, '"')
		b = appendFloat(b, float64(v.Float32()), 32)
		return append(b, '"')
	case change.Float64:
		b = append(b, '"')
		b = appendFloat(b, v.Float(), 64)
		return append(b, '"')
	case change.Bytes, change.Geometry:
		return appendBase64(b, v.Bytes())
	case change.Vector:
		b = append(b, '"')
		b = jsontext.AppendFloat32s(b, v.Bytes())
		return append(b, '"')
	case change.Set:
		return appendStringBytes(b, v.SetText())
	}
	return appendStringBytes(b, v.Bytes())
}

// charLength is a CHAR or VARCHAR column's length in characters (its
// byte length over its character set's longest character).
func charLength(c *tablemap.Column) int {
	coll, ok := charset.LookupFlavor(c.Collation, false)
	if !ok {
		coll, ok = charset.LookupFlavor(c.Collation, true)
	}
	if !ok || coll.MaxLen <= 1 {
		return c.Length
	}
	return (c.Length + coll.MaxLen - 1) / coll.MaxLen
}

// mysqlType is the column's type as Canal's mysqlType shows it
// (lower-case SQL type text).
func mysqlType(c *tablemap.Column) string {
	u := ""
	if c.Unsigned {
		u = " unsigned"
	}
	fsp := func(name string) string {
		if c.FSP > 0 {
			return name + "(" + strconv.Itoa(c.FSP) + ")"
		}
		return name
	}
	chars := func() int { return charLength(c) }
	labels := func(name string, l []string) string {
		q := make([]string, len(l))
		for i, s := range l {
			q[i] = "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
		return name + "(" + strings.Join(q, ",") + ")"
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		return "tinyint" + u
	case mysql.MYSQL_TYPE_SHORT:
		return "smallint" + u
	case mysql.MYSQL_TYPE_INT24:
		return "mediumint" + u
	case mysql.MYSQL_TYPE_LONG:
		return "int" + u
	case mysql.MYSQL_TYPE_LONGLONG:
		return "bigint" + u
	case mysql.MYSQL_TYPE_FLOAT:
		return "float" + u
	case mysql.MYSQL_TYPE_DOUBLE:
		return "double" + u
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return "decimal(" + strconv.Itoa(c.Precision) + "," + strconv.Itoa(c.Scale) + ")" + u
	case mysql.MYSQL_TYPE_BIT:
		return "bit(" + strconv.Itoa(c.Bits) + ")"
	case mysql.MYSQL_TYPE_YEAR:
		return "year"
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return "date"
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return fsp("time")
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return fsp("datetime")
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return fsp("timestamp")
	case mysql.MYSQL_TYPE_ENUM:
		return labels("enum", c.EnumValues)
	case mysql.MYSQL_TYPE_SET:
		return labels("set", c.SetValues)
	case mysql.MYSQL_TYPE_STRING:
		if c.IsBinary() {
			return "binary(" + strconv.Itoa(c.Length) + ")"
		}
		return "char(" + strconv.Itoa(chars()) + ")"
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		if c.IsBinary() {
			return "varbinary(" + strconv.Itoa(c.Length) + ")"
		}
		return "varchar(" + strconv.Itoa(chars()) + ")"
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		prefix := [...]string{"", "tiny", "", "medium", "long"}[min(max(c.Length, 0), 4)]
		if c.IsBinary() {
			return prefix + "blob"
		}
		return prefix + "text"
	case mysql.MYSQL_TYPE_JSON:
		return "json"
	case mysql.MYSQL_TYPE_GEOMETRY:
		names := [...]string{"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection"}
		if c.GeometryType >= 0 && c.GeometryType < len(names) {
			return names[c.GeometryType]
		}
		return "geometry"
	case mysql.MYSQL_TYPE_VECTOR:
		return "vector(" + strconv.Itoa(c.Dimensions) + ")"
	}
	return "type" + strconv.Itoa(int(c.Type))
}

// java.sql.Types codes, as Canal's sqlType gives them (unsigned integers
// widened to the next type, as Canal does).
func sqlType(c *tablemap.Column) int {
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		return pickInt(c.Unsigned, 5, -6)
	case mysql.MYSQL_TYPE_SHORT:
		return pickInt(c.Unsigned, 4, 5)
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		return pickInt(c.Unsigned, -5, 4)
	case mysql.MYSQL_TYPE_LONGLONG:
		return pickInt(c.Unsigned, 3, -5)
	case mysql.MYSQL_TYPE_FLOAT:
		return 7
	case mysql.MYSQL_TYPE_DOUBLE:
		return 8
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return 3
	case mysql.MYSQL_TYPE_BIT:
		return -7
	case mysql.MYSQL_TYPE_YEAR:
		return 12
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return 91
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return 92
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return 93
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		return 1
	case mysql.MYSQL_TYPE_STRING:
		return pickInt(c.IsBinary(), -2, 1)
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return pickInt(c.IsBinary(), -3, 12)
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		return pickInt(c.IsBinary(), 2004, 2005)
	case mysql.MYSQL_TYPE_JSON:
		return 12
	case mysql.MYSQL_TYPE_GEOMETRY:
		return -2
	}
	return 1111 // OTHER
}

func pickInt(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}
