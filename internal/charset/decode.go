package charset

import (
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/transform"
)

type decoderKind uint8

const (
	kindUnsupported decoderKind = iota
	kindBinary                  // raw bytes, appended as they are
	kindUTF8                    // utf8mb4, utf8mb3
	kindASCII                   // ascii: bytes >= 0x80 are invalid
	kindSingle                  // single-byte charset with a 256-rune table
	kindUCS2                    // UCS-2 big-endian
	kindUTF16                   // UTF-16 big-endian
	kindUTF16LE                 // UTF-16 little-endian
	kindUTF32                   // UTF-32 big-endian
	kindMulti                   // x/text decoder plus server overrides
)

// decoder converts one charset to UTF-8.
type decoder struct {
	kind   decoderKind
	single *[256]rune

	// kindMulti
	pool      *sync.Pool // of *encoding.Decoder
	overrides []overrideRange
	scan      *mbScanner // nil when there are no overrides
	hasOv     *[256]bool // lead bytes that start an overridden character
}

// mbScanner splits multi-byte text into characters the way the server does.
type mbScanner struct {
	lead, trail [256]bool
	euc3        bool // EUC-JP: 0x8F starts a 3-byte character
}

func scanner(leadRanges, trailRanges [][2]byte, euc3 bool) *mbScanner {
	s := &mbScanner{euc3: euc3}
	for _, r := range leadRanges {
		for b := int(r[0]); b <= int(r[1]); b++ {
			s.lead[b] = true
		}
	}
	for _, r := range trailRanges {
		for b := int(r[0]); b <= int(r[1]); b++ {
			s.trail[b] = true
		}
	}
	return s
}

// charLen returns the length of the character at the start of p (len(p) > 0).
func (s *mbScanner) charLen(p []byte) int {
	b := p[0]
	if s.euc3 && b == 0x8F {
		if len(p) >= 3 && s.trail[p[1]] && s.trail[p[2]] {
			return 3
		}
		return 1
	}
	if s.lead[b] && len(p) >= 2 && s.trail[p[1]] {
		return 2
	}
	return 1
}

// Character structure of the multi-byte charsets, as in the servers' ctype-*.c.
var (
	sjisScan  = scanner([][2]byte{{0x81, 0x9F}, {0xE0, 0xFC}}, [][2]byte{{0x40, 0x7E}, {0x80, 0xFC}}, false)
	big5Scan  = scanner([][2]byte{{0xA1, 0xF9}}, [][2]byte{{0x40, 0x7E}, {0xA1, 0xFE}}, false)
	gbkScan   = scanner([][2]byte{{0x81, 0xFE}}, [][2]byte{{0x40, 0x7E}, {0x80, 0xFE}}, false)
	euckrScan = scanner([][2]byte{{0x81, 0xFE}}, [][2]byte{{0x41, 0x5A}, {0x61, 0x7A}, {0x81, 0xFE}}, false)
	// EUC-JP: 0x8E + kana byte, 0x8F + two bytes, 0xA1-0xFE pairs. 0x8E's
	// trail (0xA1-0xDF) is a subset of the shared trail range, which is all
	// the scanner needs to stay aligned on valid text.
	eucjpScan = scanner([][2]byte{{0x8E, 0x8E}, {0xA1, 0xFE}}, [][2]byte{{0xA1, 0xFE}}, true)
)

// multiByte lists the x/text decoder and scanner of each multi-byte charset.
// gb2312 uses the GBK decoder (EUC-CN is a subset of GBK).
var multiByte = map[string]struct {
	enc  encoding.Encoding
	scan *mbScanner
}{
	"sjis":    {japanese.ShiftJIS, sjisScan},
	"cp932":   {japanese.ShiftJIS, sjisScan},
	"ujis":    {japanese.EUCJP, eucjpScan},
	"eucjpms": {japanese.EUCJP, eucjpScan},
	"euckr":   {korean.EUCKR, euckrScan},
	"gb2312":  {simplifiedchinese.GBK, gbkScan},
	"gbk":     {simplifiedchinese.GBK, gbkScan},
	"gb18030": {simplifiedchinese.GB18030, nil},
	"big5":    {traditionalchinese.Big5, big5Scan},
}

// decoders is indexed like charsetTable.
var decoders = buildDecoders()

