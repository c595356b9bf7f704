package pipeline

import (
	"bytes"
	"fmt"

	"github.com/binlogcdc/binlogcdc/change"
)

// CompareKeys compares two keys (the key columns' values in key order) as
// the server's ORDER BY of the key orders them, for the value kinds where
// binlogcdc can reproduce that order exactly: signed and unsigned
// integers (Int, Uint, which also hold BIT and YEAR), ENUM (by index) and
// SET (by bitmask), DECIMAL, DATE, DATETIME, TIMESTAMP, TIME, and binary
// strings (Bytes: BINARY with its padding, VARBINARY, INET4 and INET6,
// compared byte by byte with no pad). Anything else (text in a collation,
// floats, JSON…) is an error: such a key's table is held as a whole
// (TableCoverage.Key nil). Which column types a snapshot reads in key
// ranges is snapshot.keyTypes, proven against the server there. It
// returns -1, 0 or +1.
func CompareKeys(a, b []change.Value) (int, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("keys of %d and %d columns", len(a), len(b))
	}
	for i := range a {
		d, err := compareKeyValue(a[i], b[i])
		if err != nil || d != 0 {
			return d, err
		}
	}
	return 0, nil
}

func compareKeyValue(a, b change.Value) (int, error) {
	if a.Kind() != b.Kind() {
		return 0, fmt.Errorf("key values of kinds %s and %s cannot be compared", a.Kind(), b.Kind())
	}
	switch a.Kind() {
	case change.Int:
		return cmp3(a.Int() < b.Int(), a.Int() > b.Int()), nil
	case change.Uint, change.Enum, change.Set:
		return cmp3(a.Uint() < b.Uint(), a.Uint() > b.Uint()), nil
	case change.Decimal:
		return compareDecimal(a.Bytes(), b.Bytes()), nil
	case change.Date, change.Datetime, change.Timestamp, change.Bytes:
		// Temporal text has a fixed width per column (zero dates and
		// parts included) and orders as its digits; binary strings
		// order byte by byte, a prefix first.
		return bytes.Compare(a.Bytes(), b.Bytes()), nil
	case change.Time:
		ta, erra := timeMicros(a.Bytes())
		tb, errb := timeMicros(b.Bytes())
		if erra != nil || errb != nil {
			return 0, fmt.Errorf("TIME key values %q, %q", a.Bytes(), b.Bytes())
		}
		return cmp3(ta < tb, ta > tb), nil
	}
	return 0, fmt.Errorf("a key value of kind %s cannot be ordered as the server orders it", a.Kind())
}

func cmp3(less, more bool) int {
	if less {
		return -1
	}
	if more {
		return 1
	}
	return 0
}

// KeyKindOrdered reports whether CompareKeys orders values of kind k.
func KeyKindOrdered(k change.Kind) bool {
	switch k {
	case change.Int, change.Uint, change.Enum, change.Set, change.Decimal,
		change.Date, change.Datetime, change.Timestamp, change.Bytes, change.Time:
		return true
	}
	return false
}

// compareDecimal compares DECIMAL text ("-12.50", "3", ".5" tolerated).
func compareDecimal(a, b []byte) int {
	na, ia, fa := splitDecimal(a)
	nb, ib, fb := splitDecimal(b)
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	d := len(ia) - len(ib)
	if d == 0 {
		d = bytes.Compare(ia, ib)
	}
	if d == 0 {
		// Fractions: compare digit by digit, a missing digit is 0.
		for i := 0; i < max(len(fa), len(fb)) && d == 0; i++ {
			x, y := byte('0'), byte('0')
			if i < len(fa) {
				x = fa[i]
			}
			if i < len(fb) {
				y = fb[i]
			}
			d = int(x) - int(y)
		}
	}
	if na {
		d = -d
	}
	return cmp3(d < 0, d > 0)
}

// splitDecimal returns the sign (negative, never for a zero), the integer
// digits without leading zeros, and the fraction's digits without
// trailing zeros.
func splitDecimal(s []byte) (neg bool, whole, frac []byte) {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	whole = s
	if i := bytes.IndexByte(s, '.'); i >= 0 {
		whole, frac = s[:i], s[i+1:]
	}
	whole = bytes.TrimLeft(whole, "0")
	frac = bytes.TrimRight(frac, "0")
	if len(whole) == 0 && len(frac) == 0 {
		neg = false
	}
	return
}

// timeMicros reads TIME text, "[-]h…h:mm:ss[.ffffff]", as microseconds.
func timeMicros(s []byte) (int64, error) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var parts [3]int64
	var frac int64
	p, digits, fracDigits, inFrac := 0, 0, 0, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			if inFrac {
				if fracDigits < 6 {
					frac = frac*10 + int64(c-'0')
					fracDigits++
				}
			} else {
				parts[p] = parts[p]*10 + int64(c-'0')
				digits++
			}
		case c == ':' && !inFrac && p < 2 && digits > 0:
			p, digits = p+1, 0
		case c == '.' && !inFrac && p == 2:
			inFrac = true
		default:
			return 0, fmt.Errorf("bad TIME %q", s)
		}
	}
	if p != 2 || digits == 0 {
		return 0, fmt.Errorf("bad TIME %q", s)
	}
	for ; fracDigits < 6; fracDigits++ {
		frac *= 10
	}
	v := ((parts[0]*60+parts[1])*60+parts[2])*1_000_000 + frac
	if neg {
		v = -v
	}
	return v, nil
}
