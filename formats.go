package binlogcdc

// --format debezium|maxwell|canal (issue 14): other tools' JSON shapes for
// the JSON lines output and for --to kafka:// (sink/envelope).

import (
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/internal/clock"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/envelope"
)

// EnvelopeOptions are the flags of the debezium format.
type EnvelopeOptions struct {
	WithSchema  bool     // --with-schema
	Decimal     string   // --debezium-decimal-handling-mode
	Time        string   // --debezium-time-precision-mode
	Bigint      string   // --debezium-bigint-unsigned-handling-mode
	Binary      string   // --debezium-binary-handling-mode
	TimeAdjust  bool     // --debezium-enable-time-adjuster (true in DefaultStreamOptions)
	FloatDouble []string // --debezium-float-double-columns
	RowQuery    bool     // --maxwell-output-row-query
}

// AddFlags binds the --with-schema and --debezium-* flags.
func (o *EnvelopeOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.WithSchema, "with-schema", false, "--format debezium: add the Kafka Connect schema to each key and value (JsonConverter schemas.enable=true), the schema change records' of --ddl too")
	f.StringVar(&o.Decimal, "debezium-decimal-handling-mode", envelope.DecimalPrecise, "--format debezium: DECIMAL as `MODE` precise (base64 of the unscaled value, Kafka Connect Decimal), string, or double; Flink and RisingWave need string")
	f.StringVar(&o.Time, "debezium-time-precision-mode", envelope.TimeAdaptiveMicros, "--format debezium: temporal `MODE` adaptive_time_microseconds (TIME µs, DATETIME ms or µs by fsp), connect (TIME and DATETIME ms) or isostring (DATE, TIME, DATETIME as ISO-8601 UTC text)")
	f.StringVar(&o.Binary, "debezium-binary-handling-mode", envelope.BinaryBytes, "--format debezium: BINARY, VARBINARY and BLOB as `MODE` bytes (Kafka Connect bytes, base64 in JSON), base64, base64-url-safe or hex (strings)")
	f.BoolVar(&o.TimeAdjust, "debezium-enable-time-adjuster", true, "--format debezium: read DATE and DATETIME years 0-69 as 2000-2069 and 70-99 as 1970-1999, as Debezium's enable.time.adjuster does by default; =false writes them as stored")
	f.StringSliceVar(&o.FloatDouble, "debezium-float-double-columns", nil, "--format debezium: `DB.TABLE.COL`,… (* matches any characters) are FLOAT(M,D) columns, which Debezium writes as double (5.61 as 5.610000133514404); the binlog does not tell FLOAT(M,D) from FLOAT, which it writes as float")
	f.BoolVar(&o.RowQuery, "maxwell-output-row-query", false, "--format maxwell: add \"query\", the statement that made each row, as Maxwell's output_row_query does (needs binlog_annotate_row_events on MariaDB, binlog_rows_query_log_events on MySQL)")
	f.StringVar(&o.Bigint, "debezium-bigint-unsigned-handling-mode", envelope.BigintLong, "--format debezium: BIGINT UNSIGNED as `MODE` long (int64: values above 2^63-1 wrap, as in Debezium) or precise (Kafka Connect Decimal)")
}

// isEnvelope reports whether format is one of sink/envelope's.
func isEnvelope(format string) bool {
	for _, f := range envelope.Formats {
		if f == format {
			return true
		}
	}
	return false
}

// check validates the flags for format (every format has DDL records,
// with or without --with-schema).
func (o *EnvelopeOptions) check(f *pflag.FlagSet, format string) error {
	bad := func(msg, hint string) error { return UsageError{Msg: msg, Hint: hint} }
	if format != "debezium" {
		for _, n := range []string{"with-schema", "debezium-decimal-handling-mode", "debezium-time-precision-mode", "debezium-bigint-unsigned-handling-mode",
			"debezium-binary-handling-mode", "debezium-enable-time-adjuster", "debezium-float-double-columns"} {
			if flagChanged(f, n) {
				return bad("--"+n+" needs --format debezium", "--format debezium --"+n+" …")
			}
		}
	}
	if format != "maxwell" && flagChanged(f, "maxwell-output-row-query") {
		return bad("--maxwell-output-row-query needs --format maxwell", "--format maxwell --maxwell-output-row-query")
	}
	if isEnvelope(format) {
		if _, err := o.encoder(format, ""); err != nil {
			return bad("--format "+format+": "+err.Error(), "see 'binlogcdc read --help'")
		}
	}
	return nil
}

// encoder returns the encoder of format, nil for binlogcdc's own json.
// name is Debezium's topic.prefix (the Kafka topic prefix).
func (o *EnvelopeOptions) encoder(format, name string) (envelope.Encoder, error) {
	if !isEnvelope(format) {
		return nil, nil
	}
	opts := envelope.Options{Format: format, Name: name, Now: clock.Now}
	if format == "debezium" {
		opts.WithSchema, opts.DecimalHandlingMode, opts.TimePrecisionMode, opts.BigintUnsignedHandlingMode = o.WithSchema, o.Decimal, o.Time, o.Bigint
		opts.BinaryHandlingMode, opts.NoTimeAdjuster, opts.FloatDouble = o.Binary, !o.TimeAdjust, o.FloatDouble
	}
	if format == "maxwell" {
		opts.MaxwellRowQuery = o.RowQuery
	}
	return envelope.New(opts)
}

// ddlSplit is how format writes DDL statements: one Maxwell record per
// table or database changed, one Debezium schema change per table (or
// per statement about none), one record per statement otherwise.
func ddlSplit(format string) pipeline.DDLSplit {
	switch format {
	case "maxwell":
		return pipeline.DDLPerChange
	case "debezium":
		return pipeline.DDLPerChangeOrWhole
	}
	return pipeline.DDLWhole
}
