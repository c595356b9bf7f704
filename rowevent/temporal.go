package rowevent

import (
	"fmt"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Temporal text follows what MySQL prints: "YYYY-MM-DD", "YYYY-MM-DD
// hh:mm:ss[.f…]" and "[-]hh:mm:ss[.f…]" with exactly the column's fsp
// fractional digits. Invalid parts that MySQL accepts (zero dates,
// month 0, day 0) are kept as they are.

const usecPerSec = 1000000

// appendDate appends "YYYY-MM-DD".
func appendDate(b []byte, year, month, day uint64) []byte {
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, month, 2)
	b = append(b, '-')
	return appendPadded(b, day, 2)
}

// appendClock appends "hh:mm:ss" (hours may take more than 2 digits).
func appendClock(b []byte, hour, minute, second uint64) []byte {
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	return appendPadded(b, second, 2)
}

// appendFrac appends ".f…" with fsp digits of usec (nothing for fsp 0).
func appendFrac(b []byte, usec uint64, fsp int) []byte {
	if fsp == 0 {
		return b
	}
	b = append(b, '.')
	return appendPadded(b, usec/uint64(pow10u32[6-fsp]), fsp)
}

func checkFSP(col *tablemap.Column) error {
	if col.FSP < 0 || col.FSP > 6 {
		return errBadMeta("fractional seconds precision %d", col.FSP)
	}
	return nil
}

// readFrac2 reads the fractional part of DATETIME2/TIMESTAMP2/TIME2
// (big-endian, (fsp+1)/2 bytes) as a raw signed-agnostic integer and its
// scale to microseconds.
func readFrac2(b []byte, fsp int) (raw, scale uint64) {
	switch fsp {
	case 1, 2:
		return beUint(b[:1]), 10000
	case 3, 4:
		return beUint(b[:2]), 100
	case 5, 6:
		return beUint(b[:3]), 1
	}
	return 0, 1
}

// decodeDate: 3 bytes little-endian, year<<9 | month<<5 | day.
func decodeDate(a *arena, data []byte) (change.Value, int, error) {
	if len(data) < 3 {
		return change.Value{}, 0, errTruncated(3, len(data))
	}
	v := leUint(data[:3])
	s := a.start()
	a.buf = appendDate(a.buf, v>>9, v>>5&15, v&31)
	return change.TextValue(change.Date, a.since(s)), 3, nil
}

// decodeDatetime2: 5 bytes big-endian, offset by 0x8000000000, holding
// (year*13+month)<<22 | day<<17 | hour<<12 | minute<<6 | second, then
// the fraction.
func decodeDatetime2(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	n := 5 + (col.FSP+1)/2
	if len(data) < n {
		return change.Value{}, 0, errTruncated(uint64(n), len(data))
	}
	packed := beUint(data[:5])
	if packed < 0x8000000000 {
		return change.Value{}, 0, errBadValue("negative DATETIME2")
	}
	packed -= 0x8000000000
	raw, scale := readFrac2(data[5:], col.FSP)
	usec := raw * scale
	if usec >= usecPerSec {
		return change.Value{}, 0, errBadValue("DATETIME2 fraction %d", raw)
	}
	ymd, hms := packed>>17, packed&(1<<17-1)
	ym := ymd >> 5
	s := a.start()
	a.buf = appendDate(a.buf, ym/13, ym%13, ymd&31)
	a.buf = append(a.buf, ' ')
	a.buf = appendClock(a.buf, hms>>12, hms>>6&63, hms&63)
	a.buf = appendFrac(a.buf, usec, col.FSP)
	return change.TextValue(change.Datetime, a.since(s)), n, nil
}

// decodeTimestamp2: 4 bytes big-endian Unix seconds, then the fraction.
func decodeTimestamp2(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	n := 4 + (col.FSP+1)/2
	if len(data) < n {
		return change.Value{}, 0, errTruncated(uint64(n), len(data))
	}
	sec := beUint(data[:4])
	raw, scale := readFrac2(data[4:], col.FSP)
	usec := raw * scale
	if usec >= usecPerSec {
		return change.Value{}, 0, errBadValue("TIMESTAMP2 fraction %d", raw)
	}
	return timestampValue(a, sec, usec, col.FSP), n, nil
}

