package tablemap

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/internal/charset"
)

// FromEvent builds the Table described by a TABLE_MAP_EVENT. It returns a
// *MetadataError when the event has no column names, and a *FormatError
// when its metadata is inconsistent. A table with MariaDB COMPRESSED
// columns needs FromEventBody: go-mysql does not know their metadata.
func FromEvent(te *replication.TableMapEvent) (t *Table, err error) {
	if hasCompressed(te.ColumnType) {
		return nil, &FormatError{Err: errors.New("a table with COMPRESSED columns needs the event body (FromEventBody)")}
	}
	return fromEvent(te)
}

func fromEvent(te *replication.TableMapEvent) (t *Table, err error) {
	defer func() {
		// go-mysql's metadata helpers index without bounds checks; corrupt
		// metadata must be an error, not a crash.
		if r := recover(); r != nil {
			t, err = nil, &FormatError{Err: fmt.Errorf("inconsistent optional metadata: %v", r)}
		}
	}()
	n := int(te.ColumnCount)
	t = &Table{ID: te.TableID, DB: string(te.Schema), Name: string(te.Table)}
	if len(te.ColumnName) == 0 {
		return nil, &MetadataError{DB: t.DB, Table: t.Name, Err: ErrNoColumnNames}
	}
	if len(te.ColumnName) != n || len(te.ColumnType) != n || len(te.ColumnMeta) != n {
		return nil, &FormatError{Err: fmt.Errorf("%d columns but %d names", n, len(te.ColumnName))}
	}

	unsigned := te.UnsignedMap()
	collations := collationMap(te)
	enumSetCollations := te.EnumSetCollationMap()
	enums := te.EnumStrValueMap()
	sets := te.SetStrValueMap()
	geoms := te.GeometryTypeMap()
	visible := te.VisibilityMap()

	t.Columns = make([]Column, n)
	for i := range t.Columns {
		c := &t.Columns[i]
		c.Name = string(te.ColumnName[i])
		c.Type, c.Meta = te.ColumnType[i], te.ColumnMeta[i]
		c.Unsigned = unsigned[i]
		_, c.Nullable = te.Nullable(i)
		c.Visible = visible == nil || visible[i]
		if err := c.setTypeInfo(); err != nil {
			return nil, &FormatError{Err: fmt.Errorf("column %s: %w", c.Name, err)}
		}
		switch c.Type {
		case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
			c.Collation = uint32(enumSetCollations[i])
			labels, err := decodeLabels(c.Collation, map[bool][]string{true: enums[i], false: sets[i]}[c.Type == mysql.MYSQL_TYPE_ENUM])
			if err != nil {
				return nil, &FormatError{Err: fmt.Errorf("column %s: %w", c.Name, err)}
			}
			if c.Type == mysql.MYSQL_TYPE_ENUM {
				c.EnumValues = labels
			} else {
				c.SetValues = labels
			}
		case mysql.MYSQL_TYPE_GEOMETRY:
			c.GeometryType = int(geoms[i])
			if col, ok := collations[i]; ok {
				c.Collation = uint32(col) // MariaDB logs one; it means nothing here
			}
		default:
			if col, ok := collations[i]; ok {
				c.Collation = uint32(col)
			} else if isStringType(c.Type) {
				// A string column without a collation in FULL metadata is binary
				// only when the server said so; assume binary is wrong, say so.
				c.Collation = 63
			}
		}
	}
	for k, idx := range te.PrimaryKey {
		if idx >= uint64(n) {
			return nil, &FormatError{Err: fmt.Errorf("primary key column %d of %d", idx, n)}
		}
		t.PrimaryKey = append(t.PrimaryKey, int(idx))
		prefix := 0
		if k < len(te.PrimaryKeyPrefix) {
			prefix = int(te.PrimaryKeyPrefix[k])
		}
		t.PrimaryKeyPrefix = append(t.PrimaryKeyPrefix, prefix)
		t.PKNames = append(t.PKNames, t.Columns[idx].Name)
	}
	return t, nil
}

