package rowevent

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/shopspring/decimal"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func dcol(p, s int) tablemap.Column {
	return tablemap.Column{Type: mysql.MYSQL_TYPE_NEWDECIMAL, Precision: p, Scale: s}
}

func TestDecodeCellDecimal(t *testing.T) {
	dec := func(s string) change.Value { return cellText(change.Decimal, s) }
	runCellCases(t, []cellCase{
		// DECIMAL(10,2): 8 integer digits = 4 bytes (dig2bytes[8]), 2 fraction digits = 1 byte.
		// 999.99: 0x80000000|999 = 800003e7, 99 = 0x63
		{"999.99", dcol(10, 2), "800003e763", dec("999.99")},
		// -0.50: every byte of 80000000 32 inverted -> 7fffffff cd
		{"-0.50", dcol(10, 2), "7fffffffcd", dec("-0.50")},
		{"0.00", dcol(10, 2), "8000000000", dec("0.00")},
		{"-12345678.90", dcol(10, 2), "7f439eb1a5", dec("-12345678.90")}, // ^(0x80bc614e 5a)
		// DECIMAL(65,30): 35 integer digits = 8 (2 digits) + 3 words, 30 fraction digits = 3 words + 3 digits (2 bytes)
		{"(65,30) max", dcol(65, 30), "85f5e0ff3b9ac9ff3b9ac9ff3b9ac9ff3b9ac9ff3b9ac9ff3b9ac9ff03e7",
			dec("99999999999999999999999999999999999.999999999999999999999999999999")},
		{"(65,30) negative", dcol(65, 30), "7f439eb1ca484078caf1cb3fd0f8a086f8a432eaff439eb1ca484078fc85",
			dec("-12345678901234567890123456789012345.123456789012345678901234567890")},
		{"(65,30) tiny", dcol(65, 30), "800000000000000000000000000000000000000000000000000000000001",
			dec("0.000000000000000000000000000001")},
		// DECIMAL(5,5): no integer digits; 5 fraction digits = 3 bytes; 0x3039 = 12345
		{"(5,5)", dcol(5, 5), "803039", dec("0.12345")},
		{"(5,5) negative", dcol(5, 5), "7ffffe", dec("-0.00001")},
		// DECIMAL(20,0): 2 digits (1 byte) + 2 words
		{"(20,0) min", dcol(20, 0), "1cc4653600c4653600", dec("-99999999999999999999")},
		{"(20,0) 1e9", dcol(20, 0), "800000000100000000", dec("1000000000")}, // words 0, 1, 0
		{"(30,10)", dcol(30, 10), "7fff439eb1ca484078ff439eb1f6", dec("-12345678901234567.0123456789")},
		// DECIMAL(4,1) '-0.0' is stored as 0 (MySQL never shows -0)
		{"(4,1) zero", dcol(4, 1), "800000", dec("0.0")},
		{"(4,1) -999.9", dcol(4, 1), "7c18f6", dec("-999.9")},
		// negative zero bytes (computed: 0x80000000 00 inverted) print as "0.00"
		{"negative zero", dcol(10, 2), "7fffffffff", dec("0.00")},
	})
}

func TestDecodeCellDecimalErrors(t *testing.T) {
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string
		is   error
	}{
		{"precision 0", dcol(0, 0), "80", ErrBadMetadata},
		{"precision 66", dcol(66, 0), "80", ErrBadMetadata},
		{"scale > precision", dcol(5, 6), "80", ErrBadMetadata},
		{"scale 39", dcol(65, 39), "80", ErrBadMetadata},
		{"word over 999999999", dcol(10, 0), "80ffffffff", ErrBadValue},
		{"partial over 9", dcol(1, 0), "8a", ErrBadValue},
	}
	for _, tc := range cases {
		data, _ := hex.DecodeString(tc.hex)
		var a arena
		_, n, err := decodeCell(&a, data, &tc.col)
		if !errors.Is(err, tc.is) || n != 0 {
			t.Errorf("%s: n=%d err=%v, want %v", tc.name, n, err, tc.is)
		}
	}
}

// TestDecimalAllShapes checks every (precision, scale) against
// shopspring/decimal on values built digit by digit, positive and
// negative, through an encoder written from the format description.
func TestDecimalAllShapes(t *testing.T) {
	for p := 1; p <= 65; p++ {
		for s := 0; s <= p && s <= 38; s++ {
			for _, pattern := range []string{"9", "1", "0", "5", "123456789"} {
				digits := make([]byte, p)
				for i := range digits {
					digits[i] = pattern[i%len(pattern)]
				}
				for _, neg := range []bool{false, true} {
					b := encodeDecimalForTest(digits, p, s, neg)
					out, n, err := appendDecimal(nil, b, p, s)
					if err != nil || n != len(b) {
						t.Fatalf("(%d,%d) %s: n=%d err=%v", p, s, digits, n, err)
					}
					text := string(digits[:p-s])
					if s > 0 {
						text += "." + string(digits[p-s:])
					}
					if neg {
						text = "-" + text
					}
					want := decimal.RequireFromString(text)
					got, err := decimal.NewFromString(string(out))
					if err != nil || !got.Equal(want) {
						t.Fatalf("(%d,%d): got %q, want %s", p, s, out, text)
					}
					if want.IsZero() && out[0] == '-' {
						t.Fatalf("(%d,%d): negative zero %q", p, s, out)
					}
					if frac := len(out) - 1 - decIndexByte(out, '.'); s > 0 && frac != s {
						t.Fatalf("(%d,%d): %q has %d fraction digits", p, s, out, frac)
					}
				}
			}
		}
	}
}

func decIndexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// encodeDecimalForTest writes MySQL's binary DECIMAL for the given digits
// (p of them, s after the point).
func encodeDecimalForTest(digits []byte, p, s int, neg bool) []byte {
	num := func(d []byte) uint32 {
		var v uint32
		for _, c := range d {
			v = v*10 + uint32(c-'0')
		}
		return v
	}
	put := func(b []byte, v uint32, nb int) []byte {
		for i := nb - 1; i >= 0; i-- {
			b = append(b, byte(v>>(8*uint(i))))
		}
		return b
	}
	var b []byte
	ip, fp := digits[:p-s], digits[p-s:]
	lead := len(ip) % 9
	b = put(b, num(ip[:lead]), digBytes[lead])
	for i := lead; i < len(ip); i += 9 {
		b = put(b, num(ip[i:i+9]), 4)
	}
	full := len(fp) / 9 * 9
	for i := 0; i < full; i += 9 {
		b = put(b, num(fp[i:i+9]), 4)
	}
	b = put(b, num(fp[full:]), digBytes[len(fp)-full])
	b[0] ^= 0x80
	if neg {
		for i := range b {
			b[i] ^= 0xff
		}
	}
	return b
}

func TestDecimalBinSizeBound(t *testing.T) {
	for p := 1; p <= decMaxPrecision; p++ {
		for s := 0; s <= min(p, decMaxScale); s++ {
			if n := decimalBinSize(p, s); n > decMaxBinSize {
				t.Fatalf("DECIMAL(%d,%d) takes %d bytes, more than decMaxBinSize", p, s, n)
			}
		}
	}
}

// refAppendDecimal is appendDecimal as it was before its fast path for
// up to 18 digits on each side of the point (kept to check that path).
func refAppendDecimal(dst, data []byte, precision, scale int) ([]byte, int, error) {
	if precision < 1 || precision > decMaxPrecision || scale < 0 || scale > decMaxScale || scale > precision {
		return dst, 0, errBadMeta("DECIMAL(%d,%d)", precision, scale)
	}
	size := decimalBinSize(precision, scale)
	if len(data) < size {
		return dst, 0, errTruncated(uint64(size), len(data))
	}
	b := data[:size]
	var mask byte
	if b[0]&0x80 == 0 {
		mask = 0xff
	}
	// Read all groups into words (at most 8 integer + 5 fraction groups),
	// with the number of digits each holds.
	var words [16]uint32
	var widths [16]int
	nw, pos := 0, 0
	read := func(digits int) bool {
		nb := digBytes[digits]
		var v uint32
		for i := 0; i < nb; i++ {
			c := b[pos+i] ^ mask
			if pos+i == 0 {
				c ^= 0x80
			}
			v = v<<8 | uint32(c)
		}
		pos += nb
		if v >= pow10u32[digits] {
			return false
		}
		words[nw], widths[nw] = v, digits
		nw++
		return true
	}
	intg := precision - scale
	ok := true
	if x := intg % decDigitsPerWord; x > 0 {
		ok = read(x)
	}
	for i := 0; i < intg/decDigitsPerWord && ok; i++ {
		ok = read(decDigitsPerWord)
	}
	nInt := nw
	for i := 0; i < scale/decDigitsPerWord && ok; i++ {
		ok = read(decDigitsPerWord)
	}
	if x := scale % decDigitsPerWord; x > 0 && ok {
		ok = read(x)
	}
	if !ok {
		return dst, 0, errBadValue("DECIMAL(%d,%d) digit group out of range", precision, scale)
	}
	zero := true
	for _, w := range words[:nw] {
		if w != 0 {
			zero = false
			break
		}
	}
	if mask != 0 && !zero {
		dst = append(dst, '-')
	}
	lead := true
	for i := 0; i < nInt; i++ {
		switch {
		case lead && words[i] == 0:
		case lead:
			dst = appendUint(dst, uint64(words[i]))
			lead = false
		default:
			dst = appendPadded(dst, uint64(words[i]), widths[i])
		}
	}
	if lead {
		dst = append(dst, '0')
	}
	if scale > 0 {
		dst = append(dst, '.')
		for i := nInt; i < nw; i++ {
			dst = appendPadded(dst, uint64(words[i]), widths[i])
		}
	}
	return dst, size, nil
}

func FuzzAppendDecimal(f *testing.F) {
	f.Add(uint8(12), uint8(2), []byte("\x80\x00\x00\x60\x38\x27"))
	f.Add(uint8(12), uint8(2), []byte("\x7f\xff\xff\x9f\xc7\xd8"))
	f.Add(uint8(10), uint8(10), []byte("\x80\x00\x00\x00\x00\x01"))
	f.Add(uint8(18), uint8(0), []byte("\x80\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Add(uint8(36), uint8(18), []byte("\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Add(uint8(65), uint8(30), []byte("\x7f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, precision, scale uint8, data []byte) {
		p, s := int(precision%70), int(scale%42)
		got, gn, gerr := appendDecimal([]byte("x"), data, p, s)
		want, wn, werr := refAppendDecimal([]byte("x"), data, p, s)
		if string(got) != string(want) || gn != wn || (gerr == nil) != (werr == nil) ||
			gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("DECIMAL(%d,%d) % x: got %q %d %v, want %q %d %v", p, s, data, got, gn, gerr, want, wn, werr)
		}
	})
}
