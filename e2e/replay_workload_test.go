package e2e

// The random workload and the table comparison of the replay tests
// (replay_test.go).

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rpQ quotes an identifier (the test's own, independent of sink/sqltext).
func rpQ(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Hostile names: backticks, quotes, a backslash, spaces, non-ASCII (MariaDB
// identifiers are limited to the BMP, so no emoji there; values get them).
var (
	rpHostileDB    = "h`ö 'st\"☃"
	rpHostileTable = "t`a 'b\"l\\e ☃"
	rpHostileCols  = []string{"i`d", "c'o\"l\\ ☃", "b`in", "t x"}
)

// rpGen makes random SQL values, as literals the source server parses
// exactly: text as _utf8mb4 X'…', binary as X'…'.
type rpGen struct {
	r   *rand.Rand
	seq int
}

func (g *rpGen) pick(n int) int        { return g.r.Intn(n) }
func (g *rpGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *rpGen) null(s string) string {
	if g.chance(0.08) {
		return "NULL"
	}
	return s
}

func (g *rpGen) intOf(bits int, unsigned bool) string {
	if unsigned {
		max := uint64(1)<<bits - 1
		if bits == 64 {
			max = math.MaxUint64
		}
		switch g.pick(5) {
		case 0:
			return "0"
		case 1:
			return strconv.FormatUint(max, 10)
		}
		return strconv.FormatUint(g.r.Uint64()&max, 10)
	}
	min, max := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	switch g.pick(6) {
	case 0:
		return strconv.FormatInt(min, 10)
	case 1:
		return strconv.FormatInt(max, 10)
	case 2:
		return "-1"
	}
	return strconv.FormatInt(int64(g.r.Uint64())>>(64-bits), 10)
}

func (g *rpGen) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.pick(10))
	}
	return string(b)
}

func (g *rpGen) decimal(p, s int, unsigned bool) string {
	sign := ""
	if !unsigned && g.chance(0.5) {
		sign = "-"
	}
	v := sign + g.digits(1+g.pick(p-s))
	if s > 0 {
		v += "." + g.digits(s)
	}
	return v
}

func (g *rpGen) float32() string {
	switch g.pick(6) {
	case 0:
		return "3.40282e38"
	case 1:
		return "-1.1754944e-38"
	case 2:
		return "0"
	}
	f := float32(g.r.NormFloat64() * math.Pow(10, float64(g.pick(20)-10)))
	return strconv.FormatFloat(float64(f), 'g', -1, 32)
}

func (g *rpGen) float64() string {
	switch g.pick(6) {
	case 0:
		return "1.7976931348623157e308"
	case 1:
		return "-2.2250738585072014e-308"
	case 2:
		return "0.1"
	}
	return strconv.FormatFloat(g.r.NormFloat64()*math.Pow(10, float64(g.pick(40)-20)), 'g', -1, 64)
}

func (g *rpGen) date() string {
	switch g.pick(8) {
	case 0:
		return "0000-00-00"
	case 1:
		return "2020-00-00"
	}
	return fmt.Sprintf("%04d-%02d-%02d", 1000+g.pick(9000), 1+g.pick(12), 1+g.pick(28))
}

func (g *rpGen) clock() string {
	return fmt.Sprintf("%02d:%02d:%02d", g.pick(24), g.pick(60), g.pick(60))
}

func (g *rpGen) frac(n int) string { return "." + g.digits(n) }

func (g *rpGen) quote(s string) string { return "'" + s + "'" }

// text is a utf8mb4 literal with quotes, backslashes, NUL, newlines,
// emoji; latin1 keeps to characters latin1 has.
func (g *rpGen) text(maxLen int, latin1 bool) string {
	parts := []string{"a", "Z", "'", "\"", "\\", "\x00", "\n", " ", "é", "ÿ", "%", "_", "`", ";", "--", "/*"}
	if !latin1 {
		parts = append(parts, "😀", "☃", "中文", "\u200b", "\x7f")
	}
	var b strings.Builder
	n := g.pick(maxLen + 1)
	for len([]rune(b.String())) < n {
		p := parts[g.pick(len(parts))]
		if len([]rune(b.String()))+len([]rune(p)) > maxLen {
			break
		}
		b.WriteString(p)
	}
	return "_utf8mb4 X'" + hex.EncodeToString([]byte(b.String())) + "'"
}

