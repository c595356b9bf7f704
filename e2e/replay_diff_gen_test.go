package e2e

// The tables and the workload of TestReplayDifferential
// (replay_diff_test.go): every column type at its edges, in runs long
// enough for replay's fast paths (LOAD DATA, INSERT … ON DUPLICATE KEY
// UPDATE, DELETE … IN).

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// dfCol is a non-key column: its DDL and a generator of SQL literals.
type dfCol struct {
	name, ddl string
	gen       func(g *rpGen) string
	blob      bool   // a BLOB/TEXT (left out of NOBLOB images)
	only      string // the one table that has it ("": any)
}

func dfPick(g *rpGen, vals ...string) string { return vals[g.pick(len(vals))] }

// dfText is text of up to n characters from parts, as the charset
// introducer's hex literal (exact, whatever the session's charset).
func dfText(g *rpGen, n int, parts []string) string {
	var b strings.Builder
	for l, want := 0, g.pick(n+1); l < want; {
		p := parts[g.pick(len(parts))]
		if l+len([]rune(p)) > n {
			break
		}
		b.WriteString(p)
		l += len([]rune(p))
	}
	return "_utf8mb4 X'" + hex.EncodeToString([]byte(b.String())) + "'"
}

var (
	// Characters every charset below has, and the ones LOAD DATA and
	// SQL text escape or may misread.
	dfASCII = []string{"a", "Z", " ", "\t", "\n", "\r", "\\", "\\N", "N", "NULL", "'", "\"", "%", "_", "\x1a", "\x00", ",", ";", "0"}
	dfUTF8  = append([]string{"é", "ü", "😀", "☃", "中文", "\u200b", "𝄞", "ÿ"}, dfASCII...)
	dfBMP   = append([]string{"é", "ü", "☃", "中文", "ÿ"}, dfASCII...)
	dfLat1  = append([]string{"é", "ü", "ÿ", "€", "‰", "Š"}, dfASCII...)
	dfCyr   = append([]string{"а", "Ж", "я", "ё", "Ђ", "№"}, dfASCII...)
	// ソ表能 have 0x5C (backslash) as their second byte in Shift-JIS.
	dfSJIS = append([]string{"ソ", "表", "能", "ア", "漢字", "ｱ"}, dfASCII...)
	dfGBK  = append([]string{"中文", "乗", "表", "€"}, dfASCII...)
)

// dfRaw is raw bytes in charset cs (every byte value, for single-byte
// charsets), or in binary.
func dfRaw(g *rpGen, cs string, n int) string {
	b := make([]byte, g.pick(n+1))
	for i := range b {
		b[i] = dfPick(g, "\x00", "\xff", "\\", "\t", "\n", "\x80", "\x81", "\x98", "\x9d", "\xa0", " ", "N")[0]
		if g.chance(0.5) {
			b[i] = byte(g.pick(256))
		}
	}
	if len(b) > 0 && g.chance(0.3) {
		b[len(b)-1] = 0
	}
	if len(b) > 0 && g.chance(0.2) {
		b[len(b)-1] = ' '
	}
	return "_" + cs + " X'" + hex.EncodeToString(b) + "'"
}

func dfBits(g *rpGen, n int) string {
	max := uint64(math.MaxUint64) >> (64 - n)
	return dfPick(g, "0", strconv.FormatUint(max, 10), strconv.FormatUint(g.r.Uint64()&max, 10), strconv.FormatUint(1<<(n-1), 10))
}

func dfFloat(g *rpGen) string {
	return dfPick(g, "-0e0", "0e0", "1.401298464324817e-45", "-1.1754943508222875e-38", "3.4028234663852886e38", "0.1", "-123456.789",
		"16777217", strconv.FormatFloat(float64(float32(g.r.NormFloat64()*math.Pow(10, float64(g.pick(60)-30)))), 'g', -1, 32))
}

func dfDouble(g *rpGen) string {
	return dfPick(g, "-0e0", "4.9406564584124654e-324", "-2.2250738585072014e-308", "1.7976931348623157e308", "0.30000000000000004",
		"1e22", "123456789012345678", "-9007199254740993", strconv.FormatFloat(g.r.NormFloat64()*math.Pow(10, float64(g.pick(600)-300)), 'g', -1, 64))
}

