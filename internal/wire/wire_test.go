package wire

import "testing"

func TestLenEncInt(t *testing.T) {
	for _, c := range []struct {
		in []byte
		v  uint64
		n  int
	}{
		{nil, 0, 0},
		{[]byte{0}, 0, 1},
		{[]byte{250}, 250, 1},
		{[]byte{0xfb}, 0, 0}, // NULL marker: not a length
		{[]byte{0xfc, 0x34, 0x12}, 0x1234, 3},
		{[]byte{0xfc, 0x34}, 0, 0}, // cut short
		{[]byte{0xfd, 1, 2, 3}, 0x030201, 4},
		{[]byte{0xfd, 1, 2}, 0, 0},
		{[]byte{0xfe, 1, 0, 0, 0, 0, 0, 0, 0x80}, 0x8000000000000001, 9},
		{[]byte{0xfe, 1, 0, 0, 0, 0, 0, 0}, 0, 0},
		{[]byte{0xff}, 0, 0},
	} {
		v, n := LenEncInt(c.in)
		if v != c.v || n != c.n {
			t.Errorf("LenEncInt(% x) = %d, %d; want %d, %d", c.in, v, n, c.v, c.n)
		}
	}
}
