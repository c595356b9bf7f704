package jsontext

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
)

// AppendFloat writes the shortest decimal that round-trips at the given
// width (32 or 64), in encoding/json's notation. NaN and infinities,
// which MySQL cannot store, become null rather than invalid JSON.
func AppendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendBase64 writes src as a JSON string in standard base64.
func AppendBase64(b []byte, src []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, src)
	return append(b, '"')
}

// AppendLabels writes comma-joined SET labels as a JSON array of strings
// ([] for the empty set); lostEmpty (change.Value.SetLostEmpty) writes
// first the empty label that the joined text leaves out.
func AppendLabels(b []byte, joined []byte, lostEmpty bool) []byte {
	b = append(b, '[')
	if lostEmpty {
		b = append(b, '"', '"')
		if len(joined) > 0 {
			b = append(b, ',')
		}
	}
	if len(joined) > 0 {
		start := 0
		for i := 0; i <= len(joined); i++ {
			if i == len(joined) || joined[i] == ',' {
				if start > 0 {
					b = append(b, ',')
				}
				b = AppendString(b, joined[start:i])
				start = i + 1
			}
		}
	}
	return append(b, ']')
}

// AppendFloat32s writes little-endian IEEE 754 float32s (a VECTOR) as a
// JSON array of numbers.
func AppendFloat32s(b []byte, raw []byte) []byte {
	b = append(b, '[')
	for i := 0; i+4 <= len(raw); i += 4 {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))), 32)
	}
	return append(b, ']')
}
