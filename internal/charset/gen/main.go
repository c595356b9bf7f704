// Command gen writes collations_table.go, the static collation and
// character-set table of package charset.
//
// Sources:
//
//   - MySQL: the rows of information_schema.COLLATIONS and CHARACTER_SETS of
//     MySQL 8.0.30+ (unchanged in 8.4 and 9.x: 286 collations, 89 of them
//     utf8mb4), kept below as text because no MySQL server is at hand. The
//     list was cross-checked against the independent MySQL table of
//     github.com/pingcap/tidb/pkg/parser/charset (equal on the 272 ids both
//     have; ids 310-323 are new in 8.0.30).
//   - MariaDB: read from a live server (-addr): every row of
//     information_schema.COLLATION_CHARACTER_SET_APPLICABILITY (which, unlike
//     COLLATIONS, lists the per-charset uca1400 collations of MariaDB 10.10+
//     with their ids) and CHARACTER_SETS.
//   - Single-byte charsets: the server's own conversion of each of the 256
//     bytes to UTF-32 (MySQL and MariaDB share these tables).
//   - Multi-byte charsets decoded through golang.org/x/text: every one- and
//     two-byte code (and the three-byte EUC-JP codes) is converted by the
//     server and by x/text; where they differ on a character the server
//     accepts, the server's answer is recorded as an override.
//
// Usage: go run ./gen -addr 127.0.0.1:3306 -user root -out collations_table.go
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/client"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// mysqlCollations is MySQL 8.0.30+/8.4's information_schema.COLLATIONS:
// ID, COLLATION_NAME, CHARACTER_SET_NAME and, if IS_DEFAULT, "default".
const mysqlCollations = `
1 big5_chinese_ci big5 default
2 latin2_czech_cs latin2
3 dec8_swedish_ci dec8 default
4 cp850_general_ci cp850 default
5 latin1_german1_ci latin1
6 hp8_english_ci hp8 default
7 koi8r_general_ci koi8r default
8 latin1_swedish_ci latin1 default
9 latin2_general_ci latin2 default
10 swe7_swedish_ci swe7 default
11 ascii_general_ci ascii default
12 ujis_japanese_ci ujis default
13 sjis_japanese_ci sjis default
14 cp1251_bulgarian_ci cp1251
15 latin1_danish_ci latin1
16 hebrew_general_ci hebrew default
18 tis620_thai_ci tis620 default
19 euckr_korean_ci euckr default
20 latin7_estonian_cs latin7
21 latin2_hungarian_ci latin2
22 koi8u_general_ci koi8u default
23 cp1251_ukrainian_ci cp1251
24 gb2312_chinese_ci gb2312 default
25 greek_general_ci greek default
26 cp1250_general_ci cp1250 default
27 latin2_croatian_ci latin2
28 gbk_chinese_ci gbk default
29 cp1257_lithuanian_ci cp1257
30 latin5_turkish_ci latin5 default
31 latin1_german2_ci latin1
32 armscii8_general_ci armscii8 default
33 utf8mb3_general_ci utf8mb3 default
34 cp1250_czech_cs cp1250
35 ucs2_general_ci ucs2 default
36 cp866_general_ci cp866 default
37 keybcs2_general_ci keybcs2 default
38 macce_general_ci macce default
39 macroman_general_ci macroman default
40 cp852_general_ci cp852 default
41 latin7_general_ci latin7 default
42 latin7_general_cs latin7
43 macce_bin macce
44 cp1250_croatian_ci cp1250
45 utf8mb4_general_ci utf8mb4
46 utf8mb4_bin utf8mb4
47 latin1_bin latin1
48 latin1_general_ci latin1
49 latin1_general_cs latin1
50 cp1251_bin cp1251
51 cp1251_general_ci cp1251 default
52 cp1251_general_cs cp1251
53 macroman_bin macroman
54 utf16_general_ci utf16 default
55 utf16_bin utf16
56 utf16le_general_ci utf16le default
57 cp1256_general_ci cp1256 default
58 cp1257_bin cp1257
59 cp1257_general_ci cp1257 default
60 utf32_general_ci utf32 default
61 utf32_bin utf32
62 utf16le_bin utf16le
63 binary binary default
64 armscii8_bin armscii8
65 ascii_bin ascii
66 cp1250_bin cp1250
67 cp1256_bin cp1256
68 cp866_bin cp866
69 dec8_bin dec8
70 greek_bin greek
71 hebrew_bin hebrew
72 hp8_bin hp8
73 keybcs2_bin keybcs2
74 koi8r_bin koi8r
75 koi8u_bin koi8u
76 utf8mb3_tolower_ci utf8mb3
77 latin2_bin latin2
78 latin5_bin latin5
79 latin7_bin latin7
80 cp850_bin cp850
81 cp852_bin cp852
82 swe7_bin swe7
83 utf8mb3_bin utf8mb3
84 big5_bin big5
85 euckr_bin euckr
86 gb2312_bin gb2312
87 gbk_bin gbk
88 sjis_bin sjis
89 tis620_bin tis620
90 ucs2_bin ucs2
91 ujis_bin ujis
92 geostd8_general_ci geostd8 default
93 geostd8_bin geostd8
94 latin1_spanish_ci latin1
95 cp932_japanese_ci cp932 default
96 cp932_bin cp932
97 eucjpms_japanese_ci eucjpms default
98 eucjpms_bin eucjpms
99 cp1250_polish_ci cp1250
101 utf16_unicode_ci utf16
102 utf16_icelandic_ci utf16
103 utf16_latvian_ci utf16
104 utf16_romanian_ci utf16
105 utf16_slovenian_ci utf16
106 utf16_polish_ci utf16
107 utf16_estonian_ci utf16
108 utf16_spanish_ci utf16
109 utf16_swedish_ci utf16
110 utf16_turkish_ci utf16
111 utf16_czech_ci utf16
112 utf16_danish_ci utf16
113 utf16_lithuanian_ci utf16
114 utf16_slovak_ci utf16
115 utf16_spanish2_ci utf16
116 utf16_roman_ci utf16
117 utf16_persian_ci utf16
118 utf16_esperanto_ci utf16
119 utf16_hungarian_ci utf16
120 utf16_sinhala_ci utf16
121 utf16_german2_ci utf16
122 utf16_croatian_ci utf16
123 utf16_unicode_520_ci utf16
124 utf16_vietnamese_ci utf16
128 ucs2_unicode_ci ucs2
129 ucs2_icelandic_ci ucs2
130 ucs2_latvian_ci ucs2
131 ucs2_romanian_ci ucs2
132 ucs2_slovenian_ci ucs2
133 ucs2_polish_ci ucs2
134 ucs2_estonian_ci ucs2
135 ucs2_spanish_ci ucs2
136 ucs2_swedish_ci ucs2
137 ucs2_turkish_ci ucs2
138 ucs2_czech_ci ucs2
139 ucs2_danish_ci ucs2
140 ucs2_lithuanian_ci ucs2
141 ucs2_slovak_ci ucs2
142 ucs2_spanish2_ci ucs2
143 ucs2_roman_ci ucs2
144 ucs2_persian_ci ucs2
145 ucs2_esperanto_ci ucs2
146 ucs2_hungarian_ci ucs2
147 ucs2_sinhala_ci ucs2
148 ucs2_german2_ci ucs2
149 ucs2_croatian_ci ucs2
150 ucs2_unicode_520_ci ucs2
151 ucs2_vietnamese_ci ucs2
159 ucs2_general_mysql500_ci ucs2
160 utf32_unicode_ci utf32
161 utf32_icelandic_ci utf32
162 utf32_latvian_ci utf32
163 utf32_romanian_ci utf32
164 utf32_slovenian_ci utf32
165 utf32_polish_ci utf32
166 utf32_estonian_ci utf32
167 utf32_spanish_ci utf32
168 utf32_swedish_ci utf32
169 utf32_turkish_ci utf32
170 utf32_czech_ci utf32
171 utf32_danish_ci utf32
172 utf32_lithuanian_ci utf32
173 utf32_slovak_ci utf32
174 utf32_spanish2_ci utf32
175 utf32_roman_ci utf32
176 utf32_persian_ci utf32
177 utf32_esperanto_ci utf32
178 utf32_hungarian_ci utf32
179 utf32_sinhala_ci utf32
180 utf32_german2_ci utf32
181 utf32_croatian_ci utf32
182 utf32_unicode_520_ci utf32
183 utf32_vietnamese_ci utf32
192 utf8mb3_unicode_ci utf8mb3
193 utf8mb3_icelandic_ci utf8mb3
194 utf8mb3_latvian_ci utf8mb3
195 utf8mb3_romanian_ci utf8mb3
196 utf8mb3_slovenian_ci utf8mb3
197 utf8mb3_polish_ci utf8mb3
198 utf8mb3_estonian_ci utf8mb3
199 utf8mb3_spanish_ci utf8mb3
200 utf8mb3_swedish_ci utf8mb3
201 utf8mb3_turkish_ci utf8mb3
202 utf8mb3_czech_ci utf8mb3
203 utf8mb3_danish_ci utf8mb3
204 utf8mb3_lithuanian_ci utf8mb3
205 utf8mb3_slovak_ci utf8mb3
206 utf8mb3_spanish2_ci utf8mb3
207 utf8mb3_roman_ci utf8mb3
208 utf8mb3_persian_ci utf8mb3
209 utf8mb3_esperanto_ci utf8mb3
210 utf8mb3_hungarian_ci utf8mb3
211 utf8mb3_sinhala_ci utf8mb3
212 utf8mb3_german2_ci utf8mb3
213 utf8mb3_croatian_ci utf8mb3
214 utf8mb3_unicode_520_ci utf8mb3
215 utf8mb3_vietnamese_ci utf8mb3
223 utf8mb3_general_mysql500_ci utf8mb3
224 utf8mb4_unicode_ci utf8mb4
225 utf8mb4_icelandic_ci utf8mb4
226 utf8mb4_latvian_ci utf8mb4
227 utf8mb4_romanian_ci utf8mb4
228 utf8mb4_slovenian_ci utf8mb4
229 utf8mb4_polish_ci utf8mb4
230 utf8mb4_estonian_ci utf8mb4
231 utf8mb4_spanish_ci utf8mb4
232 utf8mb4_swedish_ci utf8mb4
233 utf8mb4_turkish_ci utf8mb4
234 utf8mb4_czech_ci utf8mb4
235 utf8mb4_danish_ci utf8mb4
236 utf8mb4_lithuanian_ci utf8mb4
237 utf8mb4_slovak_ci utf8mb4
238 utf8mb4_spanish2_ci utf8mb4
239 utf8mb4_roman_ci utf8mb4
240 utf8mb4_persian_ci utf8mb4
241 utf8mb4_esperanto_ci utf8mb4
242 utf8mb4_hungarian_ci utf8mb4
243 utf8mb4_sinhala_ci utf8mb4
244 utf8mb4_german2_ci utf8mb4
245 utf8mb4_croatian_ci utf8mb4
246 utf8mb4_unicode_520_ci utf8mb4
247 utf8mb4_vietnamese_ci utf8mb4
248 gb18030_chinese_ci gb18030 default
249 gb18030_bin gb18030
250 gb18030_unicode_520_ci gb18030
255 utf8mb4_0900_ai_ci utf8mb4 default
256 utf8mb4_de_pb_0900_ai_ci utf8mb4
257 utf8mb4_is_0900_ai_ci utf8mb4
258 utf8mb4_lv_0900_ai_ci utf8mb4
259 utf8mb4_ro_0900_ai_ci utf8mb4
260 utf8mb4_sl_0900_ai_ci utf8mb4
261 utf8mb4_pl_0900_ai_ci utf8mb4
262 utf8mb4_et_0900_ai_ci utf8mb4
263 utf8mb4_es_0900_ai_ci utf8mb4
264 utf8mb4_sv_0900_ai_ci utf8mb4
265 utf8mb4_tr_0900_ai_ci utf8mb4
266 utf8mb4_cs_0900_ai_ci utf8mb4
267 utf8mb4_da_0900_ai_ci utf8mb4
268 utf8mb4_lt_0900_ai_ci utf8mb4
269 utf8mb4_sk_0900_ai_ci utf8mb4
270 utf8mb4_es_trad_0900_ai_ci utf8mb4
271 utf8mb4_la_0900_ai_ci utf8mb4
273 utf8mb4_eo_0900_ai_ci utf8mb4
274 utf8mb4_hu_0900_ai_ci utf8mb4
275 utf8mb4_hr_0900_ai_ci utf8mb4
277 utf8mb4_vi_0900_ai_ci utf8mb4
278 utf8mb4_0900_as_cs utf8mb4
279 utf8mb4_de_pb_0900_as_cs utf8mb4
280 utf8mb4_is_0900_as_cs utf8mb4
281 utf8mb4_lv_0900_as_cs utf8mb4
282 utf8mb4_ro_0900_as_cs utf8mb4
283 utf8mb4_sl_0900_as_cs utf8mb4
284 utf8mb4_pl_0900_as_cs utf8mb4
285 utf8mb4_et_0900_as_cs utf8mb4
286 utf8mb4_es_0900_as_cs utf8mb4
287 utf8mb4_sv_0900_as_cs utf8mb4
288 utf8mb4_tr_0900_as_cs utf8mb4
289 utf8mb4_cs_0900_as_cs utf8mb4
290 utf8mb4_da_0900_as_cs utf8mb4
291 utf8mb4_lt_0900_as_cs utf8mb4
292 utf8mb4_sk_0900_as_cs utf8mb4
293 utf8mb4_es_trad_0900_as_cs utf8mb4
294 utf8mb4_la_0900_as_cs utf8mb4
296 utf8mb4_eo_0900_as_cs utf8mb4
297 utf8mb4_hu_0900_as_cs utf8mb4
298 utf8mb4_hr_0900_as_cs utf8mb4
300 utf8mb4_vi_0900_as_cs utf8mb4
303 utf8mb4_ja_0900_as_cs utf8mb4
304 utf8mb4_ja_0900_as_cs_ks utf8mb4
305 utf8mb4_0900_as_ci utf8mb4
306 utf8mb4_ru_0900_ai_ci utf8mb4
307 utf8mb4_ru_0900_as_cs utf8mb4
308 utf8mb4_zh_0900_as_cs utf8mb4
309 utf8mb4_0900_bin utf8mb4
310 utf8mb4_nb_0900_ai_ci utf8mb4
311 utf8mb4_nb_0900_as_cs utf8mb4
312 utf8mb4_nn_0900_ai_ci utf8mb4
313 utf8mb4_nn_0900_as_cs utf8mb4
314 utf8mb4_sr_latn_0900_ai_ci utf8mb4
315 utf8mb4_sr_latn_0900_as_cs utf8mb4
316 utf8mb4_bs_0900_ai_ci utf8mb4
317 utf8mb4_bs_0900_as_cs utf8mb4
318 utf8mb4_bg_0900_ai_ci utf8mb4
319 utf8mb4_bg_0900_as_cs utf8mb4
320 utf8mb4_gl_0900_ai_ci utf8mb4
321 utf8mb4_gl_0900_as_cs utf8mb4
322 utf8mb4_mn_cyrl_0900_ai_ci utf8mb4
323 utf8mb4_mn_cyrl_0900_as_cs utf8mb4
`