// bytes is a binary literal: NUL, invalid UTF-8, trailing zeros.
func (g *rpGen) bytes(maxLen int) string {
	b := make([]byte, g.pick(maxLen+1))
	g.r.Read(b)
	if len(b) > 0 && g.chance(0.3) {
		b[len(b)-1] = 0
	}
	return "X'" + hex.EncodeToString(b) + "'"
}

func (g *rpGen) json() string {
	vals := []string{`1`, `-2.5e10`, `"s☃\"q\\"`, `null`, `true`, `[]`, `{"a":{"b":[1,2,3]}}`, `"😀"`}
	var parts []string
	for i := g.pick(4); i > 0; i-- {
		parts = append(parts, fmt.Sprintf(`"k%d": %s`, g.pick(9), vals[g.pick(len(vals))]))
	}
	return "_utf8mb4 X'" + hex.EncodeToString([]byte("{"+strings.Join(parts, ", ")+"}")) + "'"
}

func (g *rpGen) geometry(point bool) string {
	c := func() string { return strconv.FormatFloat(g.r.NormFloat64()*100, 'g', -1, 64) }
	srid := []string{"0", "4326"}[g.pick(2)]
	if point || g.chance(0.4) {
		return fmt.Sprintf("ST_GeomFromText('POINT(%s %s)', %s)", c(), c(), srid)
	}
	if g.chance(0.5) {
		return fmt.Sprintf("ST_GeomFromText('LINESTRING(%s %s, %s %s, %s %s)', %s)", c(), c(), c(), c(), c(), c(), srid)
	}
	return fmt.Sprintf("ST_GeomFromText('POLYGON((0 0, %s 0, 0 %s, 0 0))', %s)", c(), c(), srid)
}

// rpTypesCols are the columns of rp.types after id, in typesRow's order.
const rpTypesCols = "ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d1, d2, d3, f, fd, dt, dt0, ts, da, tm, yr, vl, vu, ch, tx, vb, bn, bl, en, st, bt, js, g, pt"

// typesRow returns values for rpTypesCols.
func (g *rpGen) typesRow() []string {
	return []string{
		g.null(g.intOf(8, false)), g.null(g.intOf(8, true)), g.null(g.intOf(16, false)), g.null(g.intOf(16, true)),
		g.null(g.intOf(24, false)), g.null(g.intOf(24, true)), g.null(g.intOf(32, false)), g.null(g.intOf(32, true)),
		g.null(g.intOf(64, false)), g.null(g.intOf(64, true)),
		g.null(g.decimal(65, 30, false)), g.null(g.decimal(10, 0, false)), g.null(g.decimal(6, 2, true)),
		g.null(g.float32()), g.null(g.float64()),
		g.null(g.quote(g.date() + " " + g.clock() + g.frac(6))), g.null(g.quote(g.date() + " " + g.clock())),
		g.null(g.quote(fmt.Sprintf("%04d-%02d-%02d %s%s", 1971+g.pick(60), 1+g.pick(12), 1+g.pick(28), g.clock(), g.frac(3)))),
		g.null(g.quote(g.date())), g.null(g.quote(fmt.Sprintf("%s%d:%02d:%02d%s", []string{"", "-"}[g.pick(2)], g.pick(839), g.pick(60), g.pick(60), g.frac(4)))),
		g.null([]string{"0", "1901", "2155", strconv.Itoa(1901 + g.pick(255))}[g.pick(4)]),
		g.null(g.text(60, true)), g.null(g.text(60, false)), g.null(g.text(12, false)), g.null(g.text(300, false)),
		g.null(g.bytes(64)), g.null(g.bytes(8)), g.null(g.bytes(300)),
		g.null([]string{"'a'", "'b'", "_utf8mb4 X'c3bc2063'"}[g.pick(3)]),
		g.null([]string{"''", "'x'", "'x,y'", "_utf8mb4 X'7a20e29883'", "_utf8mb4 X'782c7a20e29883'"}[g.pick(5)]),
		g.null(strconv.Itoa(g.pick(8192))),
		g.null(g.json()), g.null(g.geometry(false)), g.null(g.geometry(true)),
	}
}

