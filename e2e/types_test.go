package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestTypesNumeric: integers of every width at their bounds, BIT, YEAR,
// DECIMAL and FLOAT/DOUBLE, compared with the server's text for the same
// rows.
func TestTypesNumeric(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE n", "USE n", "SET SESSION sql_mode = ''",
		`CREATE TABLE ints (id INT PRIMARY KEY,
			ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
			mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
			bi BIGINT, bu BIGINT UNSIGNED)`,
		`INSERT INTO ints VALUES
			(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0),
			(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615),
			(3, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1),
			(4, 0, 128, 0, 32768, 0, 8388608, 0, 2147483648, 0, 9223372036854775808),
			(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
		`CREATE TABLE bits (id INT PRIMARY KEY, b1 BIT(1), b7 BIT(7), b8 BIT(8), b17 BIT(17), b63 BIT(63), b64 BIT(64))`,
		`INSERT INTO bits VALUES
			(1, b'1', b'1111111', b'11111111', b'11111111111111111', 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF),
			(2, b'0', 0, 0, 0, 0, 0),
			(3, NULL, b'1010101', 0x80, 0x10001, 0x4000000000000001, 0x8000000000000001)`,
		`CREATE TABLE years (id INT PRIMARY KEY, y YEAR)`,
		`INSERT INTO years VALUES (1, 0), (2, 1901), (3, 2155), (4, 2024), (5, NULL), (6, '0000'), (7, 70)`,
		`CREATE TABLE decs (id INT PRIMARY KEY, d65 DECIMAL(65,30), d10 DECIMAL(10,2), d5 DECIMAL(5,0),
			du DECIMAL(20,10) UNSIGNED, d1 DECIMAL(1,1), d30 DECIMAL(30,30))`,
		`INSERT INTO decs VALUES
			(1, 99999999999999999999999999999999999.999999999999999999999999999999, -0.50, 99999, 9999999999.9999999999, 0.9, 0.999999999999999999999999999999),
			(2, -99999999999999999999999999999999999.999999999999999999999999999999, 0.00, -99999, 0, -0.9, -0.000000000000000000000000000001),
			(3, 12345678901234567890123456789012345.123456789012345678901234567890, 99999999.99, 0, 0.0000000001, 0, 0),
			(4, -0.000000000000000000000000000001, -12345678.09, -1, 1.5, 0.1, 0.123456789012345678901234567890),
			(5, 0, -0.01, 7, 123, -0.1, NULL),
			(6, NULL, NULL, NULL, NULL, NULL, -0.5)`,
		`CREATE TABLE floats (id INT PRIMARY KEY, f FLOAT, d DOUBLE)`,
		`INSERT INTO floats VALUES
			(1, 3.14159, 3.141592653589793),
			(2, -1.5, -1.5),
			(3, 0, 0),
			(4, 16777217, 9007199254740993),
			(5, 1.17549435e-38, 2.2250738585072014e-308),
			(6, 3.40282e38, 1.7976931348623157e308),
			(7, 0.1, 0.1),
			(8, 1e-7, 1e-7),
			(9, 123456789, 1e21),
			(10, -2.5e-10, 5e-324),
			(11, NULL, NULL),
			(12, 1e20, 123456.789e3)`,
	)
	recs := DecodeServer(t, srv)

	intCols := map[string]Oracle{}
	for _, c := range []string{"ti", "tu", "si", "su", "mi", "mu", "i", "iu", "bi", "bu"} {
		intCols[c] = Num("CAST(" + c + " AS CHAR)")
	}
	CheckInserts(t, srv, recs, "n", "ints", "id", nil, intCols)
	CheckInserts(t, srv, recs, "n", "bits", "id", nil, map[string]Oracle{
		"b1": Num("CAST(b1 AS UNSIGNED)"), "b7": Num("CAST(b7 AS UNSIGNED)"), "b8": Num("CAST(b8 AS UNSIGNED)"),
		"b17": Num("CAST(b17 AS UNSIGNED)"), "b63": Num("CAST(b63 AS UNSIGNED)"), "b64": Num("CAST(b64 AS UNSIGNED)"),
	})
	CheckInserts(t, srv, recs, "n", "years", "id", nil, map[string]Oracle{"y": Num("y + 0")})
	CheckInserts(t, srv, recs, "n", "decs", "id", nil, map[string]Oracle{
		"d65": Char("d65"), "d10": Char("d10"), "d5": Char("d5"), "du": Char("du"), "d1": Char("d1"), "d30": Char("d30"),
	})
	CheckInserts(t, srv, recs, "n", "floats", "id", nil, map[string]Oracle{"f": Float("f"), "d": Double("d")})

	// The README's own examples, literally.
	wantLiteral(t, recs, "n", "ints", "2", "bu", json.Number("18446744073709551615"))
	wantLiteral(t, recs, "n", "ints", "1", "bi", json.Number("-9223372036854775808"))
	wantLiteral(t, recs, "n", "bits", "1", "b64", json.Number("18446744073709551615"))
	wantLiteral(t, recs, "n", "bits", "1", "b1", json.Number("1"))
	wantLiteral(t, recs, "n", "years", "1", "y", json.Number("0"))
	wantLiteral(t, recs, "n", "decs", "1", "d10", "-0.50")
	wantLiteral(t, recs, "n", "decs", "2", "d10", "0.00")
	wantLiteral(t, recs, "n", "decs", "1", "d65", "99999999999999999999999999999999999.999999999999999999999999999999")
	wantLiteral(t, recs, "n", "floats", "1", "f", json.Number("3.14159"))
	wantLiteral(t, recs, "n", "floats", "7", "d", json.Number("0.1"))
}

// wantLiteral checks one decoded insert value against a literal.
func wantLiteral(t *testing.T, recs []Rec, db, table, id, col string, want any) {
	t.Helper()
	for _, r := range Rows(recs, db, table) {
		if r.Op == "insert" && fmt.Sprint(r.After.M["id"]) == id {
			if got := r.After.M[col]; !equalJSON(got, want) {
				t.Errorf("%s.%s id=%s %s = %s, want %s", db, table, id, col, show(got), show(want))
			}
			return
		}
	}
	t.Errorf("%s.%s id=%s: no insert decoded", db, table, id)
}

// TestTypesTemporal: DATE, DATETIME(0..6), TIMESTAMP, TIME, zero dates,
// negative times. TIMESTAMP rows are inserted in a +09:00 session so that
// their UTC value differs from the literal, and the CLI decodes them again
// in a process whose TZ is Asia/Tokyo: the output must be UTC either way.
func TestTypesTemporal(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE tm", "USE tm", "SET SESSION sql_mode = ''",
		`CREATE TABLE dates (id INT PRIMARY KEY, d DATE)`,
		`INSERT INTO dates VALUES (1, '0000-00-00'), (2, '1000-01-01'), (3, '9999-12-31'), (4, '2024-02-29'),
			(5, '2024-05-00'), (6, '2024-00-00'), (7, NULL), (8, '0001-01-01')`,
		`CREATE TABLE datetimes (id INT PRIMARY KEY, dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3),
			dt4 DATETIME(4), dt5 DATETIME(5), dt6 DATETIME(6))`,
		`INSERT INTO datetimes VALUES
			(1, '2024-06-15 12:34:56', '2024-06-15 12:34:56.1', '2024-06-15 12:34:56.12', '2024-06-15 12:34:56.123',
			    '2024-06-15 12:34:56.1234', '2024-06-15 12:34:56.12345', '2024-06-15 12:34:56.123456'),
			(2, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
			    '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
			(3, '9999-12-31 23:59:59', '9999-12-31 23:59:59.9', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999',
			    '9999-12-31 23:59:59.9999', '9999-12-31 23:59:59.99999', '9999-12-31 23:59:59.999999'),
			(4, '1000-01-01 00:00:00', '1000-01-01 00:00:00.0', '2000-01-01 00:00:00.01', '2000-01-01 00:00:00.001',
			    '2000-01-01 00:00:00.0001', '2000-01-01 00:00:00.00001', '2000-01-01 00:00:00.000001'),
			(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			(6, '2024-02-29 01:02:03', '2024-02-29 01:02:03.5', '2024-02-29 01:02:03.05', '2024-02-29 01:02:03.050',
			    '2024-02-29 01:02:03.0005', '2024-02-29 01:02:03.00005', '2024-02-29 01:02:03.000005')`,
		`CREATE TABLE times (id INT PRIMARY KEY, t0 TIME, t3 TIME(3), t6 TIME(6))`,
		`INSERT INTO times VALUES
			(1, '-838:59:59', '-838:59:59.000', '-838:59:59.000000'),
			(2, '838:59:59', '838:59:59.999', '838:59:59.000000'),
			(3, '-00:00:01', '-00:00:01.500', '-00:00:01.500000'),
			(4, '00:00:00', '00:00:00.000', '-00:00:00.000001'),
			(5, '-01:00:00', '-00:00:00.001', '12:34:56.789012'),
			(6, NULL, NULL, NULL),
			(7, '100:00:00', '-100:00:00.250', '-00:59:59.999999')`,
		// TIMESTAMP literals are read in the session's time zone.
		"SET SESSION time_zone = '+09:00'",
		`CREATE TABLE stamps (id INT PRIMARY KEY, ts0 TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, ts6 TIMESTAMP(6) NULL)`,
		`INSERT INTO stamps VALUES
			(1, '2024-06-15 09:00:00', '2024-06-15 09:00:00.250', '2024-06-15 09:00:00.123456'),
			(2, '1970-01-01 09:00:01', '1970-01-01 09:00:01.001', '1970-01-01 09:00:01.000001'),
			(3, '2038-01-19 12:14:07', '2038-01-19 12:14:07.999', '2038-01-19 12:14:07.999999'),
			(4, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
			(5, NULL, NULL, NULL),
			(6, '2024-01-01 08:59:59', '2024-01-01 08:59:59.5', '2024-01-01 08:59:59.5')`,
		"SET SESSION time_zone = '+00:00'",
	)
	recs := DecodeServer(t, srv)
	CheckInserts(t, srv, recs, "tm", "dates", "id", nil, map[string]Oracle{"d": Char("d")})
	dt := map[string]Oracle{}
	for i := 0; i <= 6; i++ {
		c := fmt.Sprintf("dt%d", i)
		dt[c] = Char(c)
	}
	CheckInserts(t, srv, recs, "tm", "datetimes", "id", nil, dt)
	CheckInserts(t, srv, recs, "tm", "times", "id", nil, map[string]Oracle{"t0": Char("t0"), "t3": Char("t3"), "t6": Char("t6")})
	// The session time zone is +00:00 again: CAST gives UTC.
	stamps := map[string]Oracle{"ts0": Char("ts0"), "ts3": Char("ts3"), "ts6": Char("ts6")}
	CheckInserts(t, srv, recs, "tm", "stamps", "id", nil, stamps)

	wantLiteral(t, recs, "tm", "dates", "1", "d", "0000-00-00")
	wantLiteral(t, recs, "tm", "datetimes", "2", "dt0", "0000-00-00 00:00:00")
	wantLiteral(t, recs, "tm", "datetimes", "1", "dt6", "2024-06-15 12:34:56.123456")
	wantLiteral(t, recs, "tm", "datetimes", "4", "dt1", "1000-01-01 00:00:00.0")
	wantLiteral(t, recs, "tm", "times", "1", "t6", "-838:59:59.000000")
	wantLiteral(t, recs, "tm", "times", "3", "t6", "-00:00:01.500000")
	wantLiteral(t, recs, "tm", "stamps", "1", "ts6", "2024-06-15 00:00:00.123456")
	wantLiteral(t, recs, "tm", "stamps", "2", "ts0", "1970-01-01 00:00:01")

	// The CLI in a process whose local time zone is Asia/Tokyo.
	out, stderr, code := runCLI(t, []string{"TZ=Asia/Tokyo"}, "read", srv.BinlogIndex())
	if code != 0 {
		t.Fatalf("binlogcdc read with TZ=Asia/Tokyo: exit %d: %s", code, stderr)
	}
	tokyo, err := ParseLines(out)
	if err != nil {
		t.Fatal(err)
	}
	CheckInserts(t, srv, tokyo, "tm", "stamps", "id", nil, stamps)
	CheckInserts(t, srv, tokyo, "tm", "datetimes", "id", nil, dt)
	for _, r := range tokyo {
		if !strings.HasSuffix(r.TS, "Z") {
			t.Errorf("ts %q is not UTC (TZ=Asia/Tokyo)", r.TS)
			break
		}
	}
}

// TestTypesText: CHAR/VARCHAR/TEXT in utf8mb4 and other charsets and
// collations, BINARY/VARBINARY/BLOB, ENUM, SET and MariaDB's JSON.
func TestTypesText(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	setMembers := make([]string, 64)
	for i := range setMembers {
		setMembers[i] = fmt.Sprintf("'m%d'", i)
	}
	srv.Exec(t, "CREATE DATABASE tx", "USE tx", "SET SESSION sql_mode = ''",
		`CREATE TABLE strs (id INT PRIMARY KEY, c CHAR(10), c100 CHAR(100), vc VARCHAR(300), vs VARCHAR(20),
			tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT) CHARACTER SET utf8mb4`,
		`INSERT INTO strs VALUES
			(1, 'héllo 😀', 'ä😀', 'emoji 😀🎉 and 中文', 'x', 'tiny 😀', 'text 😀', 'medium 😀', 'long 😀'),
			(2, '', '', '', '', '', '', '', ''),
			(3, 'a', REPEAT('😀', 100), REPEAT('é', 300), 'trailing  ', 'tab\there', 'nl\nquote"back\\slash', CONCAT('ctl', CHAR(1), CHAR(31), CHAR(127)), CONCAT('ls', _utf8mb4 X'E280A8', 'ps', _utf8mb4 X'E280A9')),
			(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			(5, 'pad  ', ' lead', REPEAT('x', 300), '', REPEAT('y', 255), REPEAT('z', 70000 DIV 4), REPEAT('m', 70000), REPEAT('L', 100000))`,
		// Other charsets and collations, with text the charset can hold
		// (the session is utf8mb4: the server converts).
		`CREATE TABLE cs (id INT PRIMARY KEY,
			l1 VARCHAR(40) CHARACTER SET latin1, l1b CHAR(20) CHARACTER SET latin1 COLLATE latin1_bin,
			l2 VARCHAR(40) CHARACTER SET latin2, w1251 VARCHAR(40) CHARACTER SET cp1251, k8 TEXT CHARACTER SET koi8r,
			gr VARCHAR(40) CHARACTER SET greek, he VARCHAR(40) CHARACTER SET hebrew, th VARCHAR(40) CHARACTER SET tis620,
			sj VARCHAR(40) CHARACTER SET sjis, c932 VARCHAR(40) CHARACTER SET cp932, uj VARCHAR(40) CHARACTER SET ujis,
			ej VARCHAR(40) CHARACTER SET eucjpms, gb VARCHAR(40) CHARACTER SET gbk, g2 VARCHAR(40) CHARACTER SET gb2312,
			b5 VARCHAR(40) CHARACTER SET big5, kr VARCHAR(40) CHARACTER SET euckr,
			u2 VARCHAR(40) CHARACTER SET ucs2, u16 VARCHAR(40) CHARACTER SET utf16, u16le TEXT CHARACTER SET utf16le,
			u32 CHAR(10) CHARACTER SET utf32, u3 VARCHAR(40) CHARACTER SET utf8mb3,
			uca VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci,
			u2uca VARCHAR(40) CHARACTER SET ucs2 COLLATE ucs2_unicode_ci,
			asci VARCHAR(40) CHARACTER SET ascii)`,
		`INSERT INTO cs VALUES
			(1, 'café €', 'café € Ÿ', 'Łódź żółć', 'Привет, мир', 'Привет', 'Καλημέρα', 'שלום', 'สวัสดี',
			 'こんにちは ｶﾀｶﾅ', 'ＮＥＣ①髙', 'こんにちは', '髙①', '中文字符', '中文', '中文字', '한국어',
			 'café €', 'emoji 😀 ok', 'utf16le 😀', '😀x', 'ünï ☃', 'Straße 😀', 'ucs ☃', 'plain')`,
		`INSERT INTO cs (id) VALUES (2)`,
		`INSERT INTO cs VALUES (3, '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '')`,
		`CREATE TABLE bins (id INT PRIMARY KEY, b8 BINARY(8), vb VARBINARY(300), tb TINYBLOB, b BLOB, mb MEDIUMBLOB, lb LONGBLOB, b1 BINARY(1))`,
		`INSERT INTO bins VALUES
			(1, X'0102000000000000', X'00FF80C3', X'00', X'C328', X'FFFE', X'80', X'00'),
			(2, 'ab', '', '', '', '', '', ''),
			(3, X'FFFFFFFFFFFFFFFF', REPEAT(X'00', 300), REPEAT(X'AB', 255), REPEAT(X'00FF', 30000), REPEAT(X'C0AF', 50000), REPEAT(X'F4', 100000), X'FF'),
			(4, '', 'text', 'x', 'y', 'z', 'w', 'A'),
			(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			(6, X'0000000000000000', X'0000', X'20', X'2000', X'0020', X'00', ' ')`,
		`CREATE TABLE enums (id INT PRIMARY KEY, e ENUM('a','b','ç','😀'), el ENUM('x','ü','€') CHARACTER SET latin1,
			e2 ENUM(`+bigEnum()+`), s SET(`+strings.Join(setMembers, ",")+`), sl SET('ä','ö','ü') CHARACTER SET latin1)`,
		`INSERT INTO enums VALUES
			(1, 'a', 'x', 'v0', 'm0', 'ä'),
			(2, 'ç', 'ü', 'v299', 'm0,m63', 'ä,ö,ü'),
			(3, '😀', '€', 'v150', '`+strings.ReplaceAll(strings.Join(setMembers, ","), "'", "")+`', ''),
			(4, '', '', '', '', ''),
			(5, 'nope', 'nope', 'nope', 'm1,m31,m32,m62', 'ü'),
			(6, NULL, NULL, NULL, NULL, NULL)`,
		`CREATE TABLE jsons (id INT PRIMARY KEY, j JSON)`,
		`INSERT INTO jsons VALUES (1, '{"a": [1, 2.5, "x"], "b": null}'), (2, '"str"'), (3, 'null'), (4, NULL),
			(5, '[]'), (6, '{"emoji": "😀", "esc": "a\\"b"}'), (7, '18446744073709551615')`,
	)
	recs := DecodeServer(t, srv)

	strOracles := map[string]Oracle{}
	for _, c := range []string{"c", "c100", "vc", "vs", "tt", "t", "mt", "lt"} {
		strOracles[c] = Str(c)
	}
	CheckInserts(t, srv, recs, "tx", "strs", "id", nil, strOracles)
	csOracles := map[string]Oracle{}
	for _, c := range tableColumns(t, srv, "tx", "cs")[1:] {
		csOracles[c] = Str(c)
	}
	CheckInserts(t, srv, recs, "tx", "cs", "id", nil, csOracles)
	binOracles := map[string]Oracle{}
	for _, c := range []string{"b8", "vb", "tb", "b", "mb", "lb", "b1"} {
		binOracles[c] = Bytes(c)
	}
	CheckInserts(t, srv, recs, "tx", "bins", "id", nil, binOracles)
	CheckInserts(t, srv, recs, "tx", "enums", "id", nil, map[string]Oracle{
		"e": Enum("e"), "el": Enum("el"), "e2": Enum("e2"), "s": Set("s"), "sl": Set("sl"),
	})
	CheckInserts(t, srv, recs, "tx", "jsons", "id", nil, map[string]Oracle{"j": Str("j")})

	wantLiteral(t, recs, "tx", "strs", "1", "c", "héllo 😀")
	wantLiteral(t, recs, "tx", "cs", "1", "l1", "café €")
	wantLiteral(t, recs, "tx", "bins", "2", "b8", base64.StdEncoding.EncodeToString([]byte("ab\x00\x00\x00\x00\x00\x00")))
	wantLiteral(t, recs, "tx", "bins", "6", "b8", base64.StdEncoding.EncodeToString(make([]byte, 8)))
	wantLiteral(t, recs, "tx", "bins", "1", "vb", base64.StdEncoding.EncodeToString([]byte{0, 0xff, 0x80, 0xc3}))
	wantLiteral(t, recs, "tx", "enums", "4", "e", json.Number("0")) // the error value, not a member ''

	wantLiteral(t, recs, "tx", "enums", "4", "s", []any{})
	wantLiteral(t, recs, "tx", "jsons", "2", "j", `"str"`)
	all := []any{}
	for i := 0; i < 64; i++ {
		all = append(all, fmt.Sprintf("m%d", i))
	}
	wantLiteral(t, recs, "tx", "enums", "3", "s", all)
	// The error value 0 of an ENUM is really stored (not NULL).
	if v := one(t, srv, "SELECT e + 0 FROM tx.enums WHERE id = 4"); v == nil || *v != "0" {
		t.Errorf("enums id=4: server index %v, want 0 (the error value)", v)
	}
}

// bigEnum lists 300 labels: an ENUM with more than 255 members has a
// 2-byte index.
func bigEnum() string {
	l := make([]string, 300)
	for i := range l {
		l[i] = fmt.Sprintf("'v%d'", i)
	}
	return strings.Join(l, ",")
}

// TestTypesAllCharsets stores, for every character set the server has
// (information_schema.CHARACTER_SETS), every character it can convert to
// utf8mb4 and back unchanged: all byte values of single-byte charsets,
// all one-, two- and three-byte codes of the multi-byte ones, and the
// Unicode planes' code points for the Unicode ones, grouped 256 to a row.
// The decoded text must equal what the server itself sends to a utf8mb4
// client for the same rows.
func TestTypesAllCharsets(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE allcs", "USE allcs", "SET SESSION sql_mode = ''", "SET SESSION group_concat_max_len = 1048576")
	type gen struct {
		from, to int
		hex      string // SQL for the candidate bytes' HEX from seq
	}
	// Rows of the i-th generator have grp = i*1e8 + seq DIV 256.
	var tables []string
	for _, r := range srv.QueryStrings(t, "SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME <> 'binary' ORDER BY 1") {
		cs, maxlen := *r[0], *r[1]
		var gens []gen
		unicode := false
		switch {
		case strings.HasPrefix(cs, "utf") || cs == "ucs2":
			unicode = true
			// Not the surrogates D800-DFFF: MariaDB stores them in
			// utf8mb4/utf8mb3/ucs2 columns, but UTF-8 (and so JSON text)
			// cannot carry them.
			gens = []gen{{0, 0xd7ff, ""}, {0xe000, 0xffff, ""}, {0x1f300, 0x1faff, ""}, {0x20000, 0x200ff, ""}, {0x10ff00, 0x10ffff, ""}}
		case maxlen == "1":
			gens = []gen{{0, 0xff, "LPAD(HEX(seq), 2, '0')"}}
		default:
			gens = []gen{{0, 0xff, "LPAD(HEX(seq), 2, '0')"}, {0x8000, 0xffff, "HEX(seq)"}}
			if maxlen == "3" {
				gens = append(gens, gen{0x8fa1a1, 0x8ffefe, "HEX(seq)"})
			}
		}
		table := "t_" + cs
		tables = append(tables, table)
		srv.Exec(t, fmt.Sprintf("CREATE TABLE `%s` (grp INT PRIMARY KEY, v MEDIUMTEXT CHARACTER SET %s)", table, cs))
		for i, g := range gens {
			var c, keep string
			if unicode {
				c = fmt.Sprintf("CONVERT(CHAR(seq USING utf32) USING %s)", cs)
				keep = "HEX(CONVERT(c USING utf32)) = HEX(CHAR(seq USING utf32))"
			} else {
				c = fmt.Sprintf("CONVERT(UNHEX(%s) USING %s)", g.hex, cs)
				keep = fmt.Sprintf("HEX(CONVERT(CONVERT(c USING utf8mb4) USING %s)) = %s", cs, g.hex)
			}
			srv.Exec(t, fmt.Sprintf("INSERT INTO `%s` SELECT %d + seq DIV 256, GROUP_CONCAT(c ORDER BY seq SEPARATOR '') "+
				"FROM (SELECT seq, %s AS c FROM seq_%d_to_%d) x WHERE %s GROUP BY seq DIV 256",
				table, i*100000000, c, g.from, g.to, keep))
		}
	}
	if len(tables) < 30 {
		t.Fatalf("only %d character sets on the server", len(tables))
	}
	recs := DecodeServer(t, srv)
	total := 0
	for _, table := range tables {
		total += CheckInserts(t, srv, recs, "allcs", table, "grp", nil, map[string]Oracle{"v": Str("v")})
	}
	t.Logf("%d character sets, %d rows of up to 256 characters compared", len(tables), total)
}

// TestTypesGeometry: GEOMETRY family columns, with and without SRID,
// compared with the server's ST_SRID and ST_AsBinary.
func TestTypesGeometry(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE geo", "USE geo",
		`CREATE TABLE shapes (id INT PRIMARY KEY, g GEOMETRY, p POINT, pg POLYGON, ls LINESTRING, mp MULTIPOINT, gc GEOMETRYCOLLECTION)`,
		`INSERT INTO shapes VALUES
			(1, ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-1.5 1e10)'),
			    ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))'),
			    ST_GeomFromText('LINESTRING(0 0,1 1,2 0.5)'), ST_GeomFromText('MULTIPOINT(1 1,2 2)'),
			    ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))')),
			(2, ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 4326), ST_GeomFromText('POINT(13.4 52.5)', 4326),
			    ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))', 4326),
			    ST_GeomFromText('LINESTRING(0 0,1 1)', 3857), ST_GeomFromText('MULTIPOINT(0 0)', 4326),
			    ST_GeomFromText('GEOMETRYCOLLECTION(POINT(0 0))', 4326)),
			(3, NULL, NULL, NULL, NULL, NULL, NULL)`,
	)
	recs := DecodeServer(t, srv)
	o := map[string]Oracle{}
	for _, c := range []string{"g", "p", "pg", "ls", "mp", "gc"} {
		o[c] = Geom(c)
	}
	CheckInserts(t, srv, recs, "geo", "shapes", "id", nil, o)
	if v := one(t, srv, "SELECT ST_SRID(pg) FROM geo.shapes WHERE id = 2"); v == nil || *v != "4326" {
		t.Fatalf("server SRID %v, want 4326", v)
	}
}

// TestColumnsAndKeys: INVISIBLE columns, VIRTUAL and STORED generated
// columns, tables without a primary key, composite and prefix primary keys.
func TestColumnsAndKeys(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE k", "USE k",
		`CREATE TABLE inv (id INT PRIMARY KEY, a INT, h INT INVISIBLE DEFAULT 7, hs VARCHAR(10) INVISIBLE)`,
		`INSERT INTO inv (id, a, h, hs) VALUES (1, 10, 70, 'x')`,
		`INSERT INTO inv VALUES (2, 20)`,
		`CREATE TABLE gen (id INT PRIMARY KEY, a INT, v INT AS (a * 2) VIRTUAL, s INT AS (a * 3) STORED,
			vs VARCHAR(20) AS (CONCAT('v', a)) VIRTUAL, ss VARCHAR(20) AS (CONCAT('s', a)) PERSISTENT)`,
		`INSERT INTO gen (id, a) VALUES (1, 5), (2, NULL), (3, -7)`,
		`CREATE TABLE nopk (a INT, b VARCHAR(10), UNIQUE KEY (a))`,
		`INSERT INTO nopk VALUES (1, 'one'), (2, NULL), (3, 'three')`,
		`CREATE TABLE comp (a INT NOT NULL, b VARCHAR(10) NOT NULL, c INT NOT NULL, d INT, PRIMARY KEY (c, a, b))`,
		`INSERT INTO comp VALUES (1, 'x', 3, 4), (2, 'y', 1, NULL)`,
		`CREATE TABLE pfx (id INT NOT NULL, name VARCHAR(50) NOT NULL, note TEXT, PRIMARY KEY (name(4), id))`,
		`INSERT INTO pfx VALUES (1, 'alphabet', 'n1'), (2, 'alpine', NULL)`,
		`CREATE TABLE pfxtext (body TEXT NOT NULL, n INT, PRIMARY KEY (body(10)))`,
		`INSERT INTO pfxtext VALUES ('hello world', 1), ('other', 2)`,
	)
	recs := DecodeServer(t, srv)
	// Invisible columns are real columns: the binlog logs them and
	// information_schema lists them.
	CheckInserts(t, srv, recs, "k", "inv", "id", []string{"id", "a", "h", "hs"}, map[string]Oracle{"hs": Str("hs")})
	// MariaDB logs VIRTUAL columns too (computed) in a FULL row image,
	// not only STORED ones.
	CheckInserts(t, srv, recs, "k", "gen", "id", []string{"id", "a", "v", "s", "vs", "ss"},
		map[string]Oracle{"vs": Str("vs"), "ss": Str("ss")})
	CheckInserts(t, srv, recs, "k", "nopk", "a", nil, map[string]Oracle{"b": Str("b")})
	CheckInserts(t, srv, recs, "k", "comp", "a", nil, map[string]Oracle{"b": Str("b")})
	CheckInserts(t, srv, recs, "k", "pfx", "id", nil, map[string]Oracle{"name": Str("name"), "note": Str("note")})
	CheckInserts(t, srv, recs, "k", "pfxtext", "n", nil, map[string]Oracle{"body": Str("body")})
	// The key orders, literally (CheckInserts compares them with
	// information_schema too).
	for table, want := range map[string][]string{
		"nopk": {}, "comp": {"c", "a", "b"}, "pfx": {"name", "id"}, "pfxtext": {"body"}, "gen": {"id"},
	} {
		rows := Rows(recs, "k", table)
		if len(rows) == 0 || !equalStrings(rows[0].PK, want) {
			t.Errorf("k.%s: pk %v, want %v", table, firstPK(rows), want)
		}
	}
}

func firstPK(rows []Rec) []string {
	if len(rows) == 0 {
		return nil
	}
	return rows[0].PK
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