// timestampValue renders Unix seconds in UTC; 0 is the zero timestamp.
func timestampValue(a *arena, sec, usec uint64, fsp int) change.Value {
	s := a.start()
	if sec == 0 {
		a.buf = append(a.buf, "0000-00-00 00:00:00"...)
	} else {
		t := time.Unix(int64(sec), 0).UTC()
		y, m, d := t.Date()
		hh, mm, ss := t.Clock()
		a.buf = appendDate(a.buf, uint64(y), uint64(m), uint64(d))
		a.buf = append(a.buf, ' ')
		a.buf = appendClock(a.buf, uint64(hh), uint64(mm), uint64(ss))
	}
	a.buf = appendFrac(a.buf, usec, fsp)
	return change.TimestampValue(sec, a.since(s))
}

// decodeTime2: 3 bytes big-endian offset by 0x800000 holding
// hour<<12 | minute<<6 | second, then the fraction. Negative values keep
// the fraction "reversed" (see MySQL's my_time_packed_from_binary): the
// packed value is intpart<<24 + frac, computed as MySQL does.
func decodeTime2(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	n := 3 + (col.FSP+1)/2
	if len(data) < n {
		return change.Value{}, 0, errTruncated(uint64(n), len(data))
	}
	var packed int64
	switch col.FSP {
	case 0:
		packed = (int64(beUint(data[:3])) - 0x800000) << 24
	case 1, 2:
		intpart, frac := int64(beUint(data[:3]))-0x800000, int64(data[3])
		if intpart < 0 && frac != 0 {
			intpart++
			frac -= 0x100
		}
		packed = intpart<<24 + frac*10000
	case 3, 4:
		intpart, frac := int64(beUint(data[:3]))-0x800000, int64(beUint(data[3:5]))
		if intpart < 0 && frac != 0 {
			intpart++
			frac -= 0x10000
		}
		packed = intpart<<24 + frac*100
	default: // 5, 6
		packed = int64(beUint(data[:6])) - 0x800000000000
	}
	neg := packed < 0
	if neg {
		packed = -packed
	}
	hms, usec := uint64(packed>>24), uint64(packed&(1<<24-1))
	if usec >= usecPerSec {
		return change.Value{}, 0, errBadValue("TIME2 fraction %d", usec)
	}
	return timeValue(a, neg, hms>>12&1023, hms>>6&63, hms&63, usec, col.FSP), n, nil
}

func timeValue(a *arena, neg bool, hour, minute, second, usec uint64, fsp int) change.Value {
	s := a.start()
	if neg {
		a.buf = append(a.buf, '-')
	}
	a.buf = appendClock(a.buf, hour, minute, second)
	a.buf = appendFrac(a.buf, usec, fsp)
	return change.TextValue(change.Time, a.since(s))
}

// The old temporal types (MySQL before 5.6.4, MariaDB tables created with
// mysql56_temporal_format=OFF or before 10.1). Without fractional seconds:
// DATETIME is 8 bytes little-endian YYYYMMDDhhmmss, TIME 3 bytes
// little-endian signed [-]HHMMSS, TIMESTAMP 4 bytes little-endian Unix
// seconds. MariaDB's "hires" variants (DATETIME(n), TIME(n), TIMESTAMP(n)
// with n > 0, shown as /* mariadb-5.3 */ by SHOW CREATE TABLE) use the
// same type codes with a different, big-endian layout, and their TABLE_MAP
// metadata is empty: the binlog does not say which layout a column uses.
// col.FSP > 0 (known from elsewhere) selects the hires layout; otherwise
// the plain layout is read and values that cannot be plain ones are
// reported with ErrOldHiresTemporal.

// Hires byte sizes by precision (MariaDB sql/field.cc).
var (
	datetimeHiresBytes = [7]int{5, 6, 6, 7, 7, 7, 8}
	timeHiresBytes     = [7]int{3, 4, 4, 5, 5, 5, 6}
	secPartBytes       = [7]int{0, 1, 1, 2, 2, 3, 3}
)

func errHires(format string, args ...any) error {
	return fmt.Errorf("%w: "+format+"; %w", append(append([]any{ErrBadValue}, args...), ErrOldHiresTemporal)...)
}

