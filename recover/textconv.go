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

// gcvt formats a FLOAT or DOUBLE for a text column of width characters
// as MariaDB's my_gcvt does: the shortest digits that read back as the
// same number (at most 6 for FLOAT), in 'f' notation unless the exponent
// is outside -14..16 or the number does not fit, then 'e' ("1e20").
func gcvt(x float64, float bool, width int) (string, bool) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "", false
	}
	if x == 0 {
		return "0", true
	}
	neg := x < 0
	if neg {
		width--
	}
	nd := min(width, 17)
	if float {
		nd = min(width, 6)
	}
	e := strconv.FormatFloat(math.Abs(x), 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	if len(digits) > nd && nd > 0 {
		e = strconv.FormatFloat(math.Abs(x), 'e', nd-1, 64)
		mant, exp, _ = strings.Cut(e, "e")
		digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	}
	ex, _ := strconv.Atoi(exp)
	decpt := ex + 1
	n := len(digits)
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
	if !haveSpace {
		return "", false // my_gcvt cuts digits here: not reproduced
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if decpt >= -15+1 && (decpt <= 15+1 || n > decpt) {
		switch {
		case decpt <= 0:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -decpt))
			b.WriteString(digits)
		case decpt < n:
			b.WriteString(digits[:decpt] + "." + digits[decpt:])
		default:
			b.WriteString(digits + strings.Repeat("0", decpt-n))
		}
		return b.String(), true
	}
	b.WriteString(digits[:1])
	if n > 1 {
		b.WriteString("." + digits[1:])
	}
	b.WriteString("e" + strconv.Itoa(decpt-1))
	return b.String(), true
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