func dfDecimal(g *rpGen, p, s int, unsigned bool) string {
	switch g.pick(5) {
	case 0:
		return "0"
	case 1:
		v := strings.Repeat("9", p-s)
		if s > 0 {
			v += "." + strings.Repeat("9", s)
		}
		if v[0] == '.' {
			v = "0" + v
		}
		if !unsigned && g.chance(0.5) {
			v = "-" + v
		}
		return v
	case 2:
		if s > 0 {
			return dfPick(g, "-", "") + "0." + strings.Repeat("0", s-1) + "1"
		}
	}
	if p == s {
		return dfPick(g, "-", "") + "0." + g.digits(s)
	}
	return g.decimal(p, s, unsigned)
}

func dfTime(g *rpGen, fsp int) string {
	f := ""
	if fsp > 0 {
		f = g.frac(fsp)
	}
	return g.quote(dfPick(g, "-838:59:59", "838:59:59", "00:00:00", "-00:00:01"+f,
		fmt.Sprintf("%s%d:%02d:%02d%s", dfPick(g, "", "-"), g.pick(839), g.pick(60), g.pick(60), f)))
}

func dfDatetime(g *rpGen, fsp int) string {
	f := ""
	if fsp > 0 {
		f = g.frac(fsp)
	}
	return g.quote(dfPick(g, "0000-00-00 00:00:00", "9999-12-31 23:59:59"+f, "1000-01-01 00:00:00", "2020-02-30 12:00:00"+f, "2020-00-00 00:00:00",
		g.date()+" "+g.clock()+f))
}

func dfTimestamp(g *rpGen, fsp int) string {
	f := ""
	if fsp > 0 {
		f = g.frac(fsp)
	}
	return g.quote(dfPick(g, "0000-00-00 00:00:00", "1970-01-01 00:00:01"+f, "2038-01-19 03:14:07"+f,
		fmt.Sprintf("%04d-%02d-%02d %s%s", 1971+g.pick(66), 1+g.pick(12), 1+g.pick(28), g.clock(), f)))
}

func dfInet6(g *rpGen) string {
	// The last two are addresses whose 16 bytes read as the text of
	// another address ("::ffff:10.0.0.10", "1:2:3:4:5:6:7:88").
	return g.quote(dfPick(g, "::", "::1", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::ff00:42:8329",
		"3a3a:6666:6666:3a31:302e:302e:302e:3130", "313a:323a:333a:343a:353a:363a:373a:3838",
		fmt.Sprintf("%x::%x", g.pick(65536), g.pick(65536))))
}

func dfUUID(g *rpGen) string {
	b := make([]byte, 16)
	g.r.Read(b)
	h := hex.EncodeToString(b)
	return g.quote(dfPick(g, "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "6ccd780c-baba-1026-9564-5b8c656024db",
		h[:8]+"-"+h[8:12]+"-1"+h[13:16]+"-8"+h[17:20]+"-"+h[20:], h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:]))
}

func dfJSON(g *rpGen) string {
	return dfPick(g, g.json(), `'{"a\\tb": "x\\ny", "k": "\\\\N"}'`, `'[]'`, `'"\\u0000"'`, `'{"n": -0.0, "big": 1e308, "s": "tab\\there"}'`, `'null'`)
}

