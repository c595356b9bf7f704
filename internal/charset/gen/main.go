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
