package tablemap

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/internal/wire"
)

// optVectorDimensionality is the optional metadata field MySQL 9.0 added
// for VECTOR columns; go-mysql does not decode it.
const optVectorDimensionality = 13

// optionalMetadata returns the optional metadata of a TABLE_MAP_EVENT body
// (nil when it has none or the body is malformed).
//
//	# bytes        field
//	4/6, 2         table id, flags
//	1+n+1, 1+m+1   database and table names, each NUL-terminated
//	varint         column count c
//	c              column types
//	varint + len   column metadata
//	(c+7)/8        NULL bitmap
//	rest           optional metadata: TLVs (type 1 byte, varint length, value)
func optionalMetadata(body []byte, tableIDSize int) []byte {
	p := tableIDSize + 2
	for i := 0; i < 2; i++ { // database, table
		if p >= len(body) {
			return nil
		}
		p += 1 + int(body[p]) + 1
	}
	if p > len(body) {
		return nil
	}
	c, n := wire.LenEncInt(body[p:])
	if n == 0 || c > uint64(len(body)) {
		return nil
	}
	p += n + int(c)
	if p > len(body) {
		return nil
	}
	l, n := wire.LenEncInt(body[p:])
	if n == 0 || l > uint64(len(body)) {
		return nil
	}
	p += n + int(l) + (int(c)+7)/8
	if p > len(body) {
		return nil
	}
	return body[p:]
}

// vectorDimensions returns the VECTOR_DIMENSIONALITY values, one per
// VECTOR column in column order, or nil.
func vectorDimensions(opt []byte) []uint64 {
	for len(opt) > 0 {
		typ := opt[0]
		l, n := wire.LenEncInt(opt[1:])
		if n == 0 || uint64(len(opt)-1-n) < l {
			return nil
		}
		val := opt[1+n : 1+n+int(l)]
		opt = opt[1+n+int(l):]
		if typ != optVectorDimensionality {
			continue
		}
		var dims []uint64
		for len(val) > 0 {
			d, n := wire.LenEncInt(val)
			if n == 0 || n > len(val) {
				return nil
			}
			dims = append(dims, d)
			val = val[n:]
		}
		return dims
	}
	return nil
}

// FromEventBody is FromEvent plus what go-mysql does not decode from the
// event's body (VECTOR dimensions). body is the event body without
// header and checksum; tableIDSize is as for PeekName.
func FromEventBody(te *replication.TableMapEvent, body []byte, tableIDSize int) (*Table, error) {
	if hasCompressed(te.ColumnType) {
		// go-mysql reads no metadata for MariaDB's COMPRESSED types, so
		// every column after the first one has the wrong metadata: read
		// it again from the body.
		meta, err := columnMeta(body, tableIDSize, te.ColumnType)
		if err != nil {
			return nil, &FormatError{Err: err}
		}
		te.ColumnMeta = meta
	}
	t, err := fromEvent(te)
	if err != nil {
		return nil, err
	}
	t.setVectorDimensions(body, tableIDSize)
	return t, nil
}

// setVectorDimensions fills Column.Dimensions from the raw body.
func (t *Table) setVectorDimensions(body []byte, tableIDSize int) {
	dims := vectorDimensions(optionalMetadata(body, tableIDSize))
	k := 0
	for i := range t.Columns {
		if t.Columns[i].Type != mysql.MYSQL_TYPE_VECTOR {
			continue
		}
		if k < len(dims) {
			t.Columns[i].Dimensions = int(dims[k])
		}
		k++
	}
}

// hasCompressed reports whether a MariaDB COMPRESSED column is among types.
func hasCompressed(types []byte) bool {
	for _, t := range types {
		if t == TypeBlobCompressed || t == TypeVarcharCompressed {
			return true
		}
	}
	return false
}

// columnMeta decodes the column metadata block of a TABLE_MAP_EVENT body
// (see optionalMetadata for the layout), as go-mysql's decodeMeta does,
// plus MariaDB's COMPRESSED types: 141 (VARCHAR) has 2 bytes, the field
// length little-endian; 140 (BLOB) 1 byte, the pack length.
func columnMeta(body []byte, tableIDSize int, types []byte) ([]uint16, error) {
	bad := errors.New("column metadata block cut short")
	p := tableIDSize + 2
	for i := 0; i < 2; i++ { // database, table
		if p >= len(body) {
			return nil, bad
		}
		p += 1 + int(body[p]) + 1
	}
	if p > len(body) {
		return nil, bad
	}
	c, n := wire.LenEncInt(body[p:])
	if n == 0 || c != uint64(len(types)) || c > uint64(len(body)) {
		return nil, bad
	}
	p += n + int(c)
	if p > len(body) {
		return nil, bad
	}
	l, n := wire.LenEncInt(body[p:])
	if n == 0 || l > uint64(len(body)-p-n) {
		return nil, bad
	}
	block := body[p+n : p+n+int(l)]
	meta := make([]uint16, len(types))
	pos := 0
	for i, t := range types {
		size := 0
		switch t {
		case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_NEWDECIMAL:
			size = 2
			if pos+size <= len(block) {
				meta[i] = uint16(block[pos])<<8 | uint16(block[pos+1])
			}
		case mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BIT, TypeVarcharCompressed:
			size = 2
			if pos+size <= len(block) {
				meta[i] = uint16(block[pos]) | uint16(block[pos+1])<<8
			}
		case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_GEOMETRY,
			mysql.MYSQL_TYPE_VECTOR, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME2,
			mysql.MYSQL_TYPE_TIMESTAMP2, TypeBlobCompressed:
			size = 1
			if pos+size <= len(block) {
				meta[i] = uint16(block[pos])
			}
		}
		pos += size
		if pos > len(block) {
			return nil, bad
		}
	}
	if pos != len(block) {
		return nil, fmt.Errorf("column metadata block of %d bytes, the column types use %d", len(block), pos)
	}
	return meta, nil
}