// dfCols are the non-key columns, every type at its edges.
var dfCols = []dfCol{
	{name: "ti", ddl: "TINYINT", gen: func(g *rpGen) string { return g.intOf(8, false) }},
	{name: "tiu", ddl: "TINYINT UNSIGNED", gen: func(g *rpGen) string { return g.intOf(8, true) }},
	{name: "si", ddl: "SMALLINT", gen: func(g *rpGen) string { return g.intOf(16, false) }},
	{name: "siu", ddl: "SMALLINT UNSIGNED", gen: func(g *rpGen) string { return g.intOf(16, true) }},
	{name: "mi", ddl: "MEDIUMINT", gen: func(g *rpGen) string { return g.intOf(24, false) }},
	{name: "miu", ddl: "MEDIUMINT UNSIGNED", gen: func(g *rpGen) string { return g.intOf(24, true) }},
	{name: "i", ddl: "INT", gen: func(g *rpGen) string { return g.intOf(32, false) }},
	{name: "iu", ddl: "INT UNSIGNED NOT NULL DEFAULT 7", gen: func(g *rpGen) string { return g.intOf(32, true) }},
	{name: "bi", ddl: "BIGINT", gen: func(g *rpGen) string { return g.intOf(64, false) }},
	{name: "biu", ddl: "BIGINT UNSIGNED", gen: func(g *rpGen) string { return g.intOf(64, true) }},
	{name: "yr", ddl: "YEAR", gen: func(g *rpGen) string { return dfPick(g, "0", "1901", "2155", "'0'", strconv.Itoa(1901+g.pick(255))) }},
	{name: "b1", ddl: "BIT(1)", gen: func(g *rpGen) string { return dfBits(g, 1) }},
	{name: "b7", ddl: "BIT(7)", gen: func(g *rpGen) string { return dfBits(g, 7) }},
	{name: "b8", ddl: "BIT(8)", gen: func(g *rpGen) string { return dfBits(g, 8) }},
	{name: "b17", ddl: "BIT(17)", gen: func(g *rpGen) string { return dfBits(g, 17) }},
	{name: "b33", ddl: "BIT(33)", gen: func(g *rpGen) string { return dfBits(g, 33) }},
	{name: "b64", ddl: "BIT(64)", gen: func(g *rpGen) string { return dfBits(g, 64) }},
	{name: "d1", ddl: "DECIMAL(1,0)", gen: func(g *rpGen) string { return dfDecimal(g, 1, 0, false) }},
	{name: "d55", ddl: "DECIMAL(5,5)", gen: func(g *rpGen) string { return dfDecimal(g, 5, 5, false) }},
	{name: "d2010", ddl: "DECIMAL(20,10)", gen: func(g *rpGen) string { return dfDecimal(g, 20, 10, false) }},
	{name: "d65u", ddl: "DECIMAL(65,30) UNSIGNED", gen: func(g *rpGen) string { return dfDecimal(g, 65, 30, true) }},
	{name: "d650", ddl: "DECIMAL(65,0)", gen: func(g *rpGen) string { return dfDecimal(g, 65, 0, false) }},
	{name: "d6538", ddl: "DECIMAL(65,38)", gen: func(g *rpGen) string { return dfDecimal(g, 65, 38, false) }},
	{name: "f", ddl: "FLOAT", gen: dfFloat},
	{name: "f73", ddl: "FLOAT(7,3)", gen: func(g *rpGen) string {
		return dfPick(g, "-0e0", "9999.999", "-9999.999", "0.001", g.decimal(7, 3, false))
	}},
	{name: "fd", ddl: "DOUBLE", gen: dfDouble},
	{name: "fd205", ddl: "DOUBLE(20,5)", gen: func(g *rpGen) string { return dfPick(g, "-0e0", "123456789012345.12345", g.decimal(20, 5, false)) }},
	{name: "da", ddl: "DATE", gen: func(g *rpGen) string { return g.quote(dfPick(g, "0000-00-00", "9999-12-31", "2020-02-30", g.date())) }},
	{name: "tm0", ddl: "TIME", gen: func(g *rpGen) string { return dfTime(g, 0) }},
	{name: "tm3", ddl: "TIME(3)", gen: func(g *rpGen) string { return dfTime(g, 3) }},
	{name: "tm6", ddl: "TIME(6)", gen: func(g *rpGen) string { return dfTime(g, 6) }},
	{name: "dt0", ddl: "DATETIME", gen: func(g *rpGen) string { return dfDatetime(g, 0) }},
	{name: "dt2", ddl: "DATETIME(2)", gen: func(g *rpGen) string { return dfDatetime(g, 2) }},
	{name: "dt6", ddl: "DATETIME(6) NOT NULL DEFAULT '2001-01-01 00:00:00'", gen: func(g *rpGen) string { return dfDatetime(g, 6) }},
	{name: "ts0", ddl: "TIMESTAMP NULL DEFAULT NULL", gen: func(g *rpGen) string { return dfTimestamp(g, 0) }},
	{name: "ts4", ddl: "TIMESTAMP(4) NULL DEFAULT NULL", gen: func(g *rpGen) string { return dfTimestamp(g, 4) }},
	{name: "ts6", ddl: "TIMESTAMP(6) NULL DEFAULT NULL", gen: func(g *rpGen) string { return dfTimestamp(g, 6) }},
	{name: "cu", ddl: "CHAR(10) CHARACTER SET utf8mb4", gen: func(g *rpGen) string { return dfText(g, 10, dfUTF8) }},
	{name: "vu", ddl: "VARCHAR(50) CHARACTER SET utf8mb4", gen: func(g *rpGen) string { return dfText(g, 50, dfUTF8) }},
	{name: "vnn", ddl: "VARCHAR(20) CHARACTER SET utf8mb4 NOT NULL DEFAULT ''", gen: func(g *rpGen) string { return dfPick(g, "''", "' '", dfText(g, 20, dfUTF8)) }},
	{name: "tu", ddl: "TEXT CHARACTER SET utf8mb4", blob: true, gen: func(g *rpGen) string { return dfText(g, 300, dfUTF8) }},
	{name: "vub", ddl: "VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", gen: func(g *rpGen) string { return dfText(g, 30, dfUTF8) }},
	{name: "vnp", ddl: "VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", gen: func(g *rpGen) string { return dfText(g, 30, dfUTF8) }},
	{name: "v3", ddl: "VARCHAR(30) CHARACTER SET utf8mb3", gen: func(g *rpGen) string { return dfText(g, 30, dfBMP) }},
	{name: "vl", ddl: "VARCHAR(50) CHARACTER SET latin1", gen: func(g *rpGen) string { return dfPick(g, dfRaw(g, "latin1", 50), dfText(g, 50, dfLat1)) }},
	{name: "cl", ddl: "CHAR(5) CHARACTER SET latin1 COLLATE latin1_bin", gen: func(g *rpGen) string { return dfPick(g, dfRaw(g, "latin1", 5), dfText(g, 5, dfLat1)) }},
	{name: "tl", ddl: "TEXT CHARACTER SET latin1", blob: true, gen: func(g *rpGen) string { return dfText(g, 100, dfLat1) }},
	{name: "vcp", ddl: "VARCHAR(30) CHARACTER SET cp1251", gen: func(g *rpGen) string { return dfText(g, 30, dfCyr) }},
	{name: "vkoi", ddl: "VARCHAR(30) CHARACTER SET koi8r", gen: func(g *rpGen) string { return dfText(g, 30, append([]string{"а", "Ж", "я"}, dfASCII...)) }},
	{name: "vsj", ddl: "VARCHAR(30) CHARACTER SET sjis", gen: func(g *rpGen) string { return dfText(g, 30, dfSJIS) }},
	{name: "vgb", ddl: "VARCHAR(30) CHARACTER SET gbk", gen: func(g *rpGen) string { return dfText(g, 30, dfGBK) }},
	{name: "vuc", ddl: "VARCHAR(30) CHARACTER SET ucs2", gen: func(g *rpGen) string { return dfText(g, 30, dfBMP) }},
	{name: "vu16", ddl: "VARCHAR(30) CHARACTER SET utf16", gen: func(g *rpGen) string { return dfText(g, 30, dfUTF8) }},
	{name: "vu32", ddl: "VARCHAR(20) CHARACTER SET utf32", gen: func(g *rpGen) string { return dfText(g, 20, dfUTF8) }},
	{name: "vas", ddl: "VARCHAR(30) CHARACTER SET ascii", gen: func(g *rpGen) string { return dfText(g, 30, dfASCII) }},
	{name: "bn", ddl: "BINARY(8)", gen: func(g *rpGen) string { return dfRaw(g, "binary", 8) }},
	{name: "vb", ddl: "VARBINARY(40)", gen: func(g *rpGen) string { return dfRaw(g, "binary", 40) }},
	{name: "tb", ddl: "TINYBLOB", blob: true, gen: func(g *rpGen) string { return dfRaw(g, "binary", 60) }},
	{name: "bl", ddl: "BLOB", blob: true, gen: func(g *rpGen) string { return dfRaw(g, "binary", 400) }},
	{name: "en", ddl: "ENUM('', 'a', 'b c', 'ü', '\\\\N')", gen: func(g *rpGen) string { return dfPick(g, "''", "'a'", "'b c'", "_utf8mb4 X'c3bc'", "'\\\\N'", "2") }},
	{name: "st", ddl: "SET('', 'x', 'y z', 'ü')", gen: func(g *rpGen) string {
		if g.chance(0.02) { // with the member '' (not by LOAD DATA)
			return dfPick(g, "',x'", "15", "','")
		}
		return dfPick(g, "''", "'x'", "'x,y z'", "_utf8mb4 X'782cc3bc'")
	}},
	{name: "js", ddl: "JSON", blob: true, gen: dfJSON},
	{name: "gm", ddl: "GEOMETRY", blob: true, gen: func(g *rpGen) string { return g.geometry(false) }},
	{name: "pt", ddl: "POINT", blob: true, gen: func(g *rpGen) string { return g.geometry(true) }},
	// Their tables' inserts never go by LOAD DATA: in one table only.
	{name: "uu", ddl: "UUID", gen: dfUUID, only: "uniq"},
	{name: "i6", ddl: "INET6", gen: dfInet6, only: "uniq"},
	{name: "i4", ddl: "INET4", only: "uniq", gen: func(g *rpGen) string {
		return g.quote(dfPick(g, "0.0.0.0", "255.255.255.255", fmt.Sprintf("%d.%d.%d.%d", g.pick(256), g.pick(256), g.pick(256), g.pick(256))))
	}},
}

