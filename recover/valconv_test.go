package recovery

import (
	"strconv"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// col reads one column definition ("c TYPE …") as parseColDef does.
func col(t *testing.T, def string) *tablemap.Column {
	t.Helper()
	sql := "c " + def
	c, err := schemahist.ParseColumn(sql, schemahist.Collation("utf8mb4", "", true), true)
	if err != nil {
		t.Fatalf("%s: %v", def, err)
	}
	return &c
}

func show1(v change.Value) string {
	switch v.Kind() {
	case change.Null:
		return "NULL"
	case change.Int:
		return strconv.FormatInt(v.Int(), 10)
	case change.Uint:
		return strconv.FormatUint(v.Uint(), 10)
	case change.Float32, change.Float64:
		s, _ := gcvt(v.Float(), v.Kind() == change.Float32, 311)
		return s
	}
	return string(v.Bytes())
}

// The expected values are what MariaDB 10.11 stored (ALTER TABLE …
// MODIFY, an empty sql_mode); e2e/recover_alter_test.go checks many more
// against the server itself.
func TestConvertValue(t *testing.T) {
	f64 := change.Float64Value
	txt := func(s string) change.Value { return change.TextValue(change.String, []byte(s)) }
	dec := func(s string) change.Value { return change.TextValue(change.Decimal, []byte(s)) }
	for _, c := range []struct {
		v        change.Value
		from, to string
		want     string
	}{
		{f64(4.5), "DOUBLE", "DECIMAL(10,3)", "4.500"},
		{dec("4.500"), "DECIMAL(10,3)", "INT", "5"},
		{f64(4.5), "DOUBLE", "INT", "4"},
		{f64(5.5), "DOUBLE", "TINYINT", "6"},
		{f64(1e20), "DOUBLE", "BIGINT UNSIGNED", "9223372036854775807"},
		{f64(-4.5), "DOUBLE", "TINYINT UNSIGNED", "0"},
		{dec("-4.5000"), "DECIMAL(10,4)", "INT", "-5"},
		{dec("999999.9999"), "DECIMAL(10,4)", "DECIMAL(6,3)", "999.999"},
		{f64(2.675), "DOUBLE", "DECIMAL(10,2)", "2.68"},
		{txt("4.5"), "VARCHAR(20)", "INT", "4"},
		{txt("12abc"), "VARCHAR(20)", "INT", "12"},
		{txt("1e3"), "VARCHAR(20)", "DECIMAL(10,2)", "1000.00"},
		{change.IntValue(1000), "INT", "TINYINT", "127"},
		{change.IntValue(-5), "INT", "SMALLINT UNSIGNED", "0"},
		{change.IntValue(123456), "INT", "VARCHAR(3)", "123"},
		{txt("héllo wörld"), "VARCHAR(20)", "VARCHAR(3)", "hél"},
		{txt("a🎉b"), "VARCHAR(10)", "VARCHAR(10) CHARACTER SET latin1", "a?b"},
		{txt("a  "), "VARCHAR(10)", "CHAR(2)", "a"},
		{f64(123456789012345678), "DOUBLE", "VARCHAR(30)", "1.2345678901234568e17"},
		{f64(2.5e-7), "DOUBLE", "VARCHAR(30)", "0.00000025"},
		{change.TextValue(change.Datetime, []byte("2024-01-01 12:00:00.999999")), "DATETIME(6)", "DATETIME(3)", "2024-01-01 12:00:00.999"},
		{change.TextValue(change.Date, []byte("0000-00-00")), "DATE", "DATETIME(2)", "0000-00-00 00:00:00.00"},
		{change.EnumValue(1, []byte("a")), "ENUM('a','b')", "ENUM('b','a')", "a"},
		{change.EnumValue(1, []byte("a")), "ENUM('a','b')", "ENUM('b')", ""},
		{change.SetValue(5, []byte("x,z")), "SET('x','y','z')", "SET('z','x')", "z,x"},
		{change.NullValue(), "INT", "INT NOT NULL", "0"},
	} {
		from, to := col(t, c.from), col(t, c.to)
		got, ok := convertValue(c.v, from, to, session{})
		if !ok || show1(got) != c.want {
			t.Errorf("%s %s → %s: %s (ok %v), want %s", c.from, show1(c.v), c.to, show1(got), ok, c.want)
		}
	}
}

// Values come from the binlog: no value may panic a conversion, and a
// conversion said to be exact gives a value of the target column's kind.
func FuzzConvertValue(f *testing.F) {
	types := []string{"TINYINT", "INT UNSIGNED", "BIGINT", "DECIMAL(10,3)", "DECIMAL(5,0) UNSIGNED", "FLOAT", "DOUBLE",
		"VARCHAR(5)", "CHAR(3) CHARACTER SET latin1", "TINYTEXT", "VARBINARY(4)", "BINARY(3)", "DATETIME(2)", "DATE",
		"TIME(1)", "TIMESTAMP(3)", "YEAR", "ENUM('a','b')", "SET('x','y')", "BIT(3)"}
	for _, s := range []string{"4.5", "-1e300", "2024-02-29 12:00:00.999", "a,b", "é🎉", "", "99999999999999999999.5"} {
		f.Add(s, uint8(0), uint8(3), int64(7), 1.5)
	}
	f.Fuzz(func(t *testing.T, s string, fi, ti uint8, n int64, x float64) {
		from, to := col(t, types[int(fi)%len(types)]), col(t, types[int(ti)%len(types)])
		for _, v := range []change.Value{
			change.TextValue(change.String, []byte(s)), change.TextValue(change.Decimal, []byte(s)),
			change.TextValue(change.Datetime, []byte(s)), change.TextValue(change.Bytes, []byte(s)),
			change.IntValue(n), change.UintValue(uint64(n)), change.Float64Value(x), change.Float32Value(float32(x)),
			change.EnumValue(uint64(n)&3, []byte(s)), change.SetValue(uint64(n), []byte(s)),
			change.TimestampValue(uint64(n)&0xffffffff, []byte(s)),
		} {
			convertValue(v, from, to, session{mode: uint64(n)})
			convertValue(v, from, to, session{tz: zoneOf("+05:30")})
		}
	})
}

// Text the source holds that is not UTF-8 to Go (MariaDB's utf8mb4 stores
// surrogates) keeps its bytes where the new column surely holds them, and
// is otherwise not known (the column's zero), never U+FFFD.
func TestConvertUncheckedText(t *testing.T) {
	sur := change.UncheckedText([]byte("a\xed\xa0\x80"), 45) // utf8mb4_general_ci
	for _, c := range []struct {
		from, to string
		want     string // "" with ok false: not known
	}{
		{"VARCHAR(4)", "VARCHAR(10)", "a\xed\xa0\x80"},
		{"VARCHAR(4)", "TEXT", "a\xed\xa0\x80"},
		{"VARCHAR(4)", "VARBINARY(10)", "a\xed\xa0\x80"},
		{"VARCHAR(4)", "VARCHAR(2)", "a\xed\xa0\x80"},          // two characters, as the server counts
		{"VARCHAR(4)", "VARCHAR(1)", ""},                       // cut
		{"VARCHAR(4)", "VARCHAR(10) CHARACTER SET latin1", ""}, // converted by the server
		{"VARCHAR(4)", "CHAR(10)", ""},
	} {
		got, ok := convertValue(sur, col(t, c.from), col(t, c.to), session{})
		switch {
		case c.want == "" && ok:
			t.Errorf("%s → %s: %q said exact", c.from, c.to, got.Bytes())
		case c.want != "" && (!ok || string(got.Bytes()) != c.want):
			t.Errorf("%s → %s: %q (ok %v), want %q", c.from, c.to, got.Bytes(), ok, c.want)
		}
	}
}

func TestUTF8Chars(t *testing.T) {
	for _, c := range []struct {
		b    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xed\xa0\x80", 2}, {"\xed\xa0\x80\xed\xb0\x80", 2},
		{"\xc3\xa9\xf0\x9f\x98\x80", 2},
		{"a\x80", 2}, {"\xed\xa0", 2}, {"\xed\xa0a", 3}, {"\xff", 1}, // not sequences: len(b)
	} {
		if got := utf8Chars([]byte(c.b)); got != c.want {
			t.Errorf("utf8Chars(%q) = %d, want %d", c.b, got, c.want)
		}
	}
}
