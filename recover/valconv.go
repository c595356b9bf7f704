package recovery

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/shopspring/decimal"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// This file converts a stored value from a column's type before an ALTER
// TABLE to its type after it, the way MariaDB's ALTER TABLE copies rows
// (checked against the server in e2e/recover_alter_test.go): numbers
// round (DECIMAL half away from zero, DOUBLE to even) and clip to the new
// range, text is cut to the new length and converted to the new
// character set ('?' for what it cannot hold), fractional seconds are
// cut, ENUM and SET members are matched by label. What it cannot
// reproduce exactly it says (ok false); the caller reports it.

// sqlModeTimeRoundFractional is MariaDB's TIME_ROUND_FRACTIONAL bit.
const sqlModeTimeRoundFractional = 1 << 34

// session is what of the ALTER's session decides a conversion: its
// sql_mode, and its time zone (nil: unknown) for TIMESTAMP.
type session struct {
	mode uint64
	tz   *time.Location
}

type category uint8

const (
	catOther category = iota
	catInt
	catFloat
	catDouble
	catDecimal
	catYear
	catDate
	catDatetime
	catTimestamp
	catTime
	catText
	catBinary
	catEnum
	catSet
)

func categoryOf(c *tablemap.Column) category {
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		return catInt
	case mysql.MYSQL_TYPE_FLOAT:
		return catFloat
	case mysql.MYSQL_TYPE_DOUBLE:
		return catDouble
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return catDecimal
	case mysql.MYSQL_TYPE_YEAR:
		return catYear
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return catDate
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return catDatetime
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return catTimestamp
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return catTime
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_BLOB:
		if c.IsBinary() {
			return catBinary
		}
		return catText
	case mysql.MYSQL_TYPE_ENUM:
		return catEnum
	case mysql.MYSQL_TYPE_SET:
		return catSet
	}
	return catOther
}

// sameType reports whether a value of from needs no conversion to to.
func sameType(a, b *tablemap.Column) bool {
	return a.Type == b.Type && a.Length == b.Length && a.Unsigned == b.Unsigned && a.Collation == b.Collation && a.Compressed == b.Compressed &&
		a.Precision == b.Precision && a.Scale == b.Scale && a.FSP == b.FSP && a.Bits == b.Bits &&
		a.GeometryType == b.GeometryType && slices.Equal(a.EnumValues, b.EnumValues) && slices.Equal(a.SetValues, b.SetValues)
}