// mysqlCharsets is MySQL 8.0.30+/8.4's information_schema.CHARACTER_SETS:
// CHARACTER_SET_NAME and MAXLEN.
const mysqlCharsets = `
armscii8 1
ascii 1
big5 2
binary 1
cp1250 1
cp1251 1
cp1256 1
cp1257 1
cp850 1
cp852 1
cp866 1
cp932 2
dec8 1
eucjpms 3
euckr 2
gb18030 4
gb2312 2
gbk 2
geostd8 1
greek 1
hebrew 1
hp8 1
keybcs2 1
koi8r 1
koi8u 1
latin1 1
latin2 1
latin5 1
latin7 1
macce 1
macroman 1
sjis 2
swe7 1
tis620 1
ucs2 2
ujis 3
utf16 4
utf16le 4
utf32 4
utf8mb3 3
utf8mb4 4
`

// multiByte must match the table of the same name in ../decode.go.
var multiByte = map[string]struct {
	enc  encoding.Encoding
	euc3 bool // has three-byte codes 0x8F xx xx
}{
	"sjis":    {japanese.ShiftJIS, false},
	"cp932":   {japanese.ShiftJIS, false},
	"ujis":    {japanese.EUCJP, true},
	"eucjpms": {japanese.EUCJP, true},
	"euckr":   {korean.EUCKR, false},
	"gb2312":  {simplifiedchinese.GBK, false},
	"gbk":     {simplifiedchinese.GBK, false},
	"big5":    {traditionalchinese.Big5, false},
	// gb18030 (MySQL only) is decoded by x/text alone: no server to compare.
}

