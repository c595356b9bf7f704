package charset

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		collation uint32
		src       string
		want      string
	}{
		{"latin1 café ñ", 8, "caf\xe9 \xf1", "café ñ"},
		{"latin1 is cp1252: 0x80", 8, "\x80", "€"},
		{"latin1 is cp1252: 0x9F", 8, "\x9f", "Ÿ"},
		{"latin1 cp1252 specials", 47, "\x80\x8a\x8c\x99\x9c\x9f", "€ŠŒ™œŸ"},
		{"latin1 undefined cp1252 byte as the server does", 8, "\x81\x8d", "\u0081\u008d"},
		{"latin2", 9, "\xb1\xe6\xea", "ąćę"},
		{"cp1250", 26, "\x8a\xb9\x9e", "Šąž"},
		{"cp1251", 51, "\xcf\xf0\xe8\xe2\xe5\xf2", "Привет"},
		{"koi8r", 7, "\xf0\xd2\xc9\xd7\xc5\xd4", "Привет"},
		{"greek", 25, "\xe1\xe2\xe3", "αβγ"},
		{"hebrew", 16, "\xf9\xec\xe5\xed", "שלום"},
		{"latin5", 30, "\xfd\xfe", "ış"},
		{"tis620", 18, "\xca\xc7\xd1\xca\xb4\xd5", "สวัสดี"},
		{"cp1256 byte the server cannot convert", 57, "\xc7\x8a", "ا\uFFFD"},
		{"ascii", 11, "abc", "abc"},
		{"ascii high byte is invalid", 11, "ab\x80", "ab\uFFFD"},
		{"utf8mb4", 255, "héllo 😀", "héllo 😀"},
		{"utf8mb4 invalid byte", 45, "a\xffb", "a\uFFFDb"},
		{"utf8mb3", 33, "héllo", "héllo"},
		{"utf8mb4 uca1400 (MariaDB)", 2304, "héllo", "héllo"},
		{"binary is appended as is", 63, "\x00\xff\xfe", "\x00\xff\xfe"},
		{"ucs2", 35, "\x00h\x00\xe9\x00l\x00l\x00o", "héllo"},
		{"ucs2 surrogate is invalid", 35, "\xd8\x3d\x00a", "\uFFFDa"},
		{"ucs2 odd byte", 35, "\x00a\x00", "a\uFFFD"},
		{"utf16", 54, "\x00h\x00\xe9\xd8\x3d\xde\x00", "hé😀"},
		{"utf16 unpaired surrogate", 54, "\xd8\x3d\x00a", "\uFFFDa"},
		{"utf16le", 56, "h\x00\xe9\x00\x3d\xd8\x00\xde", "hé😀"},
		{"utf32", 60, "\x00\x00\x00h\x00\x00\x00\xe9\x00\x01\xf6\x00", "hé😀"},
		{"utf32 out of range", 60, "\x00\x11\x00\x00\x00\x00\xd8\x00", "\uFFFD\uFFFD"},
		{"utf32 truncated", 61, "\x00\x00\x00a\x00\x00", "a\uFFFD"},
		{"sjis", 13, "\x93\xfa\x96\x7b\x8c\xea abc \xb1", "日本語 abc ｱ"},
		{"sjis wave dash is U+301C as in the server", 13, "a\x81\x60b\x81\x5f", "a〜b\\"},
		{"cp932 wave dash is U+FF5E", 95, "a\x81\x60b", "a～b"},
		{"cp932 NEC row 13", 95, "\x87\x40", "①"},
		{"ujis", 12, "\xc6\xfc\xcb\xdc\xb8\xec", "日本語"},
		{"ujis half-width kana and JIS X 0212", 12, "\x8e\xb1\x8f\xb0\xa1", "ｱ丂"},
		{"ujis JIS X 0212 tilde is U+007E as in the server", 12, "\x8f\xa2\xb7x", "~x"},
		{"eucjpms", 97, "\xc6\xfc\xcb\xdc", "日本"},
		{"euckr", 19, "\xc7\xd1\xb1\xb9\xbe\xee", "한국어"},
		{"gbk", 28, "\xd6\xd0\xce\xc4", "中文"},
		{"gb2312", 24, "\xd6\xd0\xce\xc4", "中文"},
		{"gb18030", 248, "\xd6\xd0\xce\xc4\x81\x30\x81\x30", "中文\u0080"},
		{"big5", 1, "\xa4\xa4\xa4\xe5", "中文"},
		{"big5 ETEN kana as in the server", 84, "\xc6\xa5", "ぁ"},
		{"sjis truncated", 13, "a\x93", "a\uFFFD"},
		{"empty", 13, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte("prefix:"), tt.collation, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if want := "prefix:" + tt.want; string(got) != want {
				t.Errorf("Decode(%d, %q) = %q, want %q", tt.collation, tt.src, got, want)
			}
			if tt.collation != 63 && !utf8.Valid(got) {
				t.Errorf("Decode(%d, %q) = %q is not UTF-8", tt.collation, tt.src, got)
			}
		})
	}
}