func buildDecoders() []decoder {
	ds := make([]decoder, len(charsetTable))
	for i := range charsetTable {
		cs := &charsetTable[i]
		d := &ds[i]
		switch cs.name {
		case "binary":
			d.kind = kindBinary
		case "utf8mb4", "utf8mb3", "utf8":
			d.kind = kindUTF8
		case "ascii":
			d.kind, d.single = kindASCII, cs.single
		case "ucs2":
			d.kind = kindUCS2
		case "utf16":
			d.kind = kindUTF16
		case "utf16le":
			d.kind = kindUTF16LE
		case "utf32":
			d.kind = kindUTF32
		default:
			if cs.single != nil {
				d.kind, d.single = kindSingle, cs.single
				break
			}
			mb, ok := multiByte[cs.name]
			if !ok {
				break // kindUnsupported
			}
			enc := mb.enc
			d.kind = kindMulti
			d.pool = &sync.Pool{New: func() any { return enc.NewDecoder() }}
			if len(cs.overrides) > 0 && mb.scan != nil {
				d.overrides, d.scan = cs.overrides, mb.scan
				d.hasOv = new([256]bool)
				for _, r := range cs.overrides {
					for c := r.lo; c <= r.hi; c++ {
						d.hasOv[leadByte(c)] = true
					}
				}
			}
		}
	}
	return ds
}

// leadByte returns the first byte of a big-endian character code.
func leadByte(code uint32) byte {
	switch {
	case code > 0xFFFF:
		return byte(code >> 16)
	case code > 0xFF:
		return byte(code >> 8)
	}
	return byte(code)
}

// Decode appends the UTF-8 form of src, which is text in the given collation,
// to dst.
//
// An unknown collation returns an *UnknownCollationError naming the id; a
// known collation whose charset cannot be decoded returns an
// *UnsupportedCharsetError naming the charset. In both cases dst is returned
// unchanged.
//
// Conversion follows the server: single-byte charsets use the server's own
// byte-to-Unicode tables (latin1 is Windows-1252, as in MySQL: 0x80 is €,
// 0x81 is U+0081); multi-byte charsets use golang.org/x/text corrected to the
// server's mapping for every character the server accepts (see ./gen).
//
// Bytes or sequences that are invalid in the source charset become U+FFFD, as
// do bytes of single-byte charsets that the server cannot convert to Unicode
// (where the server would print '?'), unpaired surrogates, code points above
// U+10FFFF and truncated characters in ucs2/utf16/utf16le/utf32, and bytes
// that are not UTF-8 in utf8mb4/utf8mb3/ascii text (valid text is copied as
// is). One leniency: in multi-byte charsets, a well-formed code that the
// server leaves unassigned but x/text's WHATWG table knows (e.g. a cp932 NEC
// character stored in an sjis column) decodes to x/text's character rather
// than U+FFFD. binary (collation 63) is not text: its bytes are appended
// unchanged.
//
// Decode does not allocate beyond growing dst, except that multi-byte charsets
// decoded through x/text take a pooled decoder (amortised zero allocations).
func Decode(dst []byte, collation uint32, src []byte) ([]byte, error) {
	e := entry(collation, false)
	if e == nil {
		return dst, &UnknownCollationError{ID: collation}
	}
	d := &decoders[e.cs]
	switch d.kind {
	case kindBinary:
		return append(dst, src...), nil
	case kindUTF8:
		return appendUTF8(dst, src), nil
	case kindASCII:
		if isASCII(src) {
			return append(dst, src...), nil
		}
		return appendSingle(dst, d.single, src), nil
	case kindSingle:
		return appendSingle(dst, d.single, src), nil
	case kindUCS2:
		return appendUCS2(dst, src), nil
	case kindUTF16:
		return appendUTF16(dst, src, false), nil
	case kindUTF16LE:
		return appendUTF16(dst, src, true), nil
	case kindUTF32:
		return appendUTF32(dst, src), nil
	case kindMulti:
		return d.appendMulti(dst, src), nil
	}
	return dst, &UnsupportedCharsetError{ID: collation, Charset: charsetTable[e.cs].name}
}