type collation struct {
	id      int
	name    string
	charset string
	def     bool
}

type override struct {
	code uint32
	r    rune
}

func main() {
	addr := flag.String("addr", "127.0.0.1:3306", "MariaDB server address")
	user := flag.String("user", "root", "MariaDB user")
	password := flag.String("password", "", "MariaDB password")
	out := flag.String("out", "collations_table.go", "output file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gen: ")

	conn, err := client.Connect(*addr, *user, *password, "")
	if err != nil {
		log.Fatalf("connect to MariaDB at %s: %v", *addr, err)
	}
	defer conn.Close()
	q := func(query string) [][]string {
		res, err := conn.Execute(query)
		if err != nil {
			log.Fatalf("%s: %v", query, err)
		}
		defer res.Close()
		rows := make([][]string, res.RowNumber())
		for i := range rows {
			for j := range res.Fields {
				s, err := res.GetString(i, j)
				if err != nil {
					log.Fatal(err)
				}
				rows[i] = append(rows[i], s)
			}
		}
		return rows
	}

	version := q("SELECT VERSION()")[0][0]
	if !strings.Contains(version, "MariaDB") {
		log.Fatalf("server at %s is %q, not MariaDB", *addr, version)
	}

	// Character sets.
	maxLen := map[string]int{}
	for _, f := range fields(mysqlCharsets) {
		maxLen[f[0]] = atoi(f[1])
	}
	for _, row := range q("SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS") {
		n := atoi(row[1])
		if m, ok := maxLen[row[0]]; ok && m != n {
			log.Fatalf("charset %s: MAXLEN %d in MySQL, %d in MariaDB", row[0], m, n)
		}
		maxLen[row[0]] = n
	}
	var charsets []string
	for cs := range maxLen {
		charsets = append(charsets, cs)
	}
	slices.Sort(charsets)
	csIndex := map[string]int{}
	for i, cs := range charsets {
		csIndex[cs] = i
	}

	// Collations.
	mysql := map[int]collation{}
	for _, f := range fields(mysqlCollations) {
		c := collation{id: atoi(f[0]), name: f[1], charset: f[2], def: len(f) > 3 && f[3] == "default"}
		mysql[c.id] = c
	}
	mariadb := map[int]collation{}
	for _, row := range q("SELECT ID, FULL_COLLATION_NAME, CHARACTER_SET_NAME, IS_DEFAULT FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY") {
		c := collation{id: atoi(row[0]), name: row[1], charset: row[2], def: row[3] == "Yes"}
		if old, dup := mariadb[c.id]; dup {
			log.Fatalf("MariaDB id %d is both %s and %s", c.id, old.name, c.name)
		}
		mariadb[c.id] = c
	}
	ids := map[int]bool{}
	for id := range mysql {
		ids[id] = true
	}
	for id := range mariadb {
		ids[id] = true
	}
	sortedIDs := make([]int, 0, len(ids))
	for id := range ids {
		sortedIDs = append(sortedIDs, id)
	}
	slices.Sort(sortedIDs)

	var table bytes.Buffer
	var conflicts []string
	entry := func(c collation, flavors string) {
		if _, ok := csIndex[c.charset]; !ok {
			log.Fatalf("collation %d %s: unknown charset %s", c.id, c.name, c.charset)
		}
		fmt.Fprintf(&table, "\t{%d, %s, %t, %s, %q},\n", c.id, csConst(c.charset), c.def, flavors, c.name)
	}
	for _, id := range sortedIDs {
		my, inMy := mysql[id]
		ma, inMa := mariadb[id]
		switch {
		case inMy && inMa && my == ma:
			entry(my, "flavorBoth")
		case inMy && inMa:
			if my.charset != ma.charset {
				log.Fatalf("id %d is charset %s in MySQL but %s in MariaDB: Decode would need a flavor", id, my.charset, ma.charset)
			}
			conflicts = append(conflicts, fmt.Sprintf("%d: MySQL %s (default %t), MariaDB %s (default %t)", id, my.name, my.def, ma.name, ma.def))
			entry(my, "flavorMySQL")
			entry(ma, "flavorMariaDB")
		case inMy:
			entry(my, "flavorMySQL")
		default:
			entry(ma, "flavorMariaDB")
		}
	}

	// Single-byte tables.
	single := map[string][256]rune{}
	for _, cs := range charsets {
		if maxLen[cs] != 1 || cs == "binary" {
			continue
		}
		var exprs []string
		for b := 0; b < 256; b++ {
			exprs = append(exprs, convExpr([]byte{byte(b)}, cs))
		}
		row := q("SELECT " + strings.Join(exprs, ", "))[0]
		var t [256]rune
		for b, h := range row {
			cps := parseUTF32(h)
			switch {
			case len(cps) != 1:
				log.Fatalf("%s byte %#x: server gave %q", cs, b, h)
			case cps[0] == '?' && b != '?':
				t[b] = utf8.RuneError
			default:
				t[b] = cps[0]
			}
		}
		single[cs] = t
	}

	// Multi-byte overrides.
	overrides := map[string][]override{}
	for _, cs := range charsets {
		mb, ok := multiByte[cs]
		if !ok {
			continue
		}
		var codes [][]byte
		for b := 0x80; b < 0x100; b++ {
			codes = append(codes, []byte{byte(b)})
		}
		for lead := 0x80; lead < 0x100; lead++ {
			for trail := 0x40; trail < 0xFF; trail++ {
				codes = append(codes, []byte{byte(lead), byte(trail)})
			}
		}
		if mb.euc3 {
			for b2 := 0xA1; b2 < 0xFF; b2++ {
				for b3 := 0xA1; b3 < 0xFF; b3++ {
					codes = append(codes, []byte{0x8F, byte(b2), byte(b3)})
				}
			}
		}
		valid, diff := 0, 0
		for chunk := range slices.Chunk(codes, 256) {
			var exprs []string
			for _, c := range chunk {
				exprs = append(exprs, convExpr(c, cs))
			}
			row := q("SELECT " + strings.Join(exprs, ", "))[0]
			for i, h := range row {
				cps := parseUTF32(h)
				if len(cps) != 1 || cps[0] == '?' {
					continue // not one character the server accepts
				}
				valid++
				out, _ := mb.enc.NewDecoder().Bytes(chunk[i])
				r, n := utf8.DecodeRune(out)
				if n == len(out) && r == cps[0] && r != utf8.RuneError {
					continue
				}
				if n == len(out) && r == cps[0] { // both U+FFFD
					continue
				}
				diff++
				code := uint32(0)
				for _, b := range chunk[i] {
					code = code<<8 | uint32(b)
				}
				overrides[cs] = append(overrides[cs], override{code, cps[0]})
			}
		}
		log.Printf("%s: %d characters, %d differ from x/text", cs, valid, diff)
	}

	// Output.
	var buf bytes.Buffer
	buf.WriteString("// Code generated by go run ./gen; DO NOT EDIT.\n\n")
	buf.WriteString("package charset\n\n")
	fmt.Fprintf(&buf, "// tableSource names the data this table was generated from.\n")
	fmt.Fprintf(&buf, "const tableSource = %q\n\n", "MySQL 8.0.30-8.4 and "+version)
	fmt.Fprintf(&buf, "// maxCollationID is the largest collation id in collationTable.\n")
	fmt.Fprintf(&buf, "const maxCollationID = %d\n\n", sortedIDs[len(sortedIDs)-1])
	buf.WriteString("// Indexes into charsetTable.\nconst (\n")
	for i, cs := range charsets {
		fmt.Fprintf(&buf, "\t%s = %d\n", csConst(cs), i)
	}
	buf.WriteString(")\n\n")
	buf.WriteString("var charsetTable = [...]charsetInfo{\n")
	for _, cs := range charsets {
		fmt.Fprintf(&buf, "\t%s: {name: %q, maxLen: %d", csConst(cs), cs, maxLen[cs])
		if _, ok := single[cs]; ok {
			fmt.Fprintf(&buf, ", single: &%s", tableVar("single", cs))
		}
		if _, ok := overrides[cs]; ok {
			fmt.Fprintf(&buf, ", overrides: %s", tableVar("overrides", cs))
		}
		buf.WriteString("},\n")
	}
	buf.WriteString("}\n\n")
	buf.WriteString("// collationTable is sorted by id. Where MySQL and MariaDB disagree about an\n")
	buf.WriteString("// id, it has one row per flavor:\n")
	for _, c := range conflicts {
		fmt.Fprintf(&buf, "//   - %s\n", c)
	}
	buf.WriteString("var collationTable = [...]collationEntry{\n")
	buf.Write(table.Bytes())
	buf.WriteString("}\n")
	for _, cs := range charsets {
		t, ok := single[cs]
		if !ok {
			continue
		}
		fmt.Fprintf(&buf, "\n// %s maps each %s byte to Unicode as the server does; U+FFFD marks bytes the server cannot convert.\n", tableVar("single", cs), cs)
		fmt.Fprintf(&buf, "var %s = [256]rune{\n", tableVar("single", cs))
		for i := 0; i < 256; i += 8 {
			buf.WriteString("\t")
			for j := i; j < i+8; j++ {
				fmt.Fprintf(&buf, "0x%04X, ", t[j])
			}
			fmt.Fprintf(&buf, "// %#02x\n", i)
		}
		buf.WriteString("}\n")
	}
	for _, cs := range charsets {
		ov, ok := overrides[cs]
		if !ok {
			continue
		}
		fmt.Fprintf(&buf, "\n// %s lists the %s characters that the server converts differently from x/text.\n", tableVar("overrides", cs), cs)
		fmt.Fprintf(&buf, "var %s = []overrideRange{\n", tableVar("overrides", cs))
		for _, r := range compress(ov) {
			fmt.Fprintf(&buf, "\t{0x%X, 0x%X, 0x%04X},\n", r.lo, r.hi, r.r)
		}
		buf.WriteString("}\n")
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		log.Fatalf("format: %v", err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s: %d charsets, %d collation ids (%d MySQL, %d MariaDB), from %s", *out, len(charsets), len(sortedIDs), len(mysql), len(mariadb), version)
	for _, c := range conflicts {
		log.Printf("flavor conflict %s", c)
	}
}

type overrideRange struct {
	lo, hi uint32
	r      rune
}

// compress merges runs of consecutive codes that map to consecutive runes
// (or all to U+FFFD) into ranges.
func compress(ov []override) []overrideRange {
	slices.SortFunc(ov, func(a, b override) int { return int(a.code) - int(b.code) })
	var out []overrideRange
	for _, o := range ov {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if o.code == last.hi+1 {
				if last.r == utf8.RuneError && o.r == utf8.RuneError ||
					last.r != utf8.RuneError && o.r == last.r+rune(o.code-last.lo) {
					last.hi = o.code
					continue
				}
			}
		}
		out = append(out, overrideRange{o.code, o.code, o.r})
	}
	return out
}

// convExpr is SQL for the hex UTF-32 form of bytes b read as charset cs.
func convExpr(b []byte, cs string) string {
	return fmt.Sprintf("HEX(CONVERT(CONVERT(X'%X' USING %s) USING utf32))", b, cs)
}

func parseUTF32(h string) []rune {
	var rs []rune
	for len(h) >= 8 {
		v, err := strconv.ParseUint(h[:8], 16, 32)
		if err != nil {
			log.Fatalf("bad hex %q", h)
		}
		rs = append(rs, rune(v))
		h = h[8:]
	}
	if h != "" {
		log.Fatalf("bad UTF-32 hex %q", h)
	}
	return rs
}

func csConst(cs string) string { return "cs" + strings.ToUpper(cs[:1]) + cs[1:] }

func tableVar(kind, cs string) string { return kind + strings.ToUpper(cs[:1]) + cs[1:] }

func fields(text string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		out = append(out, strings.Fields(line))
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		log.Fatalf("not a number: %q", s)
	}
	return n
}
