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

// zoneOf reads a time_zone value whose meaning is fixed ("+05:30",
// "UTC"); nil for others (named zones follow the server's tables).
func zoneOf(s string) *time.Location {
	switch strings.ToUpper(s) {
	case "UTC", "+00:00", "-00:00", "+0:00":
		return time.UTC
	}
	if len(s) >= 5 && (s[0] == '+' || s[0] == '-') {
		h, m, ok := strings.Cut(s[1:], ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if ok && err1 == nil && err2 == nil && hh <= 14 && mm < 60 {
			off := (hh*60 + mm) * 60
			if s[0] == '-' {
				off = -off
			}
			return time.FixedZone(s, off)
		}
	}
	return nil
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
	return a.Type == b.Type && a.Length == b.Length && a.Unsigned == b.Unsigned && a.Collation == b.Collation &&
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
		s, ok := textOf(v, fc, to)
		s, ok2 := fitText(s, to)
		return change.TextValue(change.String, []byte(s)), ok && ok2
	case catBinary:
		var b []byte
		switch fc {
		case catBinary:
			b = append(b, v.Bytes()...)
		case catText:
			var ok bool
			if b, ok = encodeText(string(v.Bytes()), from.Collation); !ok {
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
			return enumByLabel(string(v.Bytes()), to), true
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
			return setByLabels(string(v.Bytes()), to)
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

// toTemporal converts between dates and times, and from their text.
func toTemporal(v change.Value, fc, tc category, from, to *tablemap.Column, sess session) (change.Value, bool) {
	s := string(v.Bytes())
	ok := true
	switch fc {
	case catDate, catDatetime, catTimestamp, catTime:
	case catText:
		if !canonicalTemporal(s, tc) {
			return implicitDefault(to), false
		}
	default:
		return implicitDefault(to), false
	}
	if (fc == catTime) != (tc == catTime) {
		return implicitDefault(to), false // TIME ↔ dates: not reproduced
	}
	sec := v.Uint()
	if (fc == catTimestamp) != (tc == catTimestamp) {
		// Across the session's time zone: known only when the binlog
		// says it and it is a fixed offset.
		if sess.tz == nil {
			return implicitDefault(to), false
		}
		var ok bool
		if s, sec, ok = acrossZone(s, fc == catTimestamp, v.Uint(), sess.tz); !ok {
			return implicitDefault(to), false
		}
	}
	date, clock, _ := strings.Cut(s, " ")
	if tc == catTime {
		clock = s
	}
	switch tc {
	case catDate:
		return change.TextValue(change.Date, []byte(date)), ok
	case catDatetime, catTimestamp, catTime:
		if clock == "" {
			clock = "00:00:00"
		}
		whole, frac, _ := strings.Cut(clock, ".")
		if len(frac) > to.FSP {
			// Fractional seconds are cut, or rounded half up under
			// TIME_ROUND_FRACTIONAL (the ALTER's sql_mode).
			up := sess.mode&sqlModeTimeRoundFractional != 0 && frac[to.FSP] >= '5'
			frac = frac[:to.FSP]
			if up {
				var carry bool
				frac, carry = incDigits(frac)
				if carry {
					sec++
					var okCarry bool
					if tc == catTime {
						whole, okCarry = timeAddSecond(whole)
					} else {
						date, whole, okCarry = datetimeAddSecond(date, whole)
					}
					ok = ok && okCarry
				}
			}
		}
		frac += strings.Repeat("0", to.FSP-len(frac))
		out := whole
		if to.FSP > 0 {
			out += "." + frac
		}
		if tc == catTime {
			return change.TextValue(change.Time, []byte(out)), ok
		}
		out = date + " " + out
		if tc == catTimestamp {
			return change.TimestampValue(sec, []byte(out)), ok
		}
		return change.TextValue(change.Datetime, []byte(out)), ok
	}
	return implicitDefault(to), false
}

// canonicalTemporal reports whether a text is in the canonical form the
// conversion above reads exactly.
func canonicalTemporal(s string, tc category) bool {
	d := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return s != ""
	}
	date, clock, hasClock := strings.Cut(s, " ")
	okDate := len(date) == 10 && d(date[:4]) && date[4] == '-' && d(date[5:7]) && date[7] == '-' && d(date[8:])
	if tc == catDate {
		return okDate && !hasClock
	}
	whole, frac, _ := strings.Cut(clock, ".")
	return okDate && hasClock && len(whole) == 8 && d(whole[:2]) && whole[2] == ':' && d(whole[3:5]) && whole[5] == ':' &&
		d(whole[6:]) && (frac == "" || d(frac))
}

// incDigits adds one to a string of decimal digits; carry when it wraps
// to zeros ("" always carries).
func incDigits(d string) (string, bool) {
	b := []byte(d)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b), false
		}
		b[i] = '0'
	}
	return string(b), true
}

