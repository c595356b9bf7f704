package charset

import (
	"encoding/hex"
	"fmt"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// These tests check the generated table and the decoders against a real
// private MariaDB server (internal/testserver; never the system instance).

// connect returns a connection to a fresh private server as root.
func connect(t *testing.T) *client.Conn {
	t.Helper()
	return testserver.Start(t, testserver.Options{}).Conn(t)
}

func query(t *testing.T, conn *client.Conn, q string) *mysql.Result {
	t.Helper()
	res, err := conn.Execute(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	t.Cleanup(res.Close)
	return res
}

func str(t *testing.T, res *mysql.Result, row, col int) string {
	t.Helper()
	s, err := res.GetString(row, col)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every collation of the server is in the table, as MariaDB defines it.
func TestServerCollations(t *testing.T) {
	conn := connect(t)
	maxLen := map[string]int{}
	res := query(t, conn, "SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS")
	for i := range res.RowNumber() {
		n, _ := res.GetInt(i, 1)
		maxLen[str(t, res, i, 0)] = int(n)
	}
	check := func(table string, id int64, name, cs string, def bool) {
		t.Helper()
		c, ok := LookupFlavor(uint32(id), true)
		if !ok {
			t.Errorf("%s: id %d %s missing", table, id, name)
			return
		}
		if c.Name != name || c.Charset != cs || c.Default != def || c.MaxLen != maxLen[cs] {
			t.Errorf("%s: id %d: table has %+v, server has %s/%s default=%t maxlen=%d", table, id, c, name, cs, def, maxLen[cs])
		}
	}
	// COLLATIONS: MariaDB 10.10+ also lists charset-independent uca1400
	// names with a NULL id; those are in the next table with their ids.
	res = query(t, conn, "SELECT ID, COLLATION_NAME, CHARACTER_SET_NAME, IS_DEFAULT FROM information_schema.COLLATIONS WHERE ID IS NOT NULL")
	n := res.RowNumber()
	for i := range n {
		id, _ := res.GetInt(i, 0)
		check("COLLATIONS", id, str(t, res, i, 1), str(t, res, i, 2), str(t, res, i, 3) == "Yes")
	}
	res = query(t, conn, "SELECT ID, FULL_COLLATION_NAME, CHARACTER_SET_NAME, IS_DEFAULT FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY")
	for i := range res.RowNumber() {
		id, _ := res.GetInt(i, 0)
		check("COLLATION_CHARACTER_SET_APPLICABILITY", id, str(t, res, i, 1), str(t, res, i, 2), str(t, res, i, 3) == "Yes")
	}
	t.Logf("checked %d COLLATIONS rows and %d applicability rows", n, res.RowNumber())
}

// Text converted by the server into a charset decodes back to the original.
func TestServerRoundTrip(t *testing.T) {
	conn := connect(t)
	samples := map[string]string{
		"latin1":   "Café crème brûlée € Ÿ œ ™",
		"latin2":   "Zażółć gęślą jaźń",
		"cp1250":   "Příliš žluťoučký kůň „ú“",
		"cp1251":   "Съешь же ещё этих мягких булок",
		"cp1256":   "مرحبا بالعالم",
		"cp1257":   "Ąžuolas ščiūrė",
		"koi8r":    "Съешь же ещё этих",
		"koi8u":    "Їжак ґудзик",
		"greek":    "Καλημέρα κόσμε",
		"hebrew":   "שלום עולם",
		"latin5":   "Işık ğüşöç",
		"latin7":   "Ąžuolas ščiūrė",
		"cp850":    "Café ñ ü ╬",
		"cp852":    "Zażółć ╬",
		"cp866":    "Привет ╬",
		"macroman": "Café ƒ ∂ ≈",
		"macce":    "Zażółć",
		"tis620":   "สวัสดีชาวโลก",
		"armscii8": "Բարեւ",
		"geostd8":  "გამარჯობა",
		"keybcs2":  "Příliš žluťoučký",
		"dec8":     "Café Œ",
		"hp8":      "Café ñ",
		"swe7":     "ÅÄÖ åäö",
		"ascii":    "plain ASCII ~",
		"sjis":     "日本語テキスト〜ｱｲｳ ‖ −",
		"cp932":    "日本語テキスト～①Ⅰ",
		"ujis":     "日本語テキスト〜ｱ丂",
		"eucjpms":  "日本語テキスト①",
		"euckr":    "한국어 텍스트",
		"gb2312":   "中文文本",
		"gbk":      "中文文本 繁體",
		"big5":     "繁體中文",
		"ucs2":     "héllo ✓",
		"utf16":    "héllo 😀",
		"utf16le":  "héllo 😀",
		"utf32":    "héllo 😀",
		"utf8mb3":  "héllo ✓",
		"utf8mb4":  "héllo 😀",
	}
	for cs, text := range samples {
		t.Run(cs, func(t *testing.T) {
			res := query(t, conn, fmt.Sprintf(
				"SELECT HEX(CONVERT(_utf8mb4 '%s' USING %s)), (SELECT ID FROM information_schema.COLLATIONS WHERE CHARACTER_SET_NAME = '%s' AND IS_DEFAULT = 'Yes')",
				text, cs, cs))
			raw, err := hex.DecodeString(str(t, res, 0, 0))
			if err != nil {
				t.Fatal(err)
			}
			id, _ := res.GetInt(0, 1)
			got, err := Decode(nil, uint32(id), raw)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != text {
				t.Errorf("collation %d: server bytes %X decode to %q, want %q", id, raw, got, text)
			}
		})
	}
}

// For every character the server accepts in each 8-bit and multi-byte
// charset, Decode agrees with the server's conversion to UTF-32, also inside
// longer text.
func TestServerEveryCharacter(t *testing.T) {
	conn := connect(t)
	for i, cs := range charsetTable {
		d := decoders[i]
		var codes [][]byte
		switch {
		case d.kind == kindSingle || d.kind == kindASCII:
			for b := range 256 {
				codes = append(codes, []byte{byte(b)})
			}
		case d.kind == kindMulti && cs.name != "gb18030": // gb18030 is MySQL only
			for b := 0x80; b < 0x100; b++ {
				codes = append(codes, []byte{byte(b)})
			}
			for lead := 0x80; lead < 0x100; lead++ {
				for trail := 0x40; trail < 0xFF; trail++ {
					codes = append(codes, []byte{byte(lead), byte(trail)})
				}
			}
			if cs.name == "ujis" || cs.name == "eucjpms" {
				for b2 := 0xA1; b2 < 0xFF; b2++ {
					for b3 := 0xA1; b3 < 0xFF; b3++ {
						codes = append(codes, []byte{0x8F, byte(b2), byte(b3)})
					}
				}
			}
		default:
			continue
		}
		id := 0
		for _, e := range collationTable {
			if int(e.cs) == i && e.flavors&flavorMariaDB != 0 {
				id = int(e.id)
				break
			}
		}
		t.Run(cs.name, func(t *testing.T) {
			var text, want []byte
			checked := 0
			for start := 0; start < len(codes); start += 256 {
				chunk := codes[start:min(start+256, len(codes))]
				var exprs []string
				for _, c := range chunk {
					exprs = append(exprs, fmt.Sprintf("HEX(CONVERT(CONVERT(X'%X' USING %s) USING utf32))", c, cs.name))
				}
				res := query(t, conn, "SELECT "+strings.Join(exprs, ", "))
				for j, c := range chunk {
					h := str(t, res, 0, j)
					if len(h) != 8 {
						continue // not one character
					}
					v, _ := strconv.ParseUint(h, 16, 32)
					r := rune(v)
					if r == '?' && string(c) != "?" {
						if d.kind == kindSingle || d.kind == kindASCII {
							r = utf8.RuneError // documented: unconvertible byte
						} else {
							continue // not a valid character
						}
					}
					got, err := Decode(nil, uint32(id), c)
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != string(r) {
						t.Errorf("%s %X: Decode gives %q, server %U", cs.name, c, got, r)
					}
					checked++
					text = append(text, 'a')
					text = append(text, c...)
					want = append(want, 'a')
					want = utf8.AppendRune(want, r)
				}
			}
			// All characters in one string, separated by ASCII.
			got, err := Decode(nil, uint32(id), text)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s: decoding all %d characters as one text differs", cs.name, checked)
			}
			if checked == 0 {
				t.Errorf("%s: nothing checked", cs.name)
			}
		})
	}
}
