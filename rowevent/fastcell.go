package rowevent

import (
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// fastCell decodes the most common cells (integers, DECIMAL, DATETIME2,
// and strings that need no conversion) straight into *dst, without
// decodeCell's chain of Value returns, which cost a quarter of the time
// of reading a binlog. It returns ok = false, having changed neither *dst
// nor a, for any other cell and for any cell it would have to refuse:
// the caller then calls decodeCell, which gives the value or the error.
// Where ok is true, *dst and n are what decodeCell returns
// (FuzzFastCell checks it).
func fastCell(a *arena, data []byte, col *tablemap.Column, dst *change.Value) (n int, ok bool) {
	if col.Compressed {
		return 0, false
	}
	switch col.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24,
		mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		size := intSizes[col.Type]
		if len(data) < size {
			return 0, false
		}
		u := leUint(data[:size])
		if col.Unsigned {
			dst.PutUint(u)
		} else {
			shift := uint(64 - 8*size)
			dst.PutInt(int64(u<<shift) >> shift)
		}
		return size, true
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		s := a.start()
		out, n, err := appendDecimal(a.buf, data, col.Precision, col.Scale)
		if err != nil {
			return 0, false
		}
		a.buf = out
		dst.PutText(change.Decimal, a.since(s))
		return n, true
	case mysql.MYSQL_TYPE_DATETIME2:
		return fastDatetime2(a, data, col, dst)
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return fastString(a, data, col, stringPrefix(col.Length), dst)
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB,
		mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		return fastString(a, data, col, col.Length, dst)
	}
	return 0, false
}

// fastString is decodeString for the values that are a slice of data:
// binary strings that need no padding, and text in a UTF-8 or ASCII
// collation: with LazyUTF8 unchecked, else when it is valid UTF-8.
func fastString(a *arena, data []byte, col *tablemap.Column, prefix int, dst *change.Value) (int, bool) {
	if prefix < 1 || prefix > 4 || len(data) < prefix {
		return 0, false
	}
	l := leUint(data[:prefix])
	if l > uint64(len(data)-prefix) {
		return 0, false
	}
	n := prefix + int(l)
	raw := data[prefix:n:n]
	if col.IsBinary() {
		if col.Type == mysql.MYSQL_TYPE_STRING && len(raw) < col.Length {
			return 0, false // BINARY(n) padding
		}
		dst.PutText(change.Bytes, raw)
		return n, true
	}
	if charset.IsUTF8Compatible(col.Collation) {
		if a.lazyUTF8 {
			dst.PutUncheckedText(raw, col.Collation)
			return n, true
		}
		if utf8.Valid(raw) { // toUTF8 returns raw itself
			dst.PutText(change.String, raw)
			return n, true
		}
	}
	return 0, false
}

// fastDatetime2 is decodeDatetime2 for years below 10000, writing the
// text in one go.
func fastDatetime2(a *arena, data []byte, col *tablemap.Column, dst *change.Value) (int, bool) {
	fsp := col.FSP
	if fsp < 0 || fsp > 6 {
		return 0, false
	}
	n := 5 + (fsp+1)/2
	if len(data) < n {
		return 0, false
	}
	packed := beUint(data[:5])
	if packed < 0x8000000000 {
		return 0, false
	}
	packed -= 0x8000000000
	raw, scale := readFrac2(data[5:], fsp)
	usec := raw * scale
	if usec >= usecPerSec {
		return 0, false
	}
	ymd, hms := packed>>17, packed&(1<<17-1)
	ym := ymd >> 5
	year := ym / 13
	if year > 9999 {
		return 0, false
	}
	s := a.start()
	a.buf = appendDatetimeText(a.buf, year, ym%13, ymd&31, hms>>12, hms>>6&63, hms&63, usec, fsp)
	dst.PutText(change.Datetime, a.since(s))
	return n, true
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendDatetimeText appends "YYYY-MM-DD hh:mm:ss[.f…]" (fsp fractional
// digits of usec) as appendDate, appendClock and appendFrac do, for
// year < 10000, every other part < 100 and usec < 1000000.
func appendDatetimeText(b []byte, year, month, day, hour, minute, second, usec uint64, fsp int) []byte {
	var t [26]byte
	y1, y2 := year/100, year%100
	t[0], t[1] = digitPairs[2*y1], digitPairs[2*y1+1]
	t[2], t[3] = digitPairs[2*y2], digitPairs[2*y2+1]
	t[4] = '-'
	t[5], t[6] = digitPairs[2*month], digitPairs[2*month+1]
	t[7] = '-'
	t[8], t[9] = digitPairs[2*day], digitPairs[2*day+1]
	t[10] = ' '
	t[11], t[12] = digitPairs[2*hour], digitPairs[2*hour+1]
	t[13] = ':'
	t[14], t[15] = digitPairs[2*minute], digitPairs[2*minute+1]
	t[16] = ':'
	t[17], t[18] = digitPairs[2*second], digitPairs[2*second+1]
	if fsp == 0 {
		return append(b, t[:19]...)
	}
	// The first fsp of usec's 6 digits are usec/10^(6-fsp) in fsp digits.
	t[19] = '.'
	f1, f2, f3 := usec/10000, usec/100%100, usec%100
	t[20], t[21] = digitPairs[2*f1], digitPairs[2*f1+1]
	t[22], t[23] = digitPairs[2*f2], digitPairs[2*f2+1]
	t[24], t[25] = digitPairs[2*f3], digitPairs[2*f3+1]
	return append(b, t[:20+fsp]...)
}
