package rowevent

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

// CellError reports a cell that could not be decoded.
type CellError struct {
	Column string // the column's name ("" when the table map has none)
	Type   byte   // the column's binlog type (MYSQL_TYPE_*)
	Err    error
}

func (e *CellError) Error() string {
	return "column " + strconv.Quote(e.Column) + " (" + typeName(e.Type) + "): " + e.Err.Error()
}

func (e *CellError) Unwrap() error { return e.Err }

// Errors wrapped by CellError, for errors.Is.
var (
	// ErrTruncated: the cell runs past the end of the row image.
	ErrTruncated = errors.New("truncated cell")
	// ErrBadValue: the bytes do not form a valid value of the column's
	// type (corrupt data, or metadata that does not match the data).
	ErrBadValue = errors.New("invalid value")
	// ErrBadMetadata: the column's metadata is out of range for its type.
	ErrBadMetadata = errors.New("invalid column metadata")
	// ErrUnsupportedType: no decoder for the column's type.
	ErrUnsupportedType = errors.New("unsupported column type")
	// ErrOldHiresTemporal: the cell is probably in MariaDB's pre-10.1
	// ("mariadb-5.3") fractional-seconds layout, which the binlog does not
	// describe (the TABLE_MAP carries no precision for it).
	ErrOldHiresTemporal = errors.New("old MariaDB hires temporal format (DATETIME/TIME/TIMESTAMP with fractional seconds " +
		"created with mysql56_temporal_format=OFF) is not supported: " +
		"run SET GLOBAL mysql56_temporal_format=ON and ALTER TABLE ... FORCE to convert the table")
)

func errTruncated(need uint64, have int) error {
	return fmt.Errorf("%w: need %d bytes, have %d", ErrTruncated, need, have)
}

func errBadMeta(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadMetadata}, args...)...)
}

func errBadValue(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadValue}, args...)...)
}

var typeNames = map[byte]string{
	mysql.MYSQL_TYPE_DECIMAL:       "DECIMAL",
	mysql.MYSQL_TYPE_TINY:          "TINY",
	mysql.MYSQL_TYPE_SHORT:         "SHORT",
	mysql.MYSQL_TYPE_LONG:          "LONG",
	mysql.MYSQL_TYPE_FLOAT:         "FLOAT",
	mysql.MYSQL_TYPE_DOUBLE:        "DOUBLE",
	mysql.MYSQL_TYPE_NULL:          "NULL",
	mysql.MYSQL_TYPE_TIMESTAMP:     "TIMESTAMP",
	mysql.MYSQL_TYPE_LONGLONG:      "LONGLONG",
	mysql.MYSQL_TYPE_INT24:         "INT24",
	mysql.MYSQL_TYPE_DATE:          "DATE",
	mysql.MYSQL_TYPE_TIME:          "TIME",
	mysql.MYSQL_TYPE_DATETIME:      "DATETIME",
	mysql.MYSQL_TYPE_YEAR:          "YEAR",
	mysql.MYSQL_TYPE_NEWDATE:       "NEWDATE",
	mysql.MYSQL_TYPE_VARCHAR:       "VARCHAR",
	mysql.MYSQL_TYPE_BIT:           "BIT",
	mysql.MYSQL_TYPE_TIMESTAMP2:    "TIMESTAMP2",
	mysql.MYSQL_TYPE_DATETIME2:     "DATETIME2",
	mysql.MYSQL_TYPE_TIME2:         "TIME2",
	mysql.MYSQL_TYPE_VECTOR:        "VECTOR",
	mysql.MYSQL_TYPE_JSON:          "JSON",
	mysql.MYSQL_TYPE_NEWDECIMAL:    "NEWDECIMAL",
	mysql.MYSQL_TYPE_ENUM:          "ENUM",
	mysql.MYSQL_TYPE_SET:           "SET",
	mysql.MYSQL_TYPE_TINY_BLOB:     "TINY_BLOB",
	mysql.MYSQL_TYPE_MEDIUM_BLOB:   "MEDIUM_BLOB",
	mysql.MYSQL_TYPE_LONG_BLOB:     "LONG_BLOB",
	mysql.MYSQL_TYPE_BLOB:          "BLOB",
	mysql.MYSQL_TYPE_VAR_STRING:    "VAR_STRING",
	mysql.MYSQL_TYPE_STRING:        "STRING",
	mysql.MYSQL_TYPE_GEOMETRY:      "GEOMETRY",
	tablemap.TypeBlobCompressed:    "BLOB_COMPRESSED",
	tablemap.TypeVarcharCompressed: "VARCHAR_COMPRESSED",
}

// typeName names a binlog type byte: "LONGLONG", or "type 200".
func typeName(t byte) string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "type " + strconv.Itoa(int(t))
}
