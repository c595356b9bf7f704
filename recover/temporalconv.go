package recovery

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Date and time conversions of valconv.go.

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
		if !validDate(s) {
			// Not a date the server stores: a non-strict ALTER stores zero.
			zero := implicitDefault(&tablemap.Column{Type: to.Type, FSP: to.FSP})
			return zero, true
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

// validDate reports whether the canonical date or datetime text is one
// an ALTER TABLE stores as it is: month up to 12, a day within the
// month's (zero parts allowed; ALLOW_INVALID_DATES does not apply to
// ALTER's copy, the e2e test shows), a clock within 23:59:59.
func validDate(s string) bool {
	date, clock, _ := strings.Cut(s, " ")
	y, _ := strconv.Atoi(date[:4])
	m, _ := strconv.Atoi(date[5:7])
	d, _ := strconv.Atoi(date[8:10])
	if m > 12 || d > 31 {
		return false
	}
	if m > 0 && d > 0 {
		if d > time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
			return false
		}
	}
	if clock != "" {
		h, _ := strconv.Atoi(clock[0:2])
		mi, _ := strconv.Atoi(clock[3:5])
		sec, _ := strconv.Atoi(clock[6:8])
		if h > 23 || mi > 59 || sec > 59 {
			return false
		}
	}
	return true
}