// dfTable is a table of the workload and the rows it holds now, by key.
type dfTable struct {
	name    string
	keyDDL  string                 // the key columns' DDL and the key clause
	keyCols []string               // "" for a table without a key (rows found by n)
	key     func(seq int) []string // the key's literals for row seq
	cols    []dfCol
	serial  bool             // keyed by text, a unique key, none: replay applies it alone
	live    []int            // sequence numbers of the rows there
	keyOf   map[int][]string // the key literals each live row has now
	next    int
}

// dfIntKey is the INT key of slot s: the type's two ends, then spread
// values.
func dfIntKey(s int) []string {
	switch s {
	case 0:
		return []string{"-2147483648"}
	case 1:
		return []string{"2147483647"}
	}
	return []string{strconv.Itoa(s*37 - 20000)}
}

// dfTextKey is the utf8mb4 VARCHAR key of slot s, with a tab and a \N.
func dfTextKey(s int) []string {
	return []string{fmt.Sprintf("_utf8mb4 X'%s'", hex.EncodeToString([]byte(fmt.Sprintf("ké\t%d\\N", s))))}
}

// dfBinKey is the BINARY(6) key of slot s: all zero and all 0xff bytes,
// then values with trailing zero bytes (which the binlog leaves out).
func dfBinKey(s int) []string {
	switch s {
	case 0:
		return []string{"X'000000000000'"}
	case 1:
		return []string{"X'ffffffffffff'"}
	}
	return []string{fmt.Sprintf("X'%06x000000'", s)}
}

