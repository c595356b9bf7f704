package envelope

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// dbzValue encodes one value of a one-column table t.c with opts.
func dbzValue(t *testing.T, opts Options, col tablemap.Column, v change.Value) string {
	t.Helper()
	opts.Format = "debezium"
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	d := e.(*debezium)
	tbl := &tablemap.Table{DB: "db", Name: "t", Columns: []tablemap.Column{col}}
	d.table(tbl)
	return string(d.appendValue(nil, &tbl.Columns[0], v))
}

// TestDebeziumFloatDouble: Debezium writes FLOAT as float, FLOAT(M,D) as
// the float's value as a double (BinlogFloatIT: FLOAT(10,2) 5.61 is
// 5.610000133514404); the binlog does not tell them apart, the columns
// named by Options.FloatDouble are FLOAT(M,D).
func TestDebeziumFloatDouble(t *testing.T) {
	col := tablemap.Column{Name: "f2", Type: mysql.MYSQL_TYPE_FLOAT, Nullable: true}
	v := change.Float32Value(5.61)
	if got := dbzValue(t, Options{}, col, v); got != "5.61" {
		t.Errorf("FLOAT: %s, want 5.61", got)
	}
	if got := dbzValue(t, Options{FloatDouble: []string{"db.t.f*"}}, col, v); got != "5.610000133514404" {
		t.Errorf("FLOAT(10,2): %s, want 5.610000133514404", got)
	}
	d := newDebezium(Options{WithSchema: true, FloatDouble: []string{"db.*.f2"}})
	tbl := &tablemap.Table{DB: "db", Name: "t", Columns: []tablemap.Column{col}}
	if got := string(d.table(tbl).valSchema); !strings.Contains(got, `{"type":"double","optional":true,"field":"f2"}`) {
		t.Errorf("schema: %s", got)
	}
	if _, err := New(Options{Format: "debezium", FloatDouble: []string{"t.f"}}); err == nil {
		t.Error("a pattern without db.table.column accepted")
	}
}

// TestDebeziumAllowedEscape: EnumeratedValues.toCommaSeparatedString
// doubles backslashes and escapes commas.
func TestDebeziumAllowedEscape(t *testing.T) {
	d := newDebezium(Options{})
	col := tablemap.Column{Name: "e", Type: mysql.MYSQL_TYPE_ENUM, EnumValues: []string{"a,b", `c\d`, "e"}}
	f := d.columnSchema(&col)
	if got := f.params[0][1]; got != `a\,b,c\\d,e` {
		t.Errorf("allowed %q", got)
	}
	if got := escapeAllowed([]string{"x", ""}); got != "x," {
		t.Errorf("allowed %q", got)
	}
}

func TestDebeziumBinaryModes(t *testing.T) {
	col := tablemap.Column{Name: "b", Type: mysql.MYSQL_TYPE_BLOB, Collation: 63}
	v := change.TextValue(change.Bytes, []byte{0xfb, 0xff, 0x01})
	for mode, want := range map[string]string{"": `"+/8B"`, BinaryBytes: `"+/8B"`, BinaryBase64: `"+/8B"`, BinaryBase64U: `"-_8B"`, BinaryHex: `"fbff01"`} {
		if got := dbzValue(t, Options{BinaryHandlingMode: mode}, col, v); got != want {
			t.Errorf("%s: %s, want %s", mode, got, want)
		}
	}
	if got := newDebezium(Options{BinaryHandlingMode: BinaryHex}).columnSchema(&col).typ; got != "string" {
		t.Errorf("hex schema type %s", got)
	}
	if _, err := New(Options{Format: "debezium", BinaryHandlingMode: "raw"}); err == nil {
		t.Error("mode raw accepted")
	}
}