func decodeOldDatetime(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	if col.FSP > 0 {
		// big-endian ((((((year*13+month)*32+day)*24+hour)*60+minute)*60+second)*10^6+usec) / 10^(6-fsp)
		n := datetimeHiresBytes[col.FSP]
		if len(data) < n {
			return change.Value{}, 0, errTruncated(uint64(n), len(data))
		}
		p := beUint(data[:n]) * uint64(pow10u32[6-col.FSP])
		usec, p := p%usecPerSec, p/usecPerSec
		second, p := p%60, p/60
		minute, p := p%60, p/60
		hour, p := p%24, p/24
		day, p := p%32, p/32
		s := a.start()
		a.buf = appendDate(a.buf, p/13, p%13, day)
		a.buf = append(a.buf, ' ')
		a.buf = appendClock(a.buf, hour, minute, second)
		a.buf = appendFrac(a.buf, usec, col.FSP)
		return change.TextValue(change.Datetime, a.since(s)), n, nil
	}
	if len(data) < 8 {
		return change.Value{}, 0, errTruncated(8, len(data))
	}
	v := leUint(data[:8])
	date, clock := v/1000000, v%1000000
	year, month, day := date/10000, date/100%100, date%100
	hour, minute, second := clock/10000, clock/100%100, clock%100
	if year > 9999 || month > 12 || day > 31 || hour > 23 || minute > 59 || second > 59 {
		return change.Value{}, 0, errHires("DATETIME value %d is not YYYYMMDDhhmmss", v)
	}
	s := a.start()
	a.buf = appendDate(a.buf, year, month, day)
	a.buf = append(a.buf, ' ')
	a.buf = appendClock(a.buf, hour, minute, second)
	return change.TextValue(change.Datetime, a.since(s)), 8, nil
}

func decodeOldTime(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	if col.FSP > 0 {
		// big-endian (hours*3600+minutes*60+seconds)*10^6+usec, signed,
		// scaled down by 10^(6-fsp) and offset so that 0 is at
		// 839:00:00 (scaled).
		n := timeHiresBytes[col.FSP]
		if len(data) < n {
			return change.Value{}, 0, errTruncated(uint64(n), len(data))
		}
		unit := int64(pow10u32[6-col.FSP])
		zero := (838*3600 + 59*60 + 59 + 1) * usecPerSec / unit
		p := (int64(beUint(data[:n])) - zero) * unit
		neg := p < 0
		if neg {
			p = -p
		}
		u := uint64(p)
		usec, u := u%usecPerSec, u/usecPerSec
		second, u := u%60, u/60
		return timeValue(a, neg, u/60, u%60, second, usec, col.FSP), n, nil
	}
	if len(data) < 3 {
		return change.Value{}, 0, errTruncated(3, len(data))
	}
	v := int64(leUint(data[:3])<<40) >> 40 // sign-extend 24 bits
	neg := v < 0
	if neg {
		v = -v
	}
	u := uint64(v)
	hour, minute, second := u/10000, u/100%100, u%100
	if hour > 838 || minute > 59 || second > 59 {
		return change.Value{}, 0, errHires("TIME value %d is not [-]HHMMSS", u)
	}
	return timeValue(a, neg, hour, minute, second, 0, 0), 3, nil
}

func decodeOldTimestamp(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if err := checkFSP(col); err != nil {
		return change.Value{}, 0, err
	}
	if col.FSP > 0 {
		// 4 bytes big-endian seconds, then usec / 10^(6-fsp) big-endian.
		n := 4 + secPartBytes[col.FSP]
		if len(data) < n {
			return change.Value{}, 0, errTruncated(uint64(n), len(data))
		}
		usec := beUint(data[4:n]) * uint64(pow10u32[6-col.FSP])
		if usec >= usecPerSec {
			return change.Value{}, 0, errBadValue("TIMESTAMP fraction %d", usec)
		}
		return timestampValue(a, beUint(data[:4]), usec, col.FSP), n, nil
	}
	if len(data) < 4 {
		return change.Value{}, 0, errTruncated(4, len(data))
	}
	return timestampValue(a, leUint(data[:4]), 0, 0), 4, nil
}