// dfTables makes the workload's tables; every table has the columns
// whose index falls in its share and a few more, the first has all (but
// those of one table only).
func dfTables(g *rpGen) []*dfTable {
	ts := []*dfTable{
		{name: "ints", keyDDL: "id INT NOT NULL, PRIMARY KEY (id)", keyCols: []string{"id"}, key: dfIntKey},
		{name: "ubig", keyDDL: "id BIGINT UNSIGNED NOT NULL PRIMARY KEY", keyCols: []string{"id"}, key: func(s int) []string {
			if s%2 == 1 {
				return []string{strconv.FormatUint(math.MaxUint64-uint64(s/2), 10)}
			}
			return []string{strconv.Itoa(s / 2)}
		}},
		{name: "comp", keyDDL: "a INT NOT NULL, b VARBINARY(8) NOT NULL, PRIMARY KEY (b, a)", keyCols: []string{"a", "b"}, key: func(s int) []string {
			return []string{strconv.Itoa(s%7 - 3), fmt.Sprintf("X'%02x00ff%02x'", s/7%256, s/7/256)}
		}},
		{name: "vkey", keyDDL: "k VARCHAR(32) CHARACTER SET utf8mb4 NOT NULL PRIMARY KEY", keyCols: []string{"k"}, serial: true, key: dfTextKey},
		{name: "bkey", keyDDL: "k BINARY(6) NOT NULL PRIMARY KEY", keyCols: []string{"k"}, key: dfBinKey},
		{name: "uniq", keyDDL: "id INT NOT NULL PRIMARY KEY, u VARCHAR(20), UNIQUE KEY (u)", keyCols: []string{"id"}, serial: true, key: func(s int) []string {
			return []string{strconv.Itoa(s)}
		}},
		{name: "nokey", keyDDL: "n INT", serial: true, key: func(s int) []string { return []string{strconv.Itoa(s)} }},
	}
	for k, t := range ts {
		for i, c := range dfCols {
			if c.only != "" {
				if c.only == t.name {
					t.cols = append(t.cols, c)
				}
			} else if k == 0 || (i+k)%3 == 0 || g.chance(0.15) {
				t.cols = append(t.cols, c)
			}
		}
		t.keyOf = map[int][]string{}
	}
	return ts
}