// TestDebeziumTimeAdjuster: enable.time.adjuster (default) reads years
// 0-69 as 20xx and 70-99 as 19xx in DATE and DATETIME.
func TestDebeziumTimeAdjuster(t *testing.T) {
	date := tablemap.Column{Name: "d", Type: mysql.MYSQL_TYPE_DATE}
	dt := tablemap.Column{Name: "dt", Type: mysql.MYSQL_TYPE_DATETIME2}
	day := func(s string) string {
		tm, _ := time.Parse("2006-01-02", s)
		return strconv.FormatInt(tm.Unix()/86400, 10)
	}
	for _, tc := range []struct {
		in   string
		want string
		opts Options
	}{
		{"0018-04-01", day("2018-04-01"), Options{}},
		{"0069-12-31", day("2069-12-31"), Options{}},
		{"0070-01-01", day("1970-01-01"), Options{}},
		{"0099-01-01", day("1999-01-01"), Options{}},
		{"0100-01-01", day("0100-01-01"), Options{}},
		{"0018-04-01", strconv.FormatInt(time.Date(18, 4, 1, 0, 0, 0, 0, time.UTC).Unix()/86400, 10), Options{NoTimeAdjuster: true}},
	} {
		if got := dbzValue(t, tc.opts, date, change.TextValue(change.Date, []byte(tc.in))); got != tc.want {
			t.Errorf("DATE %s (%+v): %s, want %s", tc.in, tc.opts.NoTimeAdjuster, got, tc.want)
		}
	}
	if got := dbzValue(t, Options{}, dt, change.TextValue(change.Datetime, []byte("0018-04-01 00:00:01"))); got != "1522540801000" {
		t.Errorf("DATETIME: %s", got)
	}
	// YEAR: Debezium's binlog reader reads 1900 + the stored byte.
	year := tablemap.Column{Name: "y", Type: mysql.MYSQL_TYPE_YEAR}
	if got := dbzValue(t, Options{}, year, change.IntValue(0)); got != "1900" {
		t.Errorf("YEAR 0000: %s", got)
	}
}

// TestDebeziumIsoString: time.precision.mode=isostring writes DATE, TIME
// and DATETIME as IsoDate, IsoTime and IsoTimestamp (Java's ISO_OFFSET_*
// formatters in UTC); a TIME outside a day is refused.
func TestDebeziumIsoString(t *testing.T) {
	o := Options{TimePrecisionMode: TimeIsoString}
	for _, tc := range []struct {
		col  tablemap.Column
		v    change.Value
		want string
	}{
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DATE}, change.TextValue(change.Date, []byte("2024-06-15")), `"2024-06-15Z"`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DATE}, change.TextValue(change.Date, []byte("0018-04-01")), `"2018-04-01Z"`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DATE, Nullable: true}, change.TextValue(change.Date, []byte("0000-00-00")), `null`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_TIME2, FSP: 6}, change.TextValue(change.Time, []byte("12:34:56.250000")), `"12:34:56.25Z"`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_TIME2}, change.TextValue(change.Time, []byte("00:00:00")), `"00:00:00Z"`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DATETIME2, FSP: 6}, change.TextValue(change.Datetime, []byte("1969-12-31 23:59:59.000001")), `"1969-12-31T23:59:59.000001Z"`},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DATETIME2}, change.TextValue(change.Datetime, []byte("2024-02-29 00:00:00")), `"2024-02-29T00:00:00Z"`},
	} {
		if got := dbzValue(t, o, tc.col, tc.v); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.v.Bytes(), got, tc.want)
		}
	}
	d := newDebezium(o)
	col := tablemap.Column{Name: "t", Type: mysql.MYSQL_TYPE_TIME2}
	d.appendValue(nil, &col, change.TextValue(change.Time, []byte("25:00:00")))
	if d.err == nil || !strings.Contains(d.err.Error(), "TIME 25:00:00 is outside a day") {
		t.Errorf("TIME 25:00:00: %v", d.err)
	}
	if s := d.columnSchema(&col); s.typ != "string" || s.name != "io.debezium.time.IsoTime" {
		t.Errorf("schema %+v", s)
	}
}

