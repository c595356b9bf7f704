package envelope

import (
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestDecimalBytes: Kafka Connect's Decimal is Java's
// BigInteger.toByteArray of the unscaled value: minimal big-endian two's
// complement.
func TestDecimalBytes(t *testing.T) {
	d := newDebezium(Options{})
	for _, tc := range []struct{ text, hex string }{
		{"0", "00"}, {"0.00", "00"}, {"1", "01"}, {"-1", "ff"}, {"127", "7f"}, {"128", "0080"}, {"-128", "80"}, {"-129", "ff7f"},
		{"999.99", "01869f"}, {"-0.50", "ce"}, {"255", "00ff"}, {"-256", "ff00"},
		{"999999999999999999", "0de0b6b3a763ffff"}, {"-999999999999999999", "f21f494c589c0001"},
	} {
		b := d.appendDecimalBytes(nil, []byte(tc.text))
		got, err := base64.StdEncoding.DecodeString(string(b[1 : len(b)-1]))
		if err != nil || hex.EncodeToString(got) != tc.hex {
			t.Errorf("%s: %x, want %s", tc.text, got, tc.hex)
		}
	}
	// Beyond int64: compare with math/big's two's complement.
	for _, text := range []string{"99999999999999999999999999999999999.999999999999999999999999999999",
		"-99999999999999999999999999999999999.999999999999999999999999999999", "-12345678901234567890", "9223372036854775808"} {
		b := d.appendDecimalBytes(nil, []byte(text))
		got, _ := base64.StdEncoding.DecodeString(string(b[1 : len(b)-1]))
		want := twos(text)
		if hex.EncodeToString(got) != hex.EncodeToString(want) {
			t.Errorf("%s: %x, want %x", text, got, want)
		}
	}
}

// twos is BigInteger.toByteArray of the digits of text.
func twos(text string) []byte {
	digits := ""
	for _, c := range text {
		if c != '.' {
			digits += string(c)
		}
	}
	x, _ := new(big.Int).SetString(digits, 10)
	n := x.BitLen()/8 + 1
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	if x.Sign() < 0 {
		x.Add(x, m)
	}
	out := x.FillBytes(make([]byte, n))
	return minimalTwos(out)
}

func TestTemporal(t *testing.T) {
	for _, tc := range []struct {
		s    string
		days int64
	}{{"1970-01-01", 0}, {"1969-12-31", -1}, {"2024-06-15", 19889}, {"0001-01-01", -719162}, {"9999-12-31", 2932896}, {"2000-03-01", 11017}} {
		y, m, d, ok := parseDate([]byte(tc.s))
		if !ok || daysFromCivil(y, m, d) != tc.days {
			t.Errorf("%s: %d, want %d", tc.s, daysFromCivil(y, m, d), tc.days)
		}
	}
	for _, s := range []string{"0000-00-00", "2024-00-01", "2024-01-00", "2024-1-01"} {
		if _, _, _, ok := parseDate([]byte(s)); ok {
			t.Errorf("%s: parsed", s)
		}
	}
	for _, tc := range []struct {
		s  string
		us int64
	}{{"00:00:00", 0}, {"-00:00:01", -1e6}, {"838:59:59", 3020399e6}, {"12:00:00.5", 43200500000}, {"-01:00:00.000001", -3600000001}} {
		if us, ok := parseTime([]byte(tc.s)); !ok || us != tc.us {
			t.Errorf("%s: %d, want %d", tc.s, us, tc.us)
		}
	}
	if us, ok := parseDatetime([]byte("1969-12-31 23:59:59.999")); !ok || floorDiv(us, 1000) != -1 {
		t.Errorf("1969-12-31 23:59:59.999: %d µs", us)
	}
}

func TestWKT(t *testing.T) {
	for _, tc := range []struct{ wkb, want string }{
		{"0101000000000000000000f03f0000000000000040", "POINT (1 2)"},
		{"00000000013ff00000000000004000000000000000", "POINT (1 2)"},
		{"010200000000000000", "LINESTRING EMPTY"},
		{"0101", "INVALID"},
	} {
		raw, _ := hex.DecodeString(tc.wkb)
		got, _ := appendWKT(nil, raw, 0)
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.wkb, got, tc.want)
		}
	}
}

// FuzzParsers: the WKB walker and the temporal parsers never panic, and
// WKT output is bounded by the input.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"0101000000000000000000f03f0000000000000040", "0107000000020000000101000000", "00000000013ff0"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Add([]byte("2024-06-15 12:34:56.123456"))
	f.Add([]byte("-838:59:59.000001"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := appendWKT(nil, b, 0)
		if len(out) > 64*len(b)+64 {
			t.Fatalf("%d bytes of WKT from %d of WKB", len(out), len(b))
		}
		wkbPoint(b)
		parseDatetime(b)
		parseTime(b)
		parseDate(b)
	})
}

// TestSetEmptyLabel: a SET member whose label is empty, which the
// decoder's (the server's) text leaves out when it comes first among the
// value's members, is written in every format: Debezium and Canal join
// it (",x"), Maxwell lists it ([""]).
func TestSetEmptyLabel(t *testing.T) {
	col := &tablemap.Column{Name: "s", Type: mysql.MYSQL_TYPE_SET, SetValues: []string{"", "x", "y"}}
	d, m := newDebezium(Options{}), &maxwell{}
	for _, tc := range []struct {
		v                    change.Value
		debezium, mxw, canal string
	}{
		{change.SetValue(0, nil), `""`, `[]`, `""`},
		{change.SetValue(1, nil), `""`, `[""]`, `""`},
		{change.SetValue(3, []byte("x")), `",x"`, `["","x"]`, `",x"`},
		{change.SetValue(7, []byte("x,y")), `",x,y"`, `["","x","y"]`, `",x,y"`},
		{change.SetValue(6, []byte("x,y")), `"x,y"`, `["x","y"]`, `"x,y"`},
	} {
		if got := string(d.appendValue(nil, col, tc.v)); got != tc.debezium {
			t.Errorf("debezium mask %d: %s, want %s", tc.v.Uint(), got, tc.debezium)
		}
		if got := string(m.appendValue(nil, col, tc.v)); got != tc.mxw {
			t.Errorf("maxwell mask %d: %s, want %s", tc.v.Uint(), got, tc.mxw)
		}
		if got := string(appendCanalValue(nil, col, tc.v)); got != tc.canal {
			t.Errorf("canal mask %d: %s, want %s", tc.v.Uint(), got, tc.canal)
		}
	}
}