// rpSchema creates the workload's tables.
var rpSchema = []string{
	"CREATE DATABASE rp",
	`CREATE TABLE rp.types (id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  d1 DECIMAL(65,30), d2 DECIMAL(10,0), d3 DECIMAL(6,2) UNSIGNED, f FLOAT, fd DOUBLE,
  dt DATETIME(6), dt0 DATETIME, ts TIMESTAMP(3) NULL DEFAULT NULL, da DATE, tm TIME(4), yr YEAR,
  vl VARCHAR(60) CHARACTER SET latin1, vu VARCHAR(60) CHARACTER SET utf8mb4, ch CHAR(12) CHARACTER SET utf8mb4, tx TEXT CHARACTER SET utf8mb4,
  vb VARBINARY(64), bn BINARY(8), bl BLOB,
  en ENUM('a','b','ü c'), st SET('x','y','z ☃'), bt BIT(13), js JSON, g GEOMETRY, pt POINT)`,
	"CREATE TABLE rp.nopk (a VARCHAR(20) CHARACTER SET latin1, b INT, c FLOAT, d BLOB)",
	"CREATE TABLE rp.comp (a INT NOT NULL, b VARCHAR(20) NOT NULL, v INT, PRIMARY KEY (b, a))",
	"CREATE TABLE rp.prefix (k VARCHAR(200) NOT NULL, v TEXT, PRIMARY KEY (k(8)))",
	"CREATE TABLE rp.gone (id INT PRIMARY KEY, v INT)",
	"CREATE DATABASE " + rpQ(rpHostileDB),
	"CREATE TABLE " + rpQ(rpHostileDB) + "." + rpQ(rpHostileTable) + " (" + rpQ(rpHostileCols[0]) + " INT PRIMARY KEY, " +
		rpQ(rpHostileCols[1]) + " VARCHAR(100) CHARACTER SET utf8mb4, " + rpQ(rpHostileCols[2]) + " VARBINARY(100), " + rpQ(rpHostileCols[3]) + " TEXT)",
}

// rpWorkload runs random changes on src: ops statements, some grouped
// in transactions, over every table; ddl adds ALTERs and drops.
func rpWorkload(t testing.TB, src *testserver.Server, g *rpGen, ops int, ddl bool) {
	t.Helper()
	ht := rpQ(rpHostileDB) + "." + rpQ(rpHostileTable)
	for n := 0; n < ops; {
		var stmts []string
		k := 1 + g.pick(4)
		for j := 0; j < k; j++ {
			g.seq++
			id := g.pick(400)
			switch g.pick(14) {
			case 0, 1, 2:
				stmts = append(stmts, fmt.Sprintf("REPLACE INTO rp.types (id, %s) VALUES (%d, %s)", rpTypesCols, id, strings.Join(g.typesRow(), ", ")))
			case 3:
				row := g.typesRow()
				stmts = append(stmts, fmt.Sprintf("UPDATE rp.types SET vu = %s, f = %s, d1 = %s, bl = %s, g = %s WHERE id = %d", row[22], row[13], row[10], row[27], row[32], id))
			case 4:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM rp.types WHERE id BETWEEN %d AND %d", id, id+2))
			case 5:
				stmts = append(stmts, fmt.Sprintf("UPDATE IGNORE rp.types SET id = id + 1000 WHERE id = %d", id)) // moves the key
			case 6:
				a := []string{"'a'", "'A'", "'a '", "NULL", "_utf8mb4 X'c3a9'"}[g.pick(5)]
				stmts = append(stmts, fmt.Sprintf("INSERT INTO rp.nopk (a, b, d) VALUES (%s, %d, %s)", a, g.pick(3), g.null(g.bytes(20))))
			case 7:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM rp.nopk WHERE b = %d LIMIT 1", g.pick(3)),
					fmt.Sprintf("UPDATE rp.nopk SET b = b + 1 WHERE b = %d LIMIT 2", g.pick(3)))
			case 8:
				stmts = append(stmts, fmt.Sprintf("REPLACE INTO rp.comp VALUES (%d, %s, %d)", g.pick(20), []string{"'x'", "'y'", "'Zz'"}[g.pick(3)], g.pick(1000)))
			case 9:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM rp.comp WHERE a = %d", g.pick(20)), fmt.Sprintf("UPDATE IGNORE rp.comp SET a = a + 1 WHERE a = %d AND b = 'x'", g.pick(20)))
			case 10:
				stmts = append(stmts, fmt.Sprintf("REPLACE INTO rp.prefix VALUES ('%08d-%s', %s)", g.pick(50), g.digits(g.pick(30)), g.null(g.text(50, false))))
			case 11:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM rp.prefix WHERE k LIKE '%08d%%'", g.pick(50)))
			case 12:
				stmts = append(stmts, fmt.Sprintf("REPLACE INTO %s VALUES (%d, %s, %s, %s)", ht, g.pick(50), g.null(g.text(100, false)), g.null(g.bytes(100)), g.null(g.text(40, false))))
			case 13:
				if ddl {
					stmts = append(stmts, fmt.Sprintf("REPLACE INTO rp.gone VALUES (%d, %d)", g.pick(30), g.pick(99)))
				} else {
					stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s = %d", ht, rpQ(rpHostileCols[1]), g.text(100, false), rpQ(rpHostileCols[0]), g.pick(50)))
				}
			}
		}
		n += len(stmts)
		if len(stmts) > 1 && g.chance(0.7) {
			stmts = append(append([]string{"BEGIN"}, stmts...), "COMMIT")
		}
		src.Exec(t, stmts...)
	}
}