// convertValue returns v (a value of column from) as column to holds it
// after ALTER TABLE under sql_mode mode; ok is false when the result is
// not known to be what the server stored.
func convertValue(v change.Value, from, to *tablemap.Column, sess session) (change.Value, bool) {
	if v.IsAbsent() {
		return v, true
	}
	if v.IsNull() {
		if to.Nullable {
			return v, true
		}
		return implicitDefault(to), true
	}
	if sameType(from, to) {
		return v, true
	}
	fc, tc := categoryOf(from), categoryOf(to)
	switch tc {
	case catInt:
		return toInt(v, fc, to)
	case catYear:
		return toYear(v, fc, to)
	case catDecimal:
		d, ok := decimalText(v, fc)
		if !ok {
			return implicitDefault(to), false
		}
		return decimalValue(d, to)
	case catDouble, catFloat:
		f, ok := floatOf(v, fc)
		if tc == catFloat {
			if math.Abs(f) > math.MaxFloat32 {
				f = math.Copysign(math.MaxFloat32, f)
			}
			return change.Float32Value(float32(f)), ok
		}
		return change.Float64Value(f), ok
	case catText:
		if fc == catText && !utf8.Valid(v.Bytes()) {
			// Text the source holds but that is not UTF-8 to Go
			// (MariaDB's utf8mb4 stores surrogates), as the binlog
			// has it: kept where the new column holds it whole in the
			// same character set; else it is not known (the column's
			// zero, reported).
			b := v.Bytes()
			fits := utf8Chars(b) <= maxChars(to) && len(b) <= maxTextBytes(to) && to.Type != mysql.MYSQL_TYPE_STRING
			if fits && charsetName(from.Collation) == charsetName(to.Collation) && !to.Compressed {
				return v, true
			}
			return implicitDefault(to), false
		}
		s, ok := textOf(v, fc, to)
		cut, ok2 := fitText(s, to)
		if to.Compressed && cut != s {
			// MariaDB did not cut an over-long value into a COMPRESSED
			// column in our tests: its limit is not the declared length.
			return change.TextValue(change.String, []byte(s)), false
		}
		return change.TextValue(change.String, []byte(cut)), ok && ok2
	case catBinary:
		var b []byte
		switch fc {
		case catBinary:
			b = append(b, v.Bytes()...)
		case catText:
			if !utf8.Valid(v.Bytes()) {
				// Not UTF-8 to Go: the column's own bytes (surrogates in
				// utf8mb4), which the server copies into the binary
				// column as they are.
				if _, unchecked := v.UncheckedUTF8(); !unchecked {
					return implicitDefault(to), false
				}
				b = append(b, v.Bytes()...)
				break
			}
			var ok bool
			if b, ok = schemahist.EncodeText(string(v.Bytes()), from.Collation); !ok {
				return implicitDefault(to), false
			}
		default:
			return implicitDefault(to), false
		}
		if len(b) > maxBytes(to) {
			b = b[:maxBytes(to)]
		}
		if to.Type == mysql.MYSQL_TYPE_STRING {
			for len(b) < to.Length {
				b = append(b, 0)
			}
		}
		return change.TextValue(change.Bytes, b), true
	case catEnum:
		switch fc {
		case catEnum, catText, catSet:
			if fc == catEnum && v.Uint() == 0 {
				return v, true // the error value stays the error value, not a member ''
			}
			return enumByLabel(inRepertoire(string(v.Bytes()), to.Collation), to), true
		case catInt:
			i := v.Int()
			if v.Kind() == change.Uint {
				i = int64(min(v.Uint(), math.MaxInt64))
			}
			if i >= 1 && i <= int64(len(to.EnumValues)) {
				return change.EnumValue(uint64(i), []byte(to.EnumValues[i-1])), true
			}
			return change.EnumValue(0, nil), true
		}
	case catSet:
		if fc == catSet || fc == catText || fc == catEnum {
			return setByLabels(inRepertoire(string(v.Bytes()), to.Collation), to)
		}
	case catDate, catDatetime, catTime, catTimestamp:
		return toTemporal(v, fc, tc, from, to, sess)
	}
	return implicitDefault(to), false
}

// toInt stores a value into an integer column: DECIMAL rounds half away
// from zero, DOUBLE to even, text takes its leading integer; then it
// clips to the column's range.
func toInt(v change.Value, fc category, to *tablemap.Column) (change.Value, bool) {
	var d decimal.Decimal
	ok := true
	switch fc {
	case catInt, catYear:
		if v.Kind() == change.Uint {
			d = decimal.NewFromUint64(v.Uint())
		} else {
			d = decimal.NewFromInt(v.Int())
		}
	case catDecimal:
		d, _ = decimal.NewFromString(string(v.Bytes()))
		d = d.Round(0)
	case catFloat, catDouble:
		// The server reads the number as a signed BIGINT first (val_int):
		// it clips there before the column's range (1e20 into BIGINT
		// UNSIGNED is 9223372036854775807).
		f := math.RoundToEven(v.Float())
		if math.IsNaN(f) {
			return implicitDefault(to), false
		}
		switch {
		case f >= math.MaxInt64:
			d = decimal.NewFromInt(math.MaxInt64)
		case f <= math.MinInt64:
			d = decimal.NewFromInt(math.MinInt64)
		default:
			d = decimal.NewFromInt(int64(f))
		}
	case catText:
		d = decimal.RequireFromString(leadingInt(string(v.Bytes())))
	case catEnum, catSet:
		d = decimal.NewFromUint64(v.Uint())
	default:
		return implicitDefault(to), false
	}
	lo, hi := intRange(to)
	if d.LessThan(lo) {
		d = lo
	}
	if d.GreaterThan(hi) {
		d = hi
	}
	if to.Unsigned {
		return change.UintValue(d.BigInt().Uint64()), ok
	}
	return change.IntValue(d.IntPart()), ok
}