func TestDecodeUnknownCollation(t *testing.T) {
	for _, id := range []uint32{0, 17, 324, 2047, 5000, 1 << 31} {
		dst, err := Decode([]byte("x"), id, []byte("abc"))
		var uce *UnknownCollationError
		if !errors.As(err, &uce) || uce.ID != id {
			t.Fatalf("Decode(%d) error = %v, want *UnknownCollationError", id, err)
		}
		if string(dst) != "x" {
			t.Errorf("Decode(%d) changed dst to %q", id, dst)
		}
		msg := err.Error()
		for _, want := range []string{"charset: unknown collation id " + strconv.FormatUint(uint64(id), 10) + ":", "SHOW COLLATION", "go generate"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		if _, ok := Lookup(id); ok {
			t.Errorf("Lookup(%d) found something", id)
		}
		if IsUTF8Compatible(id) {
			t.Errorf("IsUTF8Compatible(%d) = true", id)
		}
	}
}

func TestUnsupportedCharsetError(t *testing.T) {
	err := error(&UnsupportedCharsetError{ID: 7, Charset: "koi8r"})
	if got, want := err.Error(), "charset: cannot decode character set koi8r (collation id 7) to UTF-8"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Every charset in the table can be decoded.
func TestEveryCharsetDecodes(t *testing.T) {
	for i, d := range decoders {
		if d.kind == kindUnsupported {
			t.Errorf("charset %s has no decoder", charsetTable[i].name)
		}
	}
	for _, e := range collationTable {
		if _, err := Decode(nil, uint32(e.id), []byte("abc")); err != nil {
			t.Errorf("collation %d %s: %v", e.id, e.name, err)
		}
	}
}

func TestMaxLen(t *testing.T) {
	for _, tt := range []struct {
		id      uint32
		charset string
		maxLen  int
	}{
		{255, "utf8mb4", 4},
		{45, "utf8mb4", 4},
		{33, "utf8mb3", 3},
		{8, "latin1", 1},
		{35, "ucs2", 2},
		{60, "utf32", 4},
		{54, "utf16", 4},
		{13, "sjis", 2},
		{12, "ujis", 3},
		{248, "gb18030", 4},
		{63, "binary", 1},
		{2304, "utf8mb4", 4},
	} {
		c, ok := Lookup(tt.id)
		if !ok || c.Charset != tt.charset || c.MaxLen != tt.maxLen || c.ID != tt.id {
			t.Errorf("Lookup(%d) = %+v, %t; want charset %s, MaxLen %d", tt.id, c, ok, tt.charset, tt.maxLen)
		}
	}
}

func TestLookupFlavors(t *testing.T) {
	for _, tt := range []struct {
		id      uint32
		mariadb bool
		name    string
		def     bool
	}{
		{255, false, "utf8mb4_0900_ai_ci", true},
		{255, true, "utf8mb4_0900_ai_ci", true}, // MariaDB 11.4.5+ alias, MySQL's name
		{45, false, "utf8mb4_general_ci", false},
		{45, true, "utf8mb4_general_ci", true},
		{8, false, "latin1_swedish_ci", true},
		{8, true, "latin1_swedish_ci", true},
		{213, false, "utf8mb3_croatian_ci", false},
		{213, true, "utf8mb3_croatian_mysql561_ci", false},
		{576, false, "utf8mb3_croatian_ci", false}, // MariaDB only
		{33, true, "utf8mb3_general_ci", true},
		{248, true, "gb18030_chinese_ci", true}, // MySQL only
		{2048, false, "utf8mb3_uca1400_ai_ci", false},
		{2304, true, "utf8mb4_uca1400_ai_ci", false},
		{1025, true, "big5_chinese_nopad_ci", false},
	} {
		c, ok := LookupFlavor(tt.id, tt.mariadb)
		if !ok || c.Name != tt.name || c.Default != tt.def {
			t.Errorf("LookupFlavor(%d, %t) = %+v, %t; want %s default=%t", tt.id, tt.mariadb, c, ok, tt.name, tt.def)
		}
		if !tt.mariadb {
			if c2, _ := Lookup(tt.id); c2 != c {
				t.Errorf("Lookup(%d) = %+v, LookupFlavor(%d, false) = %+v", tt.id, c2, tt.id, c)
			}
		}
	}
}

func TestIsUTF8Compatible(t *testing.T) {
	for id, want := range map[uint32]bool{
		255: true, 45: true, 46: true, 33: true, 83: true, 11: true, 65: true, 2048: true, 2304: true,
		63: false, 8: false, 35: false, 54: false, 56: false, 60: false, 13: false, 28: false,
	} {
		if got := IsUTF8Compatible(id); got != want {
			t.Errorf("IsUTF8Compatible(%d) = %t, want %t", id, got, want)
		}
	}
}

func TestTableConsistency(t *testing.T) {
	for id := range uint32(maxCollationID + 1) {
		my, ma := mysqlIndex[id], mariadbIndex[id]
		if my != 0 && ma != 0 && collationTable[my-1].cs != collationTable[ma-1].cs {
			t.Errorf("id %d: MySQL and MariaDB charsets differ; Decode would need a flavor", id)
		}
	}
	for i := 1; i < len(collationTable); i++ {
		if collationTable[i].id < collationTable[i-1].id {
			t.Fatalf("collationTable not sorted at %d", collationTable[i].id)
		}
	}
	// One default collation per charset and flavor.
	for _, fl := range []uint8{flavorMySQL, flavorMariaDB} {
		defaults := map[uint8]int{}
		seen := map[uint8]bool{}
		for _, e := range collationTable {
			if e.flavors&fl == 0 {
				continue
			}
			seen[e.cs] = true
			if e.def {
				defaults[e.cs]++
			}
		}
		for cs := range seen {
			if defaults[cs] != 1 {
				t.Errorf("flavor %d charset %s has %d default collations", fl, charsetTable[cs].name, defaults[cs])
			}
		}
	}
	for _, cs := range charsetTable {
		for i, r := range cs.overrides {
			if r.lo > r.hi || i > 0 && cs.overrides[i-1].hi >= r.lo {
				t.Errorf("%s: override ranges out of order at %#x", cs.name, r.lo)
			}
		}
	}
	if n := len(collationTable); n < 1300 {
		t.Errorf("only %d collation rows", n)
	}
}

func TestDecodeAllocs(t *testing.T) {
	dst := make([]byte, 0, 1024)
	for _, tt := range []struct {
		collation uint32
		src       string
	}{
		{8, "caf\xe9 \xf1 \x80"},
		{255, "héllo wörld"},
		{35, "\x00h\x00\xe9"},
		{13, "\x93\xfa\x96\x7b a\x81\x60b"}, // x/text with override
		{28, "\xd6\xd0\xce\xc4"},            // x/text only
	} {
		src := []byte(tt.src)
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := Decode(dst[:0], tt.collation, src); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Decode(%d) allocates %v times per call", tt.collation, allocs)
		}
	}
}

// The pooled x/text decoders are safe for concurrent use.
func TestDecodeConcurrent(t *testing.T) {
	src := bytes.Repeat([]byte("\x93\xfa\x96\x7b\x81\x60abc"), 100)
	want := strings.Repeat("日本〜abc", 100)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				got, err := Decode(nil, 13, src)
				if err != nil || string(got) != want {
					t.Errorf("concurrent Decode = %q, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkDecodeLatin1(b *testing.B) {
	src := bytes.Repeat([]byte("Caf\xe9 cr\xe8me br\xfbl\xe9e, \x80 12.50 "), 32) // ~1 KiB
	dst := make([]byte, 0, 4*len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = Decode(dst[:0], 8, src)
	}
}

func BenchmarkDecodeUTF8(b *testing.B) {
	src := bytes.Repeat([]byte("Café crème brûlée, € 12.50 "), 32)
	dst := make([]byte, 0, 2*len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = Decode(dst[:0], 255, src)
	}
}

func BenchmarkDecodeSJIS(b *testing.B) {
	src := bytes.Repeat([]byte("\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x95\xb6\x8f\xcd abc "), 64)
	dst := make([]byte, 0, 2*len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = Decode(dst[:0], 13, src)
	}
}
