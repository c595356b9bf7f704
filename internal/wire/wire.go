// Package wire decodes the MySQL protocol's primitive encodings that the
// binlog format shares, with bounds checks (go-mysql's LengthEncodedInt
// indexes past the end of short input).
package wire

import "encoding/binary"

// LenEncInt decodes a length-encoded integer: one byte below 0xfb, or
// 0xfc/0xfd/0xfe followed by 2, 3 or 8 little-endian bytes. n is the
// number of bytes used, 0 when b is cut short or starts with 0xfb/0xff.
func LenEncInt(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch c := b[0]; {
	case c < 0xfb:
		return uint64(c), 1
	case c == 0xfc:
		if len(b) < 3 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case c == 0xfd:
		if len(b) < 4 {
			return 0, 0
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
	case c == 0xfe:
		if len(b) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(b[1:]), 9
	}
	return 0, 0
}