// TestMaxwellValues: what Maxwell's tests expect where binlogcdc's
// values differ: BINARY without its padding (test_blob), dates with a
// zero part as the zero date (test_zero_created_at), a random _uuid in
// the key of a table without a primary key.
func TestMaxwellValues(t *testing.T) {
	m := &maxwell{}
	bn := tablemap.Column{Name: "b", Type: mysql.MYSQL_TYPE_STRING, Collation: 63, Length: 10}
	padded := change.TextValue(change.Bytes, []byte{0, 1, 2, 3, 0, 0, 0, 0, 0, 0})
	if got := string(m.appendValue(nil, &bn, padded)); got != `"AAECAw=="` {
		t.Errorf("BINARY(10): %s", got)
	}
	dt := tablemap.Column{Name: "d", Type: mysql.MYSQL_TYPE_DATETIME2, FSP: 3}
	for in, want := range map[string]string{
		"0003-00-00 00:00:01":     `"0000-00-00 00:00:00"`,
		"2024-06-00 12:00:00.500": `"0000-00-00 00:00:00.000"`,
		"0000-00-00 00:00:00":     `"0000-00-00 00:00:00"`,
		"2024-06-15 12:00:00":     `"2024-06-15 12:00:00"`,
	} {
		if got := string(m.appendValue(nil, &dt, change.TextValue(change.Datetime, []byte(in)))); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if got := string(m.appendValue(nil, &dt, change.TextValue(change.Date, []byte("2024-00-15")))); got != `"0000-00-00"` {
		t.Errorf("DATE 2024-00-15: %s", got)
	}
	tbl := &tablemap.Table{DB: "db", Name: "nokey", Columns: []tablemap.Column{{Name: "a", Type: mysql.MYSQL_TYPE_LONG}}}
	c := &change.Change{Op: change.Update, Table: tbl, Before: change.Row{change.IntValue(1)}, After: change.Row{change.IntValue(2)}}
	k1, ok1 := m.AppendKey(nil, c)
	k2, _ := m.AppendKey(nil, c)
	re := regexp.MustCompile(`^\{"database":"db","table":"nokey","_uuid":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"\}$`)
	if !ok1 || !re.Match(k1) || string(k1) == string(k2) {
		t.Errorf("keys %s %s", k1, k2)
	}
	if _, ok := m.AppendBeforeKey(nil, c); ok {
		t.Error("a before key (to tombstone) for a table without a primary key")
	}
}

// TestMaxwellRowQuery: output_row_query puts "query" after "table"
// (test_row_query_log_is_on), and only when the binlog has it.
func TestMaxwellRowQuery(t *testing.T) {
	e, err := New(Options{Format: "maxwell", MaxwellRowQuery: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &tablemap.Table{DB: "db", Name: "t", Columns: []tablemap.Column{{Name: "id", Type: mysql.MYSQL_TYPE_LONG}}}
	c := &change.Change{Op: change.Insert, Table: tbl, After: change.Row{change.IntValue(10)}, Query: "insert into t set id = 10 /* c */"}
	b, _ := e.AppendValue(nil, c)
	if !strings.HasPrefix(string(b), `{"database":"db","table":"t","query":"insert into t set id = 10 /* c */","type":"insert",`) {
		t.Errorf("%s", b)
	}
	c.Query = ""
	if b, _ = e.AppendValue(nil, c); strings.Contains(string(b), `"query"`) {
		t.Errorf("%s", b)
	}
	if _, err := New(Options{Format: "canal", MaxwellRowQuery: true}); err == nil {
		t.Error("row query accepted for canal")
	}
}

// FuzzModes: civilFromDays inverts daysFromCivil; the Maxwell zero date
// keeps the value's shape; the ISO writers never panic.
func FuzzModes(f *testing.F) {
	f.Add([]byte("0003-00-00 00:00:01"), int64(-719162))
	f.Add([]byte("2024-02-29 23:59:59.999999"), int64(19782))
	f.Add([]byte("-838:59:59"), int64(0))
	f.Fuzz(func(t *testing.T, s []byte, days int64) {
		if days > -1e8 && days < 1e8 {
			if y, m, d := civilFromDays(days); daysFromCivil(y, m, d) != days {
				t.Fatalf("%d: %d-%d-%d", days, y, m, d)
			}
		}
		if z := mxZeroDate(s); len(z) != len(s) {
			t.Fatalf("%q: %q", s, z)
		}
		d := newDebezium(Options{TimePrecisionMode: TimeIsoString})
		col := &tablemap.Column{Name: "c"}
		d.appendIsoDate(nil, col, s)
		d.appendIsoDatetime(nil, col, s)
		d.appendIsoTime(nil, col, change.TextValue(change.Time, s))
	})
}

// TestMaxwellBootstrapMarks: the snapshot's table marks are Maxwell's
// bootstrap-start and bootstrap-complete records (bootstrap-single-row).
func TestMaxwellBootstrapMarks(t *testing.T) {
	e, _ := New(Options{Format: "maxwell"})
	tbl := &tablemap.Table{DB: "shard_1", Name: "minimal", Columns: []tablemap.Column{{Name: "id", Type: mysql.MYSQL_TYPE_LONG}},
		PrimaryKey: []int{0}, PKNames: []string{"id"}}
	at := time.Unix(1450557744, 0)
	for mark, want := range map[uint8]string{
		change.MarkTableStart: `{"database":"shard_1","table":"minimal","type":"bootstrap-start","ts":1450557744,"data":{}}`,
		change.MarkTableEnd:   `{"database":"shard_1","table":"minimal","type":"bootstrap-complete","ts":1450557744,"data":{}}`,
	} {
		c := &change.Change{Op: change.Snapshot, Table: tbl, Mark: mark, Time: at}
		b, err := e.AppendValue(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(e.AppendTail(b, change.TxEnd{}, false)); got != want {
			t.Errorf("mark %d: %s, want %s", mark, got, want)
		}
		if k, _ := e.AppendKey(nil, c); !strings.Contains(string(k), `"_uuid":`) {
			t.Errorf("mark %d key %s", mark, k)
		}
	}
}
