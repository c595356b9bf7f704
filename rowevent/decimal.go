package rowevent

import (
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// MySQL's binary DECIMAL (strings/decimal.c, decimal2bin/bin2decimal):
//
// The digits are cut into groups of 9 around the decimal point. Each full
// group is a big-endian 4-byte word; a partial group of k digits (the
// leftmost of the integer part, the rightmost of the fraction) takes
// digBytes[k] bytes. The first byte has its top bit flipped (set for
// positive numbers), and negative numbers have every byte inverted, so
// that the bytes sort like the numbers.

const (
	// decMaxBinSize is decimalBinSize(decMaxPrecision, decMaxScale)'s
	// bound: 65 digits take at most 8 full groups and two partial ones.
	decMaxBinSize    = 40
	decDigitsPerWord = 9
	decMaxPrecision  = 65
	decMaxScale      = 38 // MariaDB's limit; MySQL's is 30
)

var digBytes = [decDigitsPerWord + 1]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

var pow10u32 = [decDigitsPerWord + 1]uint32{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// decimalBinSize is the byte size of a DECIMAL(precision, scale) value.
func decimalBinSize(precision, scale int) int {
	intg := precision - scale
	return intg/decDigitsPerWord*4 + digBytes[intg%decDigitsPerWord] +
		scale/decDigitsPerWord*4 + digBytes[scale%decDigitsPerWord]
}

func decodeNewDecimal(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	s := a.start()
	out, n, err := appendDecimal(a.buf, data, col.Precision, col.Scale)
	if err != nil {
		return change.Value{}, 0, err
	}
	a.buf = out
	return change.TextValue(change.Decimal, a.since(s)), n, nil
}

// appendDecimal appends the text of the binary DECIMAL(precision, scale)
// at the start of data: an optional '-', the integer digits without
// leading zeros (at least one), and when scale > 0 a '.' and exactly
// scale digits. Zero never gets a sign. It returns the bytes used.
func appendDecimal(dst, data []byte, precision, scale int) ([]byte, int, error) {
	if precision < 1 || precision > decMaxPrecision || scale < 0 || scale > decMaxScale || scale > precision {
		return dst, 0, errBadMeta("DECIMAL(%d,%d)", precision, scale)
	}
	size := decimalBinSize(precision, scale)
	if len(data) < size {
		return dst, 0, errTruncated(uint64(size), len(data))
	}
	// The value's bytes with the sign flip undone and, for negative
	// numbers, inverted back: the groups are then plain big-endian.
	var buf [decMaxBinSize]byte
	b := buf[:size]
	copy(b, data)
	neg := b[0]&0x80 == 0
	if neg {
		for i := range b {
			b[i] = ^b[i]
		}
	}
	b[0] ^= 0x80
	intg := precision - scale
	if intg <= 18 && scale <= 18 {
		// At most two groups on each side of the point: the integer part
		// and the fraction each fit in a uint64.
		ip, pos, ok := decimalPart(b, 0, intg, false)
		if !ok {
			return dst, 0, errBadValue("DECIMAL(%d,%d) digit group out of range", precision, scale)
		}
		fp, _, ok := decimalPart(b, pos, scale, true)
		if !ok {
			return dst, 0, errBadValue("DECIMAL(%d,%d) digit group out of range", precision, scale)
		}
		if neg && (ip != 0 || fp != 0) {
			dst = append(dst, '-')
		}
		dst = appendUint(dst, ip)
		if scale > 0 {
			dst = append(dst, '.')
			dst = appendPadded(dst, fp, scale)
		}
		return dst, size, nil
	}
	// Read all groups into words (at most 8 integer + 5 fraction groups),
	// with the number of digits each holds.
	var words [16]uint32
	var widths [16]int
	nw, pos := 0, 0
	read := func(digits int) bool {
		v := beUint32(b[pos : pos+digBytes[digits]])
		pos += digBytes[digits]
		if v >= pow10u32[digits] {
			return false
		}
		words[nw], widths[nw] = v, digits
		nw++
		return true
	}
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
	if neg && !zero {
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

// decimalPart reads the groups of a part of digits digits (at most 18)
// of a binary DECIMAL whose bytes are plain big-endian (see
// appendDecimal) from b[pos:], as one number: the integer part's partial
// group comes first, the fraction's last. ok is false when a group holds
// more than its digits.
func decimalPart(b []byte, pos, digits int, fraction bool) (v uint64, next int, ok bool) {
	full, part := digits/decDigitsPerWord, digits%decDigitsPerWord
	readPart := func() bool {
		w := beUint32(b[pos : pos+digBytes[part]])
		pos += digBytes[part]
		v = v*uint64(pow10u32[part]) + uint64(w)
		return w < pow10u32[part]
	}
	if !fraction && part > 0 && !readPart() { // the integer part's leading group
		return 0, 0, false
	}
	for range full {
		w := beUint32(b[pos : pos+4])
		pos += 4
		if w >= pow10u32[decDigitsPerWord] {
			return 0, 0, false
		}
		v = v*uint64(pow10u32[decDigitsPerWord]) + uint64(w)
	}
	if fraction && part > 0 && !readPart() { // the fraction's trailing group
		return 0, 0, false
	}
	return v, pos, true
}

// beUint32 reads 1 to 4 bytes as a big-endian unsigned integer.
func beUint32(b []byte) uint32 {
	var v uint32
	for _, c := range b {
		v = v<<8 | uint32(c)
	}
	return v
}

// appendUint appends v in decimal.
func appendUint(dst []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

// appendPadded appends v in decimal, left-padded with zeros to width
// digits (more digits when v needs them).
func appendPadded(dst []byte, v uint64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || len(tmp)-i < width {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if i == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}