func (t *dfTable) full() string { return "df." + rpQ(t.name) }

func (t *dfTable) create() string {
	var cols []string
	for _, c := range t.cols {
		cols = append(cols, rpQ(c.name)+" "+c.ddl)
	}
	return fmt.Sprintf("CREATE TABLE %s (%s, %s)", t.full(), strings.Join(cols, ", "), t.keyDDL)
}

// where finds row seq: by its key, or by n.
func (t *dfTable) where(seq int) string {
	if t.keyCols == nil {
		return fmt.Sprintf("n = %d LIMIT 1", seq)
	}
	var c []string
	for i, k := range t.keyCols {
		c = append(c, rpQ(k)+" = "+t.keyOf[seq][i])
	}
	return strings.Join(c, " AND ")
}

// values is a new row's literals for t.cols (some NULL, NOT NULL kept).
func (t *dfTable) values(g *rpGen) []string {
	var v []string
	for _, c := range t.cols {
		if !strings.Contains(c.ddl, "NOT NULL") && g.chance(0.1) {
			v = append(v, "NULL")
		} else {
			v = append(v, c.gen(g))
		}
	}
	return v
}

func (t *dfTable) colList() string {
	var names []string
	if t.keyCols == nil {
		names = append(names, "n")
	}
	names = append(names, t.keyCols...)
	if t.name == "uniq" {
		names = append(names, "u")
	}
	for _, c := range t.cols {
		names = append(names, rpQ(c.name))
	}
	return strings.Join(names, ", ")
}

// insert is a new row's tuple, with a fresh sequence number (or, with seq >= 0,
// that one again: a deleted row's key).
func (t *dfTable) insert(g *rpGen, seq int) string {
	if seq < 0 {
		seq = t.next
		t.next++
	}
	key := t.key(seq)
	t.live = append(t.live, seq)
	t.keyOf[seq] = key
	vals := append([]string(nil), key...)
	if t.name == "uniq" { // u: unique, or NULL
		vals = append(vals, dfPick(g, "NULL", fmt.Sprintf("'u%d'", seq)))
	}
	return "(" + strings.Join(append(vals, t.values(g)...), ", ") + ")"
}

// drop removes the i-th live row, returning its sequence number.
func (t *dfTable) drop(i int) int {
	seq := t.live[i]
	t.live[i] = t.live[len(t.live)-1]
	t.live = t.live[:len(t.live)-1]
	delete(t.keyOf, seq)
	return seq
}