// rpSnapshot describes every table of the server's user databases: its
// columns, CHECKSUM TABLE and rows (ordered on all columns, byte exact).
func rpSnapshot(t testing.TB, srv *testserver.Server) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, r := range srv.QueryStrings(t, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys','binlogcdc')") {
		db, tb := *r[0], *r[1]
		full := rpQ(db) + "." + rpQ(tb)
		colsQ := fmt.Sprintf("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
			"_utf8mb4 X'"+hex.EncodeToString([]byte(db))+"'", "_utf8mb4 X'"+hex.EncodeToString([]byte(tb))+"'")
		cols := rpRows(t, srv, colsQ)
		// Order on the bytes: under a collation, 'A' and 'a ' tie.
		var order []string
		for _, c := range srv.QueryStrings(t, strings.Replace(colsQ, "COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE", "COLUMN_NAME", 1)) {
			order = append(order, "CAST("+rpQ(*c[0])+" AS BINARY)")
		}
		snap[full] = "columns:\n" + cols + "\nchecksum: " + rpRows(t, srv, "CHECKSUM TABLE "+full) +
			"\nrows:\n" + rpRows(t, srv, "SELECT * FROM "+full+" ORDER BY "+strings.Join(order, ", "))
	}
	return snap
}

// rpSame compares two snapshots table by table.
func rpSame(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: table %s is missing", what, name)
		case g != w:
			gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
			i := 0
			for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
				i++
			}
			at := func(l []string) string {
				if i < len(l) {
					return clip(l[i])
				}
				return "(end)"
			}
			t.Errorf("%s: table %s differs at line %d:\n got  %s\n want %s", what, name, i, at(gl), at(wl))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected table %s", what, name)
		}
	}
}

// rpCompare checks that dst holds exactly the tables and rows of src.
func rpCompare(t testing.TB, src, dst *testserver.Server, what string) {
	t.Helper()
	rpSame(t, what, rpSnapshot(t, dst), rpSnapshot(t, src))
}

func rpRow(r []*string) string {
	var parts []string
	for _, v := range r {
		if v == nil {
			parts = append(parts, "NULL")
		} else {
			parts = append(parts, strconv.Quote(*v))
		}
	}
	return strings.Join(parts, ",")
}

func rpRows(t testing.TB, srv *testserver.Server, q string) string {
	t.Helper()
	var out []string
	for _, r := range srv.QueryStrings(t, q) {
		out = append(out, rpRow(r))
	}
	return strings.Join(out, "\n")
}
