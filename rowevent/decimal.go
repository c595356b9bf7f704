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