// timeAddSecond adds a second to the magnitude of "[-]h:mm:ss"; false
// past TIME's range.
func timeAddSecond(t string) (string, bool) {
	neg := strings.HasPrefix(t, "-")
	parts := strings.Split(strings.TrimPrefix(t, "-"), ":")
	if len(parts) != 3 {
		return t, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	sc, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return t, false
	}
	total := h*3600 + m*60 + sc + 1
	if total > 838*3600+59*60+59 {
		return t, false
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, total/3600, total/60%60, total%60), true
}

// datetimeAddSecond adds a second to "YYYY-MM-DD" "hh:mm:ss"; false for a
// zero or partial date, or past 9999.
func datetimeAddSecond(date, clock string) (string, string, bool) {
	t, err := time.Parse("2006-01-02 15:04:05", date+" "+clock)
	if err != nil {
		return date, clock, false
	}
	t = t.Add(time.Second)
	if t.Year() > 9999 {
		return date, clock, false
	}
	return t.Format("2006-01-02"), t.Format("15:04:05"), true
}

// acrossZone converts between a TIMESTAMP (UTC text, Unix seconds) and
// the session's local DATETIME text: fromTS says which way. A zero
// value stays zero; a DATETIME outside TIMESTAMP's range is not
// reproduced.
func acrossZone(s string, fromTS bool, sec uint64, tz *time.Location) (string, uint64, bool) {
	date, clock, _ := strings.Cut(s, " ")
	whole, frac, hasFrac := strings.Cut(clock, ".")
	if clock == "" {
		whole = "00:00:00"
	}
	if hasFrac {
		frac = "." + frac
	}
	if fromTS {
		// sec 0 is the zero TIMESTAMP only with a zero fraction; with one
		// it is the epoch (the server stores an out-of-range value that
		// way, keeping its fraction).
		if sec == 0 && strings.Trim(frac, ".0") == "" {
			return "0000-00-00 00:00:00" + frac, 0, true
		}
		return time.Unix(int64(sec), 0).In(tz).Format("2006-01-02 15:04:05") + frac, sec, true
	}
	if strings.HasPrefix(s, "0000-00-00") {
		return "0000-00-00 " + whole + frac, 0, whole == "00:00:00"
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", date+" "+whole, tz)
	if err != nil {
		return s, 0, false
	}
	if t.Unix() < 1 || t.Unix() > 1<<31-1 {
		// Outside TIMESTAMP's range: a non-strict ALTER stores 0 seconds
		// and keeps the fraction; 0 seconds with a fraction is a value
		// no statement can write back, so that is reported.
		zero := "0000-00-00 00:00:00" + strings.Map(func(r rune) rune {
			if r == '.' {
				return r
			}
			return '0'
		}, frac)
		return zero, 0, strings.Trim(frac, ".0") == ""
	}
	return t.UTC().Format("2006-01-02 15:04:05") + frac, uint64(t.Unix()), true
}

// toYear stores a number into YEAR as the server does: rounded as into
// an integer, 1-69 is 2001-2069, 70-99 is 1970-1999, 0 and 1901-2155
// stay, anything else is 0 (0000).
func toYear(v change.Value, fc category, to *tablemap.Column) (change.Value, bool) {
	switch fc {
	case catInt, catDecimal, catFloat, catDouble, catYear:
	default:
		return implicitDefault(to), false
	}
	big := tablemap.Column{Type: mysql.MYSQL_TYPE_LONGLONG}
	iv, ok := toInt(v, fc, &big)
	n := iv.Int()
	switch {
	case n < 0 || n >= 100 && n <= 1900 || n > 2155:
		n = 0
	case n >= 1 && n < 70:
		n += 2000
	case n >= 70 && n < 100:
		n += 1900
	}
	return change.IntValue(n), ok
}
