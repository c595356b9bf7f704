package envelope

import (
	"encoding/binary"
	"math"
	"strconv"
)

var wktNames = [...]string{"", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}

// appendWKT writes WKB as WKT the way JTS's WKTWriter does, which Maxwell
// uses ("POINT (1 2)", "LINESTRING (0 0, 1 1)", "POLYGON ((…))").
// It returns the rest of the input; on malformed WKB it writes
// "INVALID" (the binlog only holds what the server validated).
func appendWKT(b, wkb []byte, depth int) ([]byte, []byte) {
	if len(wkb) < 5 || depth > 32 {
		return append(b, "INVALID"...), nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if wkb[0] == 0 {
		bo = binary.BigEndian
	}
	typ := bo.Uint32(wkb[1:])
	wkb = wkb[5:]
	if typ == 0 || typ >= uint32(len(wktNames)) {
		return append(b, "INVALID"...), nil
	}
	b = append(b, wktNames[typ]...)
	b = append(b, ' ')
	count := func() (int, bool) {
		if len(wkb) < 4 {
			return 0, false
		}
		n := int(bo.Uint32(wkb))
		wkb = wkb[4:]
		return n, n <= len(wkb)
	}
	coords := func(n int) bool {
		if n == 0 {
			b = append(b, "EMPTY"...)
			return true
		}
		if len(wkb) < 16*n {
			return false
		}
		b = append(b, '(')
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',', ' ')
			}
			b = appendCoord(b, math.Float64frombits(bo.Uint64(wkb)))
			b = append(b, ' ')
			b = appendCoord(b, math.Float64frombits(bo.Uint64(wkb[8:])))
			wkb = wkb[16:]
		}
		b = append(b, ')')
		return true
	}
	ok := true
	switch typ {
	case 1:
		if len(wkb) < 16 {
			return append(b, "INVALID"...), nil
		}
		x, y := math.Float64frombits(bo.Uint64(wkb)), math.Float64frombits(bo.Uint64(wkb[8:]))
		if math.IsNaN(x) && math.IsNaN(y) {
			return append(b, "EMPTY"...), wkb[16:]
		}
		ok = coords(1)
	case 2:
		var n int
		if n, ok = count(); ok {
			ok = coords(n)
		}
	case 3:
		var rings int
		if rings, ok = count(); ok {
			if rings == 0 {
				b = append(b, "EMPTY"...)
				break
			}
			b = append(b, '(')
			for i := 0; i < rings && ok; i++ {
				if i > 0 {
					b = append(b, ',', ' ')
				}
				var n int
				if n, ok = count(); ok {
					ok = coords(n)
				}
			}
			b = append(b, ')')
		}
	default: // collections: each member is a whole WKB geometry
		var n int
		if n, ok = count(); ok {
			if n == 0 {
				b = append(b, "EMPTY"...)
				break
			}
			b = append(b, '(')
			for i := 0; i < n; i++ {
				if i > 0 {
					b = append(b, ',', ' ')
				}
				mark := len(b)
				b, wkb = appendWKT(b, wkb, depth+1)
				if typ != 7 {
					// MULTI*: members without their type name, as JTS writes them.
					name := wktNames[typ-3]
					if len(b) >= mark+len(name)+1 && string(b[mark:mark+len(name)]) == name {
						b = append(b[:mark], b[mark+len(name)+1:]...)
					}
				}
				if wkb == nil {
					return b, nil
				}
			}
			b = append(b, ')')
		}
	}
	if !ok {
		return append(b, "INVALID"...), nil
	}
	return b, wkb
}

func appendCoord(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