func intRange(c *tablemap.Column) (decimal.Decimal, decimal.Decimal) {
	bits := map[byte]int{mysql.MYSQL_TYPE_TINY: 8, mysql.MYSQL_TYPE_SHORT: 16, mysql.MYSQL_TYPE_INT24: 24,
		mysql.MYSQL_TYPE_LONG: 32, mysql.MYSQL_TYPE_LONGLONG: 64}[c.Type]
	two := decimal.NewFromInt(2)
	if c.Unsigned {
		return decimal.Zero, two.Pow(decimal.NewFromInt(int64(bits))).Sub(decimal.NewFromInt(1))
	}
	h := two.Pow(decimal.NewFromInt(int64(bits - 1)))
	return h.Neg(), h.Sub(decimal.NewFromInt(1))
}

// leadingInt is the integer a text starts with ("12abc" → 12, "4.5" → 4).
func leadingInt(s string) string {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return "0"
	}
	return strings.TrimPrefix(s[:end], "+")
}

// leadingNumber is the decimal number (with exponent) a text starts with.
func leadingNumber(s string) string {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	start := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end < len(s) && s[end] == '.' {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	if end == start || s[start:end] == "." {
		return "0"
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		e := end + 1
		if e < len(s) && (s[e] == '-' || s[e] == '+') {
			e++
		}
		ds := e
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
		}
		if e > ds {
			end = e
		}
	}
	return strings.TrimPrefix(s[:end], "+")
}

// decimalText reads a value as a plain decimal number ("-12.5", no
// exponent), as DECIMAL columns store them: DOUBLE through its shortest
// text.
func decimalText(v change.Value, fc category) (string, bool) {
	switch fc {
	case catInt, catYear:
		if v.Kind() == change.Uint {
			return strconv.FormatUint(v.Uint(), 10), true
		}
		return strconv.FormatInt(v.Int(), 10), true
	case catDecimal:
		return string(v.Bytes()), true
	case catDouble, catFloat:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", false
		}
		return strconv.FormatFloat(f, 'f', -1, 64), true
	case catText:
		n := leadingNumber(string(v.Bytes()))
		if strings.ContainsAny(n, "eE") {
			d, err := decimal.NewFromString(n)
			if err != nil {
				return "", false
			}
			return d.String(), true
		}
		return n, true
	case catEnum, catSet:
		return strconv.FormatUint(v.Uint(), 10), true
	}
	return "", false
}

// decimalValue rounds a plain decimal text to the column's scale (half
// away from zero) and clips it to the column's range, without big-number
// arithmetic (a table's rows are converted at each ALTER).
func decimalValue(txt string, to *tablemap.Column) (change.Value, bool) {
	neg := strings.HasPrefix(txt, "-")
	txt = strings.TrimLeft(txt, "+-")
	ip, fp, _ := strings.Cut(txt, ".")
	if strings.Trim(ip+fp, "0123456789") != "" {
		return implicitDefault(to), false
	}
	ip = strings.TrimLeft(ip, "0")
	sc := to.Scale
	if len(fp) > sc {
		up := fp[sc] >= '5'
		fp = fp[:sc]
		if up {
			digits, carry := incDigits(ip + fp)
			if carry {
				digits = "1" + digits
			}
			ip, fp = digits[:len(digits)-sc], digits[len(digits)-sc:]
		}
	}
	fp += strings.Repeat("0", sc-len(fp))
	zero := strings.Trim(ip+fp, "0") == ""
	switch {
	case neg && to.Unsigned && !zero:
		ip, fp, neg = "", strings.Repeat("0", sc), false
	case len(ip) > to.Precision-sc:
		ip, fp = strings.Repeat("9", to.Precision-sc), strings.Repeat("9", sc)
	}
	if ip == "" {
		ip = "0"
	}
	out := make([]byte, 0, len(ip)+len(fp)+2)
	if neg && !zero {
		out = append(out, '-')
	}
	out = append(out, ip...)
	if sc > 0 {
		out = append(out, '.')
		out = append(out, fp...)
	}
	return change.TextValue(change.Decimal, out), true
}