// dfTx is one source transaction: runs of inserts, updates (keeping the
// key, setting NULLs, changing nothing, moving the key), deletes, and
// deletes and inserts of the same key, over one to three tables,
// sometimes interleaved statement by statement.
func dfTx(g *rpGen, ts []*dfTable) []string {
	stmts := []string{"BEGIN"}
	picked := []*dfTable{ts[g.pick(len(ts))]}
	for g.chance(0.5) && len(picked) < 3 {
		picked = append(picked, ts[g.pick(len(ts))])
	}
	for _, t := range picked {
		switch op := g.pick(10); {
		case op < 3 || len(t.live) < 20: // a long insert run
			n := 128 + g.pick(200)
			if g.chance(0.5) {
				var rows []string
				for j := 0; j < n; j++ {
					rows = append(rows, t.insert(g, -1))
				}
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.full(), t.colList(), strings.Join(rows, ", ")))
			} else {
				for j := 0; j < n; j++ {
					stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.full(), t.colList(), t.insert(g, -1)))
				}
			}
		case op < 6: // a run of updates by key, each row its values
			for j := 8 + g.pick(40); j > 0; j-- {
				seq := t.live[g.pick(len(t.live))]
				var sets []string
				for _, c := range t.cols {
					switch {
					case g.chance(0.3):
						sets = append(sets, rpQ(c.name)+" = "+c.gen(g))
					case g.chance(0.05) && !strings.Contains(c.ddl, "NOT NULL"):
						sets = append(sets, rpQ(c.name)+" = NULL")
					}
				}
				if len(sets) == 0 || g.chance(0.05) {
					sets = []string{rpQ(t.cols[0].name) + " = " + rpQ(t.cols[0].name)} // changes nothing
				}
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.full(), strings.Join(sets, ", "), t.where(seq)))
			}
		case op == 6 && t.keyCols != nil && t.name != "uniq": // a run of updates moving the key
			for j := 8 + g.pick(20); j > 0 && len(t.live) > 0; j-- {
				i := g.pick(len(t.live))
				old := t.where(t.live[i])
				t.drop(i)
				seq := t.next
				t.next++
				key := t.key(seq)
				t.live = append(t.live, seq)
				t.keyOf[seq] = key
				var sets []string
				for k, c := range t.keyCols {
					sets = append(sets, rpQ(c)+" = "+key[k])
				}
				if g.chance(0.5) {
					c := t.cols[g.pick(len(t.cols))]
					sets = append(sets, rpQ(c.name)+" = "+c.gen(g))
				}
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.full(), strings.Join(sets, ", "), old))
			}
		case op < 8: // a run of deletes
			for j := 8 + g.pick(60); j > 0 && len(t.live) > 10; j-- {
				i := g.pick(len(t.live))
				w := t.where(t.live[i])
				t.drop(i)
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE %s", t.full(), w))
			}
		case op == 8: // deleted, then inserted again with the same key
			var seqs []int
			for j := 8 + g.pick(20); j > 0 && len(t.live) > 10; j-- {
				i := g.pick(len(t.live))
				w := t.where(t.live[i])
				seqs = append(seqs, t.drop(i))
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE %s", t.full(), w))
				if g.chance(0.3) {
					stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.full(), t.colList(), t.insert(g, seqs[len(seqs)-1])))
					seqs = seqs[:len(seqs)-1]
				}
			}
			for _, s := range seqs {
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.full(), t.colList(), t.insert(g, s)))
			}
		default: // interleaved: one update here, one on another table
			o := ts[g.pick(len(ts))]
			for j := 8 + g.pick(20); j > 0 && len(o.live) > 0; j-- {
				for _, x := range []*dfTable{t, o} {
					c := x.cols[g.pick(len(x.cols))]
					stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", x.full(), rpQ(c.name), c.gen(g), x.where(x.live[g.pick(len(x.live))])))
				}
			}
		}
	}
	return append(stmts, "COMMIT")
}