func isASCII(p []byte) bool {
	for _, b := range p {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendUTF8 copies valid UTF-8 and replaces each invalid byte with U+FFFD.
func appendUTF8(dst, src []byte) []byte {
	if utf8.Valid(src) {
		return append(dst, src...)
	}
	dst = slices.Grow(dst, len(src)+8)
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, src[:n]...)
		}
		src = src[n:]
	}
	return dst
}

func appendSingle(dst []byte, table *[256]rune, src []byte) []byte {
	dst = slices.Grow(dst, len(src))
	for _, b := range src {
		r := table[b]
		if r < utf8.RuneSelf {
			dst = append(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

func appendUCS2(dst, src []byte) []byte {
	dst = slices.Grow(dst, len(src)/2*3+3)
	for len(src) >= 2 {
		r := rune(src[0])<<8 | rune(src[1])
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		dst = utf8.AppendRune(dst, r)
		src = src[2:]
	}
	if len(src) > 0 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}

func appendUTF16(dst, src []byte, little bool) []byte {
	unit := func(p []byte) rune {
		if little {
			return rune(p[1])<<8 | rune(p[0])
		}
		return rune(p[0])<<8 | rune(p[1])
	}
	dst = slices.Grow(dst, len(src)/2*3+3)
	for len(src) >= 2 {
		r := unit(src)
		n := 2
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			if r < 0xDC00 && len(src) >= 4 {
				r2 = utf16.DecodeRune(r, unit(src[2:]))
			}
			if r2 == utf8.RuneError {
				r = utf8.RuneError // unpaired surrogate: consume one unit
			} else {
				r, n = r2, 4
			}
		}
		dst = utf8.AppendRune(dst, r)
		src = src[n:]
	}
	if len(src) > 0 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}

func appendUTF32(dst, src []byte) []byte {
	dst = slices.Grow(dst, len(src))
	for len(src) >= 4 {
		c := uint32(src[0])<<24 | uint32(src[1])<<16 | uint32(src[2])<<8 | uint32(src[3])
		r := rune(c)
		if c > utf8.MaxRune || utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		dst = utf8.AppendRune(dst, r)
		src = src[4:]
	}
	if len(src) > 0 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}

// appendMulti decodes with x/text, substituting the server's mapping for the
// characters listed in d.overrides.
func (d *decoder) appendMulti(dst, src []byte) []byte {
	dec := d.pool.Get().(*encoding.Decoder)
	defer d.pool.Put(dec)
	if d.scan == nil {
		return appendTransform(dst, dec, src)
	}
	start := 0
	for i := 0; i < len(src); {
		b := src[i]
		if b < utf8.RuneSelf {
			i++
			continue
		}
		n := d.scan.charLen(src[i:])
		if d.hasOv[b] {
			code := uint32(0)
			for _, c := range src[i : i+n] {
				code = code<<8 | uint32(c)
			}
			if r, ok := lookupOverride(d.overrides, code); ok {
				dst = appendTransform(dst, dec, src[start:i])
				dst = utf8.AppendRune(dst, r)
				start = i + n
			}
		}
		i += n
	}
	return appendTransform(dst, dec, src[start:])
}

func lookupOverride(ov []overrideRange, code uint32) (rune, bool) {
	i, ok := slices.BinarySearchFunc(ov, code, func(r overrideRange, c uint32) int {
		switch {
		case r.hi < c:
			return -1
		case r.lo > c:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, false
	}
	r := ov[i]
	if r.r == utf8.RuneError {
		return r.r, true
	}
	return r.r + rune(code-r.lo), true
}

// appendTransform runs t over src (as the whole input) and appends the output
// to dst.
func appendTransform(dst []byte, t transform.Transformer, src []byte) []byte {
	if len(src) == 0 {
		return dst
	}
	t.Reset()
	dst = slices.Grow(dst, len(src)+len(src)/2+4)
	for {
		nDst, nSrc, err := t.Transform(dst[len(dst):cap(dst)], src, true)
		dst = dst[:len(dst)+nDst]
		src = src[nSrc:]
		switch err {
		case nil:
			return dst
		case transform.ErrShortDst:
			dst = slices.Grow(dst, 2*len(src)+utf8.UTFMax)
		default:
			// x/text decoders replace invalid input instead of failing;
			// should one fail anyway, mark the rest as undecodable.
			return utf8.AppendRune(dst, utf8.RuneError)
		}
	}
}