// collationMap is te.CollationMap, except that VECTOR columns and MariaDB
// COMPRESSED columns (which go-mysql does not know; MariaDB numbers them
// in COLUMN_CHARSET like any text column) are counted among the character
// columns. MySQL 9.x numbers VECTOR columns (always
// binary) in DEFAULT_CHARSET/COLUMN_CHARSET: in MySQL 9.0.1's
// vector.binlog, table dtb.bar (id BIGINT, vector_column VECTOR(2),
// foo TEXT, vector_column2 VECTOR(4)) logs DEFAULT_CHARSET as "default 63,
// character column #1 is 255": #1 is foo only when the VECTORs count.
// go-mysql skips VECTOR, which made foo binary.
func collationMap(te *replication.TableMapEvent) map[int]uint64 {
	extra := func(t byte) bool {
		return t == mysql.MYSQL_TYPE_VECTOR || t == TypeBlobCompressed || t == TypeVarcharCompressed
	}
	hasExtra := false
	for _, t := range te.ColumnType {
		hasExtra = hasExtra || extra(t)
	}
	if !hasExtra {
		return te.CollationMap()
	}
	isChar := func(i int) bool { return te.IsCharacterColumn(i) || extra(te.ColumnType[i]) }
	ret := map[int]uint64{}
	switch {
	case len(te.DefaultCharset) != 0:
		except := map[uint64]uint64{}
		for i := 1; i+1 < len(te.DefaultCharset); i += 2 {
			except[te.DefaultCharset[i]] = te.DefaultCharset[i+1]
		}
		p := uint64(0)
		for i := range te.ColumnType {
			if !isChar(i) {
				continue
			}
			if c, ok := except[p]; ok {
				ret[i] = c
			} else {
				ret[i] = te.DefaultCharset[0]
			}
			p++
		}
	case len(te.ColumnCharset) != 0:
		p := 0
		for i := range te.ColumnType {
			if !isChar(i) {
				continue
			}
			if p >= len(te.ColumnCharset) {
				break
			}
			ret[i] = te.ColumnCharset[p]
			p++
		}
	default:
		return nil
	}
	return ret
}

func decodeLabels(collation uint32, raw []string) ([]string, error) {
	if raw == nil {
		return nil, errors.New("no ENUM/SET labels in the metadata")
	}
	if collation == 0 || charset.IsUTF8Compatible(collation) || collation == 63 {
		return raw, nil
	}
	out := make([]string, len(raw))
	var buf []byte
	for i, l := range raw {
		var err error
		buf, err = charset.Decode(buf[:0], collation, []byte(l))
		if err != nil {
			return nil, err
		}
		out[i] = string(buf)
	}
	return out, nil
}

func isStringType(t byte) bool {
	switch t {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_BLOB,
		TypeBlobCompressed, TypeVarcharCompressed:
		return true
	}
	return false
}

// setTypeInfo resolves the real type and splits the binlog metadata.
func (c *Column) setTypeInfo() error {
	m := int(c.Meta)
	switch c.Type {
	case mysql.MYSQL_TYPE_STRING:
		// meta = byte0<<8 | byte1. byte0 is the real type; for CHAR longer
		// than 255 bytes, bits 4-5 of byte0 are inverted bits 8-9 of the
		// length:
		//   length = byte1 | ((byte0 & 0x30) ^ 0x30) << 4; realType = byte0 | 0x30
		b0, b1 := m>>8, m&0xff
		if b0 == 0 {
			c.Length = b1
			return nil
		}
		real := b0
		length := b1
		if b0&0x30 != 0x30 {
			length = b1 | ((b0&0x30)^0x30)<<4
			real = b0 | 0x30
		}
		switch byte(real) {
		case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
			c.Type = byte(real)
			c.Length = b1 // pack length
		case mysql.MYSQL_TYPE_STRING:
			c.Length = length
		default:
			return fmt.Errorf("unknown real type %d in STRING metadata", real)
		}
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		c.Length = m
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_VECTOR:
		c.Length = m
		if m < 1 || m > 4 {
			return fmt.Errorf("pack length %d is not 1..4", m)
		}
	case TypeVarcharCompressed:
		// The metadata is the field length, which counts the header byte.
		if m < 1 {
			return fmt.Errorf("VARCHAR COMPRESSED of length %d", m)
		}
		c.Type, c.Compressed, c.Length = mysql.MYSQL_TYPE_VARCHAR, true, m-1
	case TypeBlobCompressed:
		c.Type, c.Compressed, c.Length = mysql.MYSQL_TYPE_BLOB, true, m
		if m < 1 || m > 4 {
			return fmt.Errorf("pack length %d is not 1..4", m)
		}
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		// MySQL allows a scale up to 30, MariaDB up to 38.
		c.Precision, c.Scale = m>>8, m&0xff
		if c.Precision < 1 || c.Precision > 65 || c.Scale > 38 || c.Scale > c.Precision {
			return fmt.Errorf("DECIMAL(%d,%d) is impossible", c.Precision, c.Scale)
		}
	case mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2,
		mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		c.FSP = m
		if m > 6 {
			return fmt.Errorf("fractional seconds precision %d is over 6", m)
		}
	case mysql.MYSQL_TYPE_BIT:
		// meta = bytes<<8 | bits: BIT(n) has n = bytes*8 + bits.
		c.Bits = (m>>8)*8 + m&0xff
		if c.Bits < 1 || c.Bits > 64 {
			return fmt.Errorf("BIT(%d) is impossible", c.Bits)
		}
	case mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
		c.Length = m // pack length, 4 or 8
	}
	return nil
}
