package envelope

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

// The Kafka Connect schemas of Debezium's records, as JsonConverter
// writes them with schemas.enable=true: built once per table.

type fieldSchema struct {
	typ      string
	optional bool
	name     string
	version  int
	params   [][2]string
	fields   []fieldSchema // struct
	items    *fieldSchema  // array
	field    string        // the member name inside a struct
	def      string        // JSON default value, or ""
	doc      string
}

func (f *fieldSchema) append(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, f.typ)
	if f.typ == "struct" {
		b = append(b, `,"fields":[`...)
		for i := range f.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = f.fields[i].append(b)
		}
		b = append(b, ']')
	}
	if f.items != nil {
		b = append(b, `,"items":`...)
		b = f.items.append(b)
	}
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, f.optional)
	if f.def != "" {
		b = append(b, `,"default":`...)
		b = append(b, f.def...)
	}
	if f.name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, f.name)
	}
	if f.version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(f.version), 10)
	}
	if f.doc != "" {
		b = append(b, `,"doc":`...)
		b = appendString(b, f.doc)
	}
	if len(f.params) > 0 {
		b = append(b, `,"parameters":{`...)
		for i, p := range f.params {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p[0])
			b = append(b, ':')
			b = appendString(b, p[1])
		}
		b = append(b, '}')
	}
	if f.field != "" {
		b = append(b, `,"field":`...)
		b = appendString(b, f.field)
	}
	return append(b, '}')
}

