package envelope

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Debezium's options beyond the value encodings of debezium.go:
// binary.handling.mode, time.precision.mode=isostring,
// enable.time.adjuster, ENUM/SET "allowed" escaping and FLOAT(M,D).

// appendBinary writes binary bytes as binary.handling.mode says: bytes
// (Kafka Connect bytes: base64 in JSON) and base64 are the same text;
// base64-url-safe is Java's Base64.getUrlEncoder (padded); hex is
// lower-case. Large values are written in pieces.
func (d *debezium) appendBinary(b, src []byte) []byte {
	enc := base64.StdEncoding.AppendEncode
	switch d.opts.BinaryHandlingMode {
	case BinaryBase64U:
		enc = base64.URLEncoding.AppendEncode
	case BinaryHex:
		enc = hex.AppendEncode
	}
	b = append(b, '"')
	if !d.active || len(src) < largeValue {
		b = enc(b, src)
		return append(b, '"')
	}
	for len(src) > 0 && d.err == nil {
		n := min(len(src), largePiece) // a multiple of 3: the pieces' base64 joins
		b = enc(b, src[:n])
		src = src[n:]
		b = d.flush(b)
	}
	return append(b, '"')
}

// binarySchema is the Connect type of binary columns.
func (d *debezium) binarySchema() string {
	if d.opts.BinaryHandlingMode == BinaryBytes {
		return "bytes"
	}
	return "string"
}

// adjustYear is Debezium's time adjuster (enable.time.adjuster, on by
// default), which it applies to DATE, DATETIME and TIMESTAMP values: a
// year 0-69 is read as 2000-2069, 70-99 as 1970-1999, as MySQL reads
// two-digit years in literals.
func (d *debezium) adjustYear(y int64) int64 {
	if d.opts.NoTimeAdjuster {
		return y
	}
	switch {
	case y >= 0 && y <= 69:
		return y + 2000
	case y >= 70 && y <= 99:
		return y + 1900
	}
	return y
}

// adjustedDatetime is parseDatetime with the time adjuster.
func (d *debezium) adjustedDatetime(s []byte) (int64, bool) {
	us, ok := parseDatetime(s)
	if !ok || d.opts.NoTimeAdjuster {
		return us, ok
	}
	y, _, _, _ := parseDate(s[:10])
	if ay := d.adjustYear(y); ay != y {
		adj := make([]byte, len(s))
		copy(adj, s)
		copy(adj, fmt.Sprintf("%04d", ay))
		return parseDatetime(adj)
	}
	return us, ok
}

// appendIsoDate writes a DATE as io.debezium.time.IsoDate: Java's
// ISO_OFFSET_DATE in UTC, "2018-04-01Z".
func (d *debezium) appendIsoDate(b []byte, col *tablemap.Column, s []byte) []byte {
	y, m, dd, ok := parseDate(s)
	if !ok {
		return zeroTemporal(b, col, `"1970-01-01Z"`)
	}
	return append(fmt.Appendf(b, `"%04d-%02d-%02d`, d.adjustYear(y), m, dd), 'Z', '"')
}

// appendIsoDatetime writes a DATETIME as io.debezium.time.IsoTimestamp:
// ISO_OFFSET_DATE_TIME in UTC, "2018-04-01T12:34:56.5Z" (the fraction
// without trailing zeros, as Java writes it).
func (d *debezium) appendIsoDatetime(b []byte, col *tablemap.Column, s []byte) []byte {
	us, ok := d.adjustedDatetime(s)
	if !ok {
		return zeroTemporal(b, col, `"1970-01-01T00:00:00Z"`)
	}
	days, rest := floorDiv(us, 86400e6), us-floorDiv(us, 86400e6)*86400e6
	y, m, dd := civilFromDays(days)
	b = fmt.Appendf(b, `"%04d-%02d-%02dT`, y, m, dd)
	return append(appendIsoClock(b, rest), 'Z', '"')
}

// appendIsoTime writes a TIME as io.debezium.time.IsoTime, "12:34:56Z".
// Debezium wraps a TIME outside a day (negative, or 24 hours and more)
// around the clock; binlogcdc stops with an error instead.
func (d *debezium) appendIsoTime(b []byte, col *tablemap.Column, v change.Value) []byte {
	us, ok := parseTime(v.Bytes())
	if !ok {
		return append(b, "null"...)
	}
	if us < 0 || us >= 86400e6 {
		if d.err == nil {
			d.err = fmt.Errorf("column %s: TIME %s is outside a day (00:00:00 to 23:59:59.999999), which --debezium-time-precision-mode=isostring cannot write (Debezium wraps it around the clock)\n"+
				"hint: use --debezium-time-precision-mode=adaptive_time_microseconds (microseconds, any TIME)", col.Name, v.Bytes())
		}
		return append(b, "null"...)
	}
	return append(appendIsoClock(append(b, '"'), us), 'Z', '"')
}

// appendIsoClock writes microseconds of a day as "hh:mm:ss[.f]" (Java's
// ISO_LOCAL_TIME: fraction digits as needed).
func appendIsoClock(b []byte, us int64) []byte {
	sec := us / 1e6
	b = fmt.Appendf(b, "%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	if f := us % 1e6; f != 0 {
		b = append(b, strings.TrimRight(fmt.Sprintf(".%06d", f), "0")...)
	}
	return b
}

// civilFromDays is daysFromCivil's inverse.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// escapeAllowed joins ENUM or SET labels as Debezium's "allowed"
// parameter does (EnumeratedValues.toCommaSeparatedString): a backslash
// in a label doubled, a comma escaped as "\,".
func escapeAllowed(labels []string) string {
	var sb strings.Builder
	for i, l := range labels {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), ",", `\,`))
	}
	return sb.String()
}

// floatDouble reports whether a FLOAT column of t was named as declared
// FLOAT(M,D), which Debezium writes as double: the binlog's metadata
// does not tell FLOAT from FLOAT(M,D).
func (d *debezium) floatDouble(t *tablemap.Table, col *tablemap.Column) bool {
	name := t.DB + "." + t.Name + "." + col.Name
	for _, p := range d.opts.FloatDouble {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
