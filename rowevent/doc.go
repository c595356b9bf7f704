// Package rowevent decodes the row images of binlog rows events
// (WRITE/UPDATE/DELETE_ROWS, v1 and v2, MariaDB compressed ones) into
// change.Changes, using the table's schema from its TABLE_MAP event.
//
// # Cell values
//
// Each non-NULL cell becomes a change.Value. The table gives, for each
// MySQL column type, the Kind it decodes to and the Go type that
// Value.Interface returns:
//
//	MySQL type                         Kind       Interface()
//	TINYINT…BIGINT (signed)            Int        int64
//	TINYINT…BIGINT UNSIGNED            Uint       uint64 (BIGINT UNSIGNED exact to 18446744073709551615)
//	YEAR                               Int        int64 (1901…2155, 0 for the zero year)
//	BIT(n)                             Uint       uint64 (big-endian bits)
//	FLOAT                              Float32    float32
//	DOUBLE                             Float64    float64
//	DECIMAL                            Decimal    string, exactly the scale's fraction digits ("-0.50")
//	DATE                               Date       string "YYYY-MM-DD" (zero dates kept: "0000-00-00", "2020-00-00")
//	DATETIME(fsp)                      Datetime   string "YYYY-MM-DD hh:mm:ss[.ffffff]", fsp digits
//	TIMESTAMP(fsp)                     Timestamp  string, as DATETIME, in UTC; Uint() is the Unix time
//	TIME(fsp)                          Time       string "[-]hh:mm:ss[.ffffff]", hours up to 838
//	CHAR, VARCHAR, TEXT (any charset)  String     string, converted to UTF-8
//	BINARY, VARBINARY, BLOB            Bytes      []byte (BINARY(n) re-padded with 0x00 to n bytes)
//	ENUM                               Enum       string label; Uint() is the 1-based index (0: "")
//	SET                                Set        []string of labels; Uint() is the member bitmask
//	JSON (MySQL)                       JSON       json.RawMessage (binary JSON rendered as text)
//	JSON (MariaDB: LONGTEXT)           String     string
//	GEOMETRY and subtypes              Geometry   change.GeometryData{SRID uint32; WKB []byte}
//	VECTOR (MySQL 9)                   Vector     []float32 (the value holds the little-endian bytes)
//
// NULL gives a Null value and a column missing from a MINIMAL or NOBLOB
// image an Absent one; Interface returns nil for both.
//
// Text values (decimal, temporal, converted strings, JSON, ENUM and SET
// labels) are written into a buffer owned by the Decoder; binary and
// UTF-8 strings point into the event's bytes. Copy them (Value.Clone) to
// keep them after the next Decode.
//
// Binary JSON renders compactly with the keys in stored order (MySQL
// sorts them by length, then bytes); doubles with an integral value keep
// ".0"; DECIMAL values stored in JSON are numbers, DATE/TIME/DATETIME/
// TIMESTAMP ones strings with 6 fraction digits, other MySQL-typed values
// "base64:type<N>:<data>", as MySQL prints them.
//
// Old temporal formats are decoded too: MySQL 5.5 / MariaDB DATETIME,
// TIME and TIMESTAMP without fractional seconds. MariaDB's older
// fractional-seconds layout (columns shown as /* mariadb-5.3 */, created
// with mysql56_temporal_format=OFF) cannot be read from the binlog alone:
// its TABLE_MAP metadata omits the precision, so the cell size is
// unknown. Such cells are decoded when the column's FSP is known from
// elsewhere, and otherwise mostly detected and refused with
// ErrOldHiresTemporal (ALTER TABLE ... FORCE with
// mysql56_temporal_format=ON converts the table).
//
// MariaDB COMPRESSED columns (binlog types 140 and 141, which tablemap
// turns into BLOB/VARCHAR with Column.Compressed) are inflated: a cell
// holds a header byte, then the raw value or its length and a zlib or raw
// deflate stream (compress.go).
//
// A cell that cannot be decoded is reported as a *CellError naming the
// column; the errors it wraps (ErrTruncated, ErrBadValue, ErrBadMetadata,
// ErrUnsupportedType, ErrOldHiresTemporal) can be tested with errors.Is.
package rowevent
