// Package envelope encodes changes in the JSON shapes that other CDC tools
// write, so that their consumers read binlogcdc's output unchanged:
//
//   - debezium: the change events of Debezium's MySQL connector as Kafka
//     Connect's JsonConverter writes them (schemas.enable=false, or =true
//     with Options.WithSchema);
//   - maxwell: Maxwell's Daemon's JSON;
//   - canal: Canal's flat JSON message, as Flink's canal-json reads it.
//
// An Encoder produces one record's value (and its Kafka key) per row
// change; the JSON lines sink (sink/jsonl) and the Kafka sink (sink/kafka)
// use it in place of binlogcdc's own JSON. The README's "Other formats"
// section lists how each MySQL type is encoded in each format.
//
// Absent columns (binlog_row_image=MINIMAL or NOBLOB) are never written as
// NULL: maxwell and canal leave them out of the row objects; debezium,
// whose consumers need every column, refuses such images with a
// *PartialImageError.
package envelope

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
)

// Encoder encodes changes as records of one format. It is not safe for
// concurrent use.
type Encoder interface {
	// AppendValue appends c's record (without a newline). When
	// NeedsTail reports true, the record is left open: the caller
	// closes it with AppendTail once the transaction's end is known.
	AppendValue(dst []byte, c *change.Change) ([]byte, error)
	// AppendKey appends the Kafka record key of c in the format's
	// convention; false when c has none (the record's key is null).
	AppendKey(dst []byte, c *change.Change) ([]byte, bool)
	// AppendBeforeKey is AppendKey for the row before an update or a
	// delete (to tombstone the old key of an update that moved a row).
	AppendBeforeKey(dst []byte, c *change.Change) ([]byte, bool)
	// NeedsTail reports whether records wait for AppendTail.
	NeedsTail() bool
	// AppendTail closes an open record of the transaction tx; last is
	// true for the transaction's last record.
	AppendTail(dst []byte, tx change.TxEnd, last bool) []byte
}

// SchemaTopicNamer is implemented by formats whose DDL records go to a
// topic of their own naming on Kafka (Debezium: the topic prefix).
type SchemaTopicNamer interface {
	SchemaTopic(prefix string) string
}

// KeySplitter is implemented by formats that publish an update which
// changed the primary key as a delete of the old key and an insert of
// the new one (Debezium does): the sinks write the two changes
// SplitKeyChange returns instead of c when ok.
type KeySplitter interface {
	SplitKeyChange(c *change.Change) (del, ins change.Change, ok bool)
}

// splitKeyChange splits an update that changed the primary key.
func splitKeyChange(c *change.Change) (del, ins change.Change, ok bool) {
	if c.Op != change.Update || c.Table == nil {
		return del, ins, false
	}
	for _, col := range c.Table.PrimaryKey {
		b, a := column(c.Before, col), column(c.After, col)
		if !a.IsAbsent() && !sameValue(a, b) {
			del, ins = *c, *c
			del.Op, del.After = change.Delete, nil
			ins.Op, ins.Before = change.Insert, nil
			return del, ins, true
		}
	}
	return del, ins, false
}

// Formats are the names Parse accepts, besides binlogcdc's own "json".
var Formats = []string{"debezium", "maxwell", "canal"}

// Debezium option values, named as Debezium names them.
const (
	DecimalPrecise = "precise"
	DecimalString  = "string"
	DecimalDouble  = "double"

	TimeAdaptiveMicros = "adaptive_time_microseconds"
	TimeConnect        = "connect"
	TimeIsoString      = "isostring"

	BinaryBytes   = "bytes"
	BinaryBase64  = "base64"
	BinaryBase64U = "base64-url-safe"
	BinaryHex     = "hex"

	BigintLong    = "long"
	BigintPrecise = "precise"
)

// Options configure an Encoder.
type Options struct {
	// Format: "debezium", "maxwell" or "canal".
	Format string

	// Name is Debezium's topic.prefix: source.name, and the prefix of
	// the schema names (default "binlogcdc").
	Name string
	// Version is source.version (default "binlogcdc").
	Version string
	// DecimalHandlingMode is Debezium's decimal.handling.mode: precise
	// (default), string or double.
	DecimalHandlingMode string
	// TimePrecisionMode is Debezium's time.precision.mode:
	// adaptive_time_microseconds (default), connect or isostring.
	TimePrecisionMode string
	// BinaryHandlingMode is Debezium's binary.handling.mode: bytes
	// (default: Connect bytes, base64 in JSON), base64, base64-url-safe
	// or hex (strings).
	BinaryHandlingMode string
	// NoTimeAdjuster is Debezium's enable.time.adjuster=false: DATE and
	// DATETIME years 0-99 are written as they are, not as 2000-2069 and
	// 1970-1999.
	NoTimeAdjuster bool
	// FloatDouble names the FLOAT columns declared FLOAT(M,D), which
	// Debezium writes as double (the binlog does not say): "db.table.col"
	// patterns, with * matching any run of characters.
	FloatDouble []string
	// BigintUnsignedHandlingMode is Debezium's
	// bigint.unsigned.handling.mode: long (default) or precise.
	BigintUnsignedHandlingMode string
	// WithSchema adds the Kafka Connect schema (JsonConverter
	// schemas.enable=true) to Debezium's keys and values.
	WithSchema bool

	// MaxwellRowQuery is Maxwell's output_row_query: each row carries
	// "query", the statement that made it (change.Change.Query).
	MaxwellRowQuery bool

	// Now is the clock of the processing times (Debezium's ts_ms,
	// Canal's ts); default time.Now.
	Now func() time.Time
}

