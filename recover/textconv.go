package recovery

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Text conversions of valconv.go: numbers to text, and text to a column's
// character set and length.

// gcvt formats a DOUBLE (float: a FLOAT widened to float64) for width
// characters as MariaDB's my_gcvt does: the shortest digits that read
// back as the same number (at most 6 for FLOAT), in 'f' notation unless
// the exponent is outside -14..16 or 'e' keeps more digits in the width;
// digits that do not fit are rounded away. ok is false when the number
// does not fit at all (the server then cuts it and warns).
func gcvt(x float64, float bool, width int) (string, bool) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "", false
	}
	if x == 0 {
		return "0", true
	}
	ok := true
	neg := x < 0
	ax := math.Abs(x)
	if neg {
		width--
	}
	nd := width
	if float {
		nd = min(width, 6)
	}
	digits, decpt := dtoaDigits(ax, nd)
	n := len(digits)
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	expLen := 1 + b2i(decpt >= 101 || decpt <= -99) + b2i(decpt >= 11 || decpt <= -9)
	var flen int
	switch {
	case decpt <= 0:
		flen = n - decpt + 2
	case decpt < n:
		flen = n + 1
	default:
		flen = decpt
	}
	haveSpace := flen <= width
	forceE := decpt <= 0 && width <= 2-decpt && width >= 3+expLen
	fFormat := !forceE && (haveSpace || decpt <= width && (decpt >= -1 || decpt == -2 && (n > 1 || !forceE))) &&
		(!haveSpace || decpt >= -15+1 && (decpt <= 15+1 || n > decpt))
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if fFormat {
		w := width - b2i(decpt < n)
		if decpt <= 0 {
			w -= 1 - decpt
		}
		if w < n {
			if w < decpt {
				ok = false
				w = decpt
			}
			digits, decpt = fixedDigits(ax, w-decpt)
			n = len(digits)
		}
		switch {
		case n == 0:
			return "0", ok
		case decpt <= 0:
			b.WriteString("0." + strings.Repeat("0", -decpt) + digits)
		case decpt < n:
			b.WriteString(digits[:decpt] + "." + digits[decpt:])
		default:
			b.WriteString(digits + strings.Repeat("0", decpt-n))
		}
		return b.String(), ok
	}
	e := decpt - 1
	w := width
	if e < 0 {
		w--
	}
	w -= 1 + expLen
	if n > 1 {
		w--
	}
	if w <= 0 {
		return "", false
	}
	if w < n {
		digits, decpt = dtoaDigits(ax, w)
		n = len(digits)
		e = decpt - 1
	}
	b.WriteString(digits[:1])
	if n > 1 {
		b.WriteString("." + digits[1:])
	}
	b.WriteString("e" + strconv.Itoa(e))
	return b.String(), ok
}

