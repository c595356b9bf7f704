package tablemap

import (
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
	t, err := FromEvent(te)
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