func floatOf(v change.Value, fc category) (float64, bool) {
	switch fc {
	case catInt, catYear:
		if v.Kind() == change.Uint {
			return float64(v.Uint()), true
		}
		return float64(v.Int()), true
	case catDecimal:
		f, err := strconv.ParseFloat(string(v.Bytes()), 64)
		return f, err == nil
	case catDouble, catFloat:
		return v.Float(), true
	case catText:
		f, err := strconv.ParseFloat(leadingNumber(string(v.Bytes())), 64)
		if err != nil {
			return 0, false
		}
		return f, true
	case catEnum, catSet:
		return float64(v.Uint()), true
	}
	return 0, false
}

// textOf is a value's text as a text column stores it (before the cut to
// the column's length).
func textOf(v change.Value, fc category, to *tablemap.Column) (string, bool) {
	switch fc {
	case catYear:
		return fmt.Sprintf("%04d", v.Int()), true
	case catInt:
		if v.Kind() == change.Uint {
			return strconv.FormatUint(v.Uint(), 10), true
		}
		return strconv.FormatInt(v.Int(), 10), true
	case catDecimal, catDate, catDatetime, catTime, catTimestamp, catEnum, catSet:
		return string(v.Bytes()), true
	case catFloat, catDouble:
		// The number's own text (val_str), then cut to the column.
		return gcvt(v.Float(), fc == catFloat, 311)
	case catText:
		return string(v.Bytes()), true
	case catBinary:
		return string(v.Bytes()), utf8.Valid(v.Bytes())
	}
	return "", false
}

func isUTF8Column(c *tablemap.Column) bool {
	cs := charsetName(c.Collation)
	return cs == "utf8mb4" || cs == "utf8mb3" || cs == "ascii"
}

// enumByLabel is the ENUM member a text names (compared without letter
// case for a _ci collation); the error value ” (index 0) when none, or
// the member numbered by a text that is a number.
func enumByLabel(s string, to *tablemap.Column) change.Value {
	ci := !strings.HasSuffix(collationName(to.Collation), "_bin")
	s = strings.TrimRight(s, " ")
	for i, l := range to.EnumValues {
		if l == s || ci && strings.EqualFold(l, s) {
			return change.EnumValue(uint64(i+1), []byte(l))
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(to.EnumValues) {
		return change.EnumValue(uint64(n), []byte(to.EnumValues[n-1]))
	}
	return change.EnumValue(0, nil)
}

// setByLabels is the SET value of comma-separated labels; labels not in
// the set are dropped.
func setByLabels(s string, to *tablemap.Column) (change.Value, bool) {
	ci := !strings.HasSuffix(collationName(to.Collation), "_bin")
	var mask uint64
	if s != "" {
		for _, part := range strings.Split(s, ",") {
			for i, l := range to.SetValues {
				if l == part || ci && strings.EqualFold(l, part) {
					mask |= 1 << i
				}
			}
		}
	}
	if mask == 0 && s != "" {
		// A number names the members by their bits.
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			mask = uint64(n) & (1<<len(to.SetValues) - 1)
		} else if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			mask = n & (1<<len(to.SetValues) - 1)
		}
	}
	var labels []string
	for i, l := range to.SetValues {
		if mask&(1<<i) != 0 {
			labels = append(labels, l)
		}
	}
	return change.SetValue(mask, []byte(strings.Join(labels, ","))), true
}

// utf8Chars is how many characters the server counts in b, text of a
// UTF-8 column that Go does not take for UTF-8 (surrogates, which
// MariaDB's utf8mb4 stores as any other three bytes; charset.UTF8SeqLen).
// Where b is not made of such characters it is len(b), which no count of
// the server's exceeds.
func utf8Chars(b []byte) int {
	if n, ok := charset.UTF8Chars(b, 4); ok {
		return n
	}
	return len(b)
}