// dtoaDigits is dtoa mode 4: the shortest digits that read back as x,
// or x rounded to nd significant digits when those are more; and the
// decimal point's position.
func dtoaDigits(x float64, nd int) (string, int) {
	e := strconv.FormatFloat(x, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	if nd > 0 && len(digits) > nd {
		e = strconv.FormatFloat(x, 'e', nd-1, 64)
		mant, exp, _ = strings.Cut(e, "e")
		digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	}
	ex, _ := strconv.Atoi(exp)
	return digits, ex + 1
}

// fixedDigits is dtoa mode 5: the shortest digits, or x rounded to nf
// digits after the decimal point when those are more.
func fixedDigits(x float64, nf int) (string, int) {
	digits, decpt := dtoaDigits(x, 0)
	if len(digits)-decpt <= nf {
		return digits, decpt
	}
	f := strconv.FormatFloat(x, 'f', max(nf, 0), 64)
	ip, fp, _ := strings.Cut(f, ".")
	all := strings.TrimLeft(ip+fp, "0")
	decpt = len(ip) - (len(ip+fp) - len(all))
	if ip == "0" {
		decpt = -(len(fp) - len(strings.TrimLeft(fp, "0")))
		all = strings.TrimLeft(fp, "0")
	}
	return strings.TrimRight(all, "0"), decpt
}

// fitText converts s to what the text column holds: characters its
// character set cannot hold become '?', then it is cut to the column's
// length (CHAR loses trailing spaces, as it reads back).
func fitText(s string, to *tablemap.Column) (string, bool) {
	rep, known := repertoire(to.Collation)
	var b strings.Builder
	chars, bytes := 0, 0
	limitC, limitB := maxChars(to), maxTextBytes(to)
	for _, r := range s {
		if rep != nil && !rep(r) {
			r = '?'
		}
		w := runeBytes(r, to.Collation)
		if chars+1 > limitC || bytes+w > limitB {
			break
		}
		chars++
		bytes += w
		b.WriteRune(r)
	}
	out := b.String()
	if to.Type == mysql.MYSQL_TYPE_STRING {
		out = strings.TrimRight(out, " ")
	}
	return out, known
}

// inRepertoire is s in the collation's character set: the characters
// it cannot hold become '?' (a text matched against ENUM or SET labels
// is converted first).
func inRepertoire(s string, coll uint32) string {
	rep, _ := repertoire(coll)
	if rep == nil {
		return s
	}
	return strings.Map(func(r rune) rune {
		if !rep(r) {
			return '?'
		}
		return r
	}, s)
}

func charsetName(coll uint32) string {
	c, ok := charset.LookupFlavor(coll, true)
	if !ok {
		return ""
	}
	return c.Charset
}

func collationName(coll uint32) string {
	c, _ := charset.LookupFlavor(coll, true)
	return c.Name
}

// maxChars is the length of a text column in characters.
func maxChars(c *tablemap.Column) int {
	switch c.Type {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		cs, ok := charset.LookupFlavor(c.Collation, true)
		if !ok || cs.MaxLen <= 1 {
			return c.Length
		}
		return c.Length / cs.MaxLen
	}
	return maxTextBytes(c)
}

// maxTextBytes is a text column's limit in bytes.
func maxTextBytes(c *tablemap.Column) int {
	if c.Type == mysql.MYSQL_TYPE_BLOB {
		if c.Length >= 4 {
			return math.MaxInt32
		}
		return 1<<(8*c.Length) - 1
	}
	return c.Length
}

func maxBytes(c *tablemap.Column) int { return maxTextBytes(c) }

var singleByte sync.Map // collation → map[rune]bool

// repertoire returns which characters the collation's character set can
// hold (nil: all of Unicode), and false when it does not know.
func repertoire(coll uint32) (func(rune) bool, bool) {
	cs, ok := charset.LookupFlavor(coll, true)
	if !ok {
		return nil, false
	}
	switch cs.Charset {
	case "utf8mb4", "utf16", "utf16le", "utf32":
		return nil, true
	case "utf8mb3", "ucs2":
		return func(r rune) bool { return r <= 0xFFFF }, true
	case "ascii":
		return func(r rune) bool { return r < 0x80 }, true
	}
	if cs.MaxLen != 1 {
		return nil, false
	}
	m, _ := singleByte.Load(coll)
	if m == nil {
		set := map[rune]bool{}
		for b := 0; b < 256; b++ {
			out, err := charset.Decode(nil, coll, []byte{byte(b)})
			if err != nil {
				return nil, false
			}
			if r, n := utf8.DecodeRune(out); n == len(out) && r != utf8.RuneError {
				set[r] = true
			}
		}
		m, _ = singleByte.LoadOrStore(coll, set)
	}
	set := m.(map[rune]bool)
	return func(r rune) bool { return set[r] }, true
}

// runeBytes is how many bytes r takes in the collation's character set.
func runeBytes(r rune, coll uint32) int {
	cs, _ := charset.LookupFlavor(coll, true)
	switch cs.Charset {
	case "ucs2":
		return 2
	case "utf16", "utf16le":
		if r > 0xFFFF {
			return 4
		}
		return 2
	case "utf32":
		return 4
	}
	if cs.MaxLen == 1 {
		return 1
	}
	return utf8.RuneLen(r)
}