// New returns the Encoder of opts.Format.
func New(opts Options) (Encoder, error) {
	if opts.Name == "" {
		opts.Name = "binlogcdc"
	}
	if opts.Version == "" {
		opts.Version = "binlogcdc"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DecimalHandlingMode == "" {
		opts.DecimalHandlingMode = DecimalPrecise
	}
	if opts.TimePrecisionMode == "" {
		opts.TimePrecisionMode = TimeAdaptiveMicros
	}
	if opts.BigintUnsignedHandlingMode == "" {
		opts.BigintUnsignedHandlingMode = BigintLong
	}
	if opts.BinaryHandlingMode == "" {
		opts.BinaryHandlingMode = BinaryBytes
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	switch opts.Format {
	case "debezium":
		return newDebezium(opts), nil
	case "maxwell":
		return &maxwell{query: opts.MaxwellRowQuery}, nil
	case "canal":
		return &canal{now: opts.Now}, nil
	}
	return nil, fmt.Errorf("envelope: unknown format %q (want %s)", opts.Format, strings.Join(Formats, ", "))
}

func (o Options) check() error {
	bad := func(name, got string, want ...string) error {
		for _, w := range want {
			if got == w {
				return nil
			}
		}
		return fmt.Errorf("envelope: %s: want %s, not %q", name, strings.Join(want, " or "), got)
	}
	if err := bad("decimal handling mode", o.DecimalHandlingMode, DecimalPrecise, DecimalString, DecimalDouble); err != nil {
		return err
	}
	if err := bad("time precision mode", o.TimePrecisionMode, TimeAdaptiveMicros, TimeConnect, TimeIsoString); err != nil {
		return err
	}
	if err := bad("binary handling mode", o.BinaryHandlingMode, BinaryBytes, BinaryBase64, BinaryBase64U, BinaryHex); err != nil {
		return err
	}
	for _, p := range o.FloatDouble {
		if strings.Count(p, ".") != 2 {
			return fmt.Errorf("envelope: FLOAT(M,D) column %q: want db.table.column (* matches any characters)", p)
		}
	}
	if err := bad("bigint unsigned handling mode", o.BigintUnsignedHandlingMode, BigintLong, BigintPrecise); err != nil {
		return err
	}
	if o.Format != "debezium" && (o.WithSchema || o.DecimalHandlingMode != DecimalPrecise ||
		o.TimePrecisionMode != TimeAdaptiveMicros || o.BigintUnsignedHandlingMode != BigintLong ||
		o.BinaryHandlingMode != BinaryBytes || o.NoTimeAdjuster || len(o.FloatDouble) > 0) {
		return fmt.Errorf("envelope: the schema, the decimal, time, bigint and binary modes, the time adjuster and FLOAT(M,D) columns are Debezium's options: they need the debezium format")
	}
	if o.Format != "maxwell" && o.MaxwellRowQuery {
		return fmt.Errorf("envelope: the row query is Maxwell's option (output_row_query): it needs the maxwell format")
	}
	return nil
}

// PartialImageError: a format that needs whole rows met a row image
// without some columns (binlog_row_image=MINIMAL or NOBLOB).
type PartialImageError struct {
	Format string
	DB     string
	Table  string
	Column string
	Pos    change.Position
	Row    int
}

func (e *PartialImageError) Error() string {
	return fmt.Sprintf("%s:%d (row %d): table %s.%s: column %s is not in the row image (binlog_row_image=MINIMAL or NOBLOB): "+
		"--format %s writes whole rows and cannot tell an absent column from NULL\n"+
		"hint: set binlog_row_image=FULL on the server for new changes; read these with --format json, maxwell or canal, which leave absent columns out",
		e.Pos.File, e.Pos.Offset, e.Row, e.DB, e.Table, e.Column, e.Format)
}

// checkFull returns a *PartialImageError when row lacks a column.
func checkFull(format string, c *change.Change, row change.Row) error {
	for i := range row {
		if row[i].IsAbsent() {
			return &PartialImageError{Format: format, DB: c.Table.DB, Table: c.Table.Name,
				Column: c.Table.Columns[i].Name, Pos: c.Pos, Row: c.RowIndex}
		}
	}
	if len(row) < len(c.Table.Columns) {
		return &PartialImageError{Format: format, DB: c.Table.DB, Table: c.Table.Name,
			Column: c.Table.Columns[len(row)].Name, Pos: c.Pos, Row: c.RowIndex}
	}
	return nil
}

func appendString(b []byte, s string) []byte      { return jsontext.AppendStringOf(b, s) }
func appendStringBytes(b []byte, s []byte) []byte { return jsontext.AppendString(b, s) }

func appendBase64(b []byte, src []byte) []byte { return jsontext.AppendBase64(b, src) }

func appendFloat(b []byte, f float64, bits int) []byte { return jsontext.AppendFloat(b, f, bits) }

// appendNumberText writes DECIMAL text as a JSON number (it already is
// one: optional '-', digits, optional '.' and digits).
func appendNumberText(b []byte, s []byte) []byte {
	if len(s) == 0 {
		return append(b, '0')
	}
	return append(b, s...)
}

// appendMillis writes t as Unix milliseconds.
func appendMillis(b []byte, t time.Time) []byte { return strconv.AppendInt(b, t.UnixMilli(), 10) }