// columnSchema is the schema Debezium gives a column of this type.
func (d *debezium) columnSchema(c *tablemap.Column) fieldSchema {
	f := fieldSchema{optional: c.Nullable, field: c.Name}
	logical := func(typ, name string) fieldSchema {
		f.typ, f.name, f.version = typ, name, 1
		return f
	}
	if c.JSON {
		// MariaDB's JSON (a LONGTEXT the schema history knows was
		// declared JSON): Debezium names it by its DDL type, as MySQL's.
		return logical("string", "io.debezium.data.Json")
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY:
		f.typ = pick(c.Unsigned, "int16", "int8")
	case mysql.MYSQL_TYPE_SHORT:
		f.typ = pick(c.Unsigned, "int32", "int16")
	case mysql.MYSQL_TYPE_INT24:
		f.typ = "int32"
	case mysql.MYSQL_TYPE_LONG:
		f.typ = pick(c.Unsigned, "int64", "int32")
	case mysql.MYSQL_TYPE_LONGLONG:
		if c.Unsigned && d.opts.BigintUnsignedHandlingMode == BigintPrecise {
			f = logical("bytes", "org.apache.kafka.connect.data.Decimal")
			f.params = [][2]string{{"scale", "0"}, {"connect.decimal.precision", "20"}}
			return f
		}
		f.typ = "int64"
	case mysql.MYSQL_TYPE_YEAR:
		return logical("int32", "io.debezium.time.Year")
	case mysql.MYSQL_TYPE_BIT:
		if c.Bits <= 1 {
			f.typ = "boolean"
			return f
		}
		f = logical("bytes", "io.debezium.data.Bits")
		f.params = [][2]string{{"length", strconv.Itoa(c.Bits)}}
		return f
	case mysql.MYSQL_TYPE_FLOAT:
		f.typ = pick(d.dbl[c], "double", "float")
	case mysql.MYSQL_TYPE_DOUBLE:
		f.typ = "double"
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		switch d.opts.DecimalHandlingMode {
		case DecimalString:
			f.typ = "string"
		case DecimalDouble:
			f.typ = "double"
		default:
			f = logical("bytes", "org.apache.kafka.connect.data.Decimal")
			f.params = [][2]string{{"scale", strconv.Itoa(c.Scale)}, {"connect.decimal.precision", strconv.Itoa(c.Precision)}}
		}
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		if d.opts.TimePrecisionMode == TimeIsoString {
			return logical("string", "io.debezium.time.IsoDate")
		}
		if d.opts.TimePrecisionMode == TimeConnect {
			return logical("int32", "org.apache.kafka.connect.data.Date")
		}
		return logical("int32", "io.debezium.time.Date")
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		if d.opts.TimePrecisionMode == TimeIsoString {
			return logical("string", "io.debezium.time.IsoTime")
		}
		if d.opts.TimePrecisionMode == TimeConnect {
			return logical("int32", "org.apache.kafka.connect.data.Time")
		}
		return logical("int64", "io.debezium.time.MicroTime")
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		switch {
		case d.opts.TimePrecisionMode == TimeIsoString:
			return logical("string", "io.debezium.time.IsoTimestamp")
		case d.opts.TimePrecisionMode == TimeConnect:
			return logical("int64", "org.apache.kafka.connect.data.Timestamp")
		case c.FSP <= 3:
			return logical("int64", "io.debezium.time.Timestamp")
		}
		return logical("int64", "io.debezium.time.MicroTimestamp")
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return logical("string", "io.debezium.time.ZonedTimestamp")
	case mysql.MYSQL_TYPE_ENUM:
		f = logical("string", "io.debezium.data.Enum")
		f.params = [][2]string{{"allowed", escapeAllowed(c.EnumValues)}}
	case mysql.MYSQL_TYPE_SET:
		f = logical("string", "io.debezium.data.EnumSet")
		f.params = [][2]string{{"allowed", escapeAllowed(c.SetValues)}}
	case mysql.MYSQL_TYPE_JSON:
		return logical("string", "io.debezium.data.Json")
	case mysql.MYSQL_TYPE_GEOMETRY:
		wkb := fieldSchema{typ: "bytes", field: "wkb"}
		srid := fieldSchema{typ: "int32", optional: true, field: "srid"}
		if c.GeometryType == 1 {
			f = logical("struct", "io.debezium.data.geometry.Point")
			wkb.optional = true
			f.fields = []fieldSchema{{typ: "double", field: "x"}, {typ: "double", field: "y"}, wkb, srid}
			f.doc = "Geometry (POINT)"
			return f
		}
		f = logical("struct", "io.debezium.data.geometry.Geometry")
		f.fields = []fieldSchema{wkb, srid}
		f.doc = "Geometry"
	case mysql.MYSQL_TYPE_VECTOR:
		f = logical("array", "io.debezium.data.FloatVector")
		f.items = &fieldSchema{typ: "float"}
	default: // strings and binary strings
		if c.IsBinary() {
			f.typ = d.binarySchema()
		} else {
			f.typ = "string"
		}
	}
	return f
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func (d *debezium) rowSchema(t *tablemap.Table, suffix, field string, optional bool) fieldSchema {
	f := fieldSchema{typ: "struct", optional: optional, name: d.opts.Name + "." + t.DB + "." + t.Name + "." + suffix, field: field}
	for i := range t.Columns {
		cs := d.columnSchema(&t.Columns[i])
		if v, ok := defaultJSON(&cs, t.Columns[i].Default); ok {
			cs.def = v
		}
		f.fields = append(f.fields, cs)
	}
	return f
}

// defaultJSON is a column's DEFAULT (its DDL text, from the schema
// history) as the JSON value of its schema, as Debezium gives it: only
// for plain integer, floating point, boolean and string schemas, and
// literals; false for anything else (an expression, NULL, a logical type).
func defaultJSON(f *fieldSchema, sql string) (string, bool) {
	if sql == "" || f.name != "" {
		return "", false
	}
	text, quoted := sql, false
	if len(sql) >= 2 && sql[0] == '\'' && sql[len(sql)-1] == '\'' {
		inner := sql[1 : len(sql)-1]
		if strings.Contains(inner, "\\") || strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return "", false
		}
		text, quoted = strings.ReplaceAll(inner, "''", "'"), true
	}
	switch f.typ {
	case "int8", "int16", "int32", "int64":
		bits := map[string]int{"int8": 8, "int16": 16, "int32": 32, "int64": 64}[f.typ]
		if n, err := strconv.ParseInt(text, 10, bits); err == nil {
			return strconv.FormatInt(n, 10), true
		}
	case "float", "double":
		if v, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return strconv.FormatFloat(v, 'g', -1, 64), true
		}
	case "boolean":
		switch text {
		case "0", "b'0'":
			return "false", true
		case "1", "b'1'":
			return "true", true
		}
	case "string":
		if quoted && utf8.ValidString(text) {
			return string(appendString(nil, text)), true
		}
	}
	return "", false
}

func (d *debezium) keySchema(b []byte, t *tablemap.Table) []byte {
	f := fieldSchema{typ: "struct", name: d.opts.Name + "." + t.DB + "." + t.Name + ".Key"}
	for _, i := range t.PrimaryKey {
		cs := d.columnSchema(&t.Columns[i])
		cs.optional = false
		f.fields = append(f.fields, cs)
	}
	return f.append(b)
}

func (d *debezium) envelopeSchema(b []byte, t *tablemap.Table) []byte {
	tx := fieldSchema{typ: "struct", optional: true, name: "event.block", version: 1, field: "transaction", fields: []fieldSchema{
		str("id", false), i64("total_order", false), i64("data_collection_order", false),
	}}
	env := fieldSchema{typ: "struct", name: d.opts.Name + "." + t.DB + "." + t.Name + ".Envelope", version: 2, fields: []fieldSchema{
		d.rowSchema(t, "Value", "before", true), d.rowSchema(t, "Value", "after", true), sourceSchema(),
		str("op", false), i64("ts_ms", true), i64("ts_us", true), i64("ts_ns", true), tx,
	}}
	return env.append(b)
}
