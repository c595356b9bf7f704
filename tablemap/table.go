// Package tablemap turns a TABLE_MAP_EVENT and its optional metadata into
// the table's schema as it was when the event was written.
//
// It never looks anything up on a server: everything comes from the
// event. A TABLE_MAP without column names (binlog_row_metadata other than
// FULL, or a server older than MySQL 8.0 / MariaDB 10.5) is refused with a
// *MetadataError.
package tablemap

// Table is a table's schema at event time.
type Table struct {
	ID      uint64 // the table id in the binlog (valid within one binlog file)
	DB      string
	Name    string
	Columns []Column

	// PrimaryKey lists the primary key's column indexes in key order; empty
	// when the table has none.
	PrimaryKey []int
	// PrimaryKeyPrefix holds the prefix length (in characters) of each key
	// part, 0 for a whole column. Same length as PrimaryKey.
	PrimaryKeyPrefix []int

	// PKNames are the names of the primary key's columns, in key order.
	PKNames []string
}

// Column is one column of a Table.
type Column struct {
	Name string
	// Type is the binlog type byte (MYSQL_TYPE_*). For CHAR, ENUM and SET,
	// which the binlog writes as MYSQL_TYPE_STRING, it is the real type
	// (MYSQL_TYPE_STRING, MYSQL_TYPE_ENUM or MYSQL_TYPE_SET).
	Type byte
	// Meta is the type's binlog metadata (for MYSQL_TYPE_STRING already
	// split: see Length).
	Meta uint16
	// Length is the maximum byte length of CHAR/BINARY columns (from the
	// STRING metadata), VARCHAR/VARBINARY columns, and the pack length of
	// BLOB-family columns (1..4).
	Length int

	Precision, Scale int // DECIMAL
	FSP              int // fractional seconds precision of temporal types
	Bits             int // BIT(n): n

	Unsigned bool
	Nullable bool
	// Collation is the column's collation id, for character columns
	// (including ENUM and SET). 63 means binary. 0 when not applicable.
	Collation uint32

	EnumValues []string // ENUM labels, decoded to UTF-8
	SetValues  []string // SET labels, decoded to UTF-8

	GeometryType int // for GEOMETRY columns: 0 GEOMETRY, 1 POINT, 2 LINESTRING…
	Dimensions   int // VECTOR dimensions, when the binlog carries them

	// Visible is false for INVISIBLE columns (MySQL 8.0.23+; MariaDB does
	// not log visibility, so its columns are all reported visible).
	Visible bool

	// Compressed marks a MariaDB COMPRESSED column (VARCHAR/VARBINARY(n)
	// COMPRESSED, binlog type 141; TEXT/BLOB COMPRESSED, type 140). Type
	// is then MYSQL_TYPE_VARCHAR or MYSQL_TYPE_BLOB and Length what it is
	// for those (for VARCHAR the values' maximum byte length: the binlog's
	// metadata counts one more byte, the compression header); the binlog
	// carries the stored bytes, which the row decoder inflates.
	Compressed bool

	// Generated marks a generated column (VIRTUAL or STORED), which no
	// statement may write. A TABLE_MAP does not say it: it is set from
	// the schema history (package schemahist) when that knows the table.
	Generated bool
	// Default is the column's DEFAULT as its DDL wrote it ("5", "'x'",
	// "current_timestamp()"), from the schema history too; "" when it has
	// none or the history does not know the table.
	Default string
	// JSON marks a MariaDB column declared JSON, which MariaDB keeps as
	// LONGTEXT checked by json_valid (its TABLE_MAP says LONGTEXT): set
	// from the schema history, like Generated. MySQL's JSON has its own
	// type (MYSQL_TYPE_JSON) and never sets it.
	JSON bool
}

// MariaDB's binlog type codes for COMPRESSED columns (mysql_com.h).
const (
	TypeBlobCompressed    = 140
	TypeVarcharCompressed = 141
)

// IsBinary reports whether a string column holds binary data (collation 63).
func (c *Column) IsBinary() bool { return c.Collation == 63 }
