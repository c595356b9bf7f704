package e2e

// The columns and the expected values of TestFormatsDifferential
// (diff_formats_test.go): every column type, the SQL expression that
// reads its value back from the server, and what each output format
// must make of that value.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

type fxKind int

const (
	fxInt fxKind = iota
	fxBit
	fxYear
	fxDec
	fxFloat
	fxDouble
	fxDate
	fxTime
	fxDatetime
	fxTimestamp
	fxText
	fxBytes
	fxEnum
	fxSet
	fxJSON
	fxGeom
)

// fxCol is a column: its DDL, a generator of SQL literals, and what the
// formats need to know of its type.
type fxCol struct {
	name, ddl string
	kind      fxKind
	gen       func(g *rpGen) string
	blob      bool     // a BLOB/TEXT/JSON: left out of NOBLOB images unless set
	nullable  bool     // not NOT NULL
	param     int      // BIT: width; DATETIME: fsp; DECIMAL: scale
	u64       bool     // BIGINT UNSIGNED
	point     bool     // POINT
	labels    []string // SET members
}

func fxC(name, ddl string, kind fxKind, gen func(g *rpGen) string) fxCol {
	return fxCol{name: name, ddl: ddl, kind: kind, gen: gen, nullable: !strings.Contains(ddl, "NOT NULL")}
}

// fxPool builds the column pool from the replay differential's
// generators (dfCols) and adds what that pool lacks: every fsp, the
// ENUM error value, SET members ” and numbers, negative zero-ish
// decimals, COMPRESSED and INVISIBLE columns.
func fxPool() []fxCol {
	var pool []fxCol
	kinds := map[string]fxKind{}
	for _, n := range []string{"ti", "tiu", "si", "siu", "mi", "miu", "i", "iu", "bi", "biu"} {
		kinds[n] = fxInt
	}
	for _, n := range []string{"cu", "vu", "vnn", "tu", "vub", "vnp", "v3", "vl", "cl", "tl", "vcp", "vkoi", "vsj", "vgb", "vuc", "vu16", "vu32", "vas"} {
		kinds[n] = fxText
	}
	for _, n := range []string{"bn", "vb", "tb", "bl", "uu", "i6", "i4"} {
		kinds[n] = fxBytes
	}
	for _, d := range dfCols {
		c := fxC(d.name, d.ddl, fxInt, d.gen)
		c.blob = d.blob
		switch {
		case kinds[d.name] != fxInt || d.name == "uu" || d.name == "i6" || d.name == "i4":
			c.kind = kinds[d.name]
		case strings.HasPrefix(d.name, "ti") || strings.HasPrefix(d.name, "si") || strings.HasPrefix(d.name, "mi") ||
			d.name == "i" || d.name == "iu" || d.name == "bi" || d.name == "biu":
			c.u64 = d.name == "biu"
		case d.name == "yr":
			c.kind = fxYear
		case strings.HasPrefix(d.ddl, "BIT("):
			c.kind = fxBit
			c.param, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(d.ddl, "BIT("), ")"))
		case strings.HasPrefix(d.ddl, "DECIMAL"):
			c.kind = fxDec
		case d.name == "f" || d.name == "f73":
			c.kind = fxFloat
		case d.name == "fd" || d.name == "fd205":
			c.kind = fxDouble
		default:
			continue // temporal, ENUM, SET, JSON, geometry: below
		}
		pool = append(pool, c)
	}
	for fsp := 0; fsp <= 6; fsp++ {
		fsp := fsp
		sfx := ""
		if fsp > 0 {
			sfx = fmt.Sprintf("(%d)", fsp)
		}
		c := fxC(fmt.Sprintf("tm%d", fsp), "TIME"+sfx, fxTime, func(g *rpGen) string { return dfTime(g, fsp) })
		pool = append(pool, c)
		c = fxC(fmt.Sprintf("dt%d", fsp), "DATETIME"+sfx, fxDatetime, func(g *rpGen) string { return dfDatetime(g, fsp) })
		c.param = fsp
		pool = append(pool, c)
		c = fxC(fmt.Sprintf("ts%d", fsp), "TIMESTAMP"+sfx+" NULL DEFAULT NULL", fxTimestamp, func(g *rpGen) string { return dfTimestamp(g, fsp) })
		pool = append(pool, c)
	}
	pool = append(pool,
		fxC("dtn", "DATETIME(3) NOT NULL DEFAULT '2001-01-01'", fxDatetime, func(g *rpGen) string { return dfDatetime(g, 3) }),
		fxC("tsn", "TIMESTAMP(2) NOT NULL DEFAULT '2001-01-01'", fxTimestamp, func(g *rpGen) string { return dfTimestamp(g, 2) }),
		fxC("da", "DATE", fxDate, func(g *rpGen) string {
			return g.quote(dfPick(g, "0000-00-00", "9999-12-31", "2020-02-30", "2020-05-00", g.date()))
		}),
		fxC("dan", "DATE NOT NULL DEFAULT '2000-01-01'", fxDate, func(g *rpGen) string { return g.quote(dfPick(g, "0000-00-00", "1000-01-01", g.date())) }),
		fxC("d6530", "DECIMAL(65,30)", fxDec, func(g *rpGen) string {
			return dfPick(g, "-0.000000000000000000000000000001", "-0", "-0.0000000000000000000000000000004", dfDecimal(g, 65, 30, false))
		}),
		fxC("d102", "DECIMAL(10,2)", fxDec, func(g *rpGen) string {
			return dfPick(g, "-0.00", "-0.004", "-0.005", "0.01", dfDecimal(g, 10, 2, false))
		}),
		fxC("en", "ENUM('', 'a', 'b c', 'ü', '\\\\N')", fxEnum, func(g *rpGen) string {
			return dfPick(g, "''", "'a'", "'b c'", "_utf8mb4 X'c3bc'", "'\\\\N'", "2", "'not a member'", "0")
		}),
		fxC("enn", "ENUM('x', 'y') NOT NULL", fxEnum, func(g *rpGen) string { return dfPick(g, "'x'", "'y'", "'zz'") }),
		fxC("js", "JSON", fxJSON, func(g *rpGen) string {
			return dfPick(g, dfJSON(g), `'{"a": {"b": [1, 2.5e-3, -1E+30, {"c": null}]}, "é😀": "\\u00e9"}'`, `'1.0e2'`, `'-0'`, `'[[], {}, ""]'`)
		}),
		fxC("gm", "GEOMETRY", fxGeom, func(g *rpGen) string { return g.geometry(false) }),
		fxC("pt", "POINT", fxGeom, func(g *rpGen) string { return g.geometry(true) }),
		fxC("vc", "VARCHAR(100) COMPRESSED CHARACTER SET utf8mb4", fxText, func(g *rpGen) string {
			return dfPick(g, dfText(g, 100, dfUTF8), "REPEAT('é😀', 25)")
		}),
		fxC("tc", "TEXT COMPRESSED CHARACTER SET latin1", fxText, func(g *rpGen) string { return dfPick(g, dfText(g, 200, dfLat1), "REPEAT('ab', 500)") }),
		fxC("bc", "BLOB COMPRESSED", fxBytes, func(g *rpGen) string { return dfPick(g, dfRaw(g, "binary", 300), "REPEAT(X'00FF', 700)") }),
		fxC("iv", "INT INVISIBLE", fxInt, func(g *rpGen) string { return g.intOf(32, false) }),
		fxC("ivt", "VARCHAR(10) INVISIBLE DEFAULT 'hidden'", fxText, func(g *rpGen) string { return dfText(g, 10, dfUTF8) }),
	)
	for i := range pool {
		c := &pool[i]
		switch c.name {
		case "js", "tc", "bc":
			c.blob = true
		case "gm", "pt": // MariaDB's NOBLOB keeps geometry
			c.blob = false
		}
		c.point = c.name == "pt"
		if c.kind == fxDec {
			if _, s, ok := strings.Cut(c.ddl, ","); ok {
				c.param, _ = strconv.Atoi(strings.TrimRight(strings.Fields(s)[0], ")"))
			}
		}
	}
	sets := []fxCol{
		{name: "st", ddl: "SET('', 'x', 'y z', 'ü')", labels: []string{"", "x", "y z", "ü"}},
		{name: "s2", ddl: "SET('a', '', 'b')", labels: []string{"a", "", "b"}},
		{name: "s64", ddl: "SET(" + fxSetMembers(64) + ")", labels: strings.Split(strings.ReplaceAll(fxSetMembers(64), "'", ""), ",")},
	}
	for _, s := range sets {
		s := s
		s.kind, s.nullable = fxSet, true
		n := len(s.labels)
		s.gen = func(g *rpGen) string {
			if n == 64 {
				return dfPick(g, "18446744073709551615", "9223372036854775808", "1", "0", strconv.FormatUint(g.r.Uint64(), 10))
			}
			return strconv.Itoa(g.pick(1 << n))
		}
		pool = append(pool, s)
	}
	return pool
}

func fxSetMembers(n int) string {
	m := make([]string, n)
	for i := range m {
		m[i] = fmt.Sprintf("'m%d'", i)
	}
	return strings.Join(m, ",")
}

// expr is the SQL that reads the column's value back from the server.
func (c *fxCol) expr() string {
	q := rpQ(c.name)
	switch c.kind {
	case fxInt, fxDec, fxDate, fxTime, fxDatetime, fxTimestamp:
		return "CAST(" + q + " AS CHAR)"
	case fxBit:
		return "CAST(" + q + " AS UNSIGNED)"
	case fxYear, fxSet:
		return "CAST(" + q + " + 0 AS CHAR)"
	case fxFloat, fxDouble:
		return "CAST(" + q + " AS DOUBLE)"
	case fxText, fxJSON:
		return "HEX(CONVERT(" + q + " USING utf8mb4))"
	case fxBytes:
		return "HEX(" + q + ")"
	case fxEnum:
		return "CONCAT(" + q + " + 0, ':', HEX(CONVERT(" + q + " USING utf8mb4)))"
	case fxGeom:
		return "CONCAT(ST_SRID(" + q + "), ':', HEX(ST_AsBinary(" + q + ")))"
	}
	panic(c.name)
}

func fxUnhex(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func fxB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// setLabels are the members of mask, in table order (” included).
func (c *fxCol) setLabels(mask uint64) []string {
	l := []string{}
	for i, m := range c.labels {
		if mask&(1<<uint(i)) != 0 {
			l = append(l, m)
		}
	}
	return l
}

// isZeroDate: a date with a zero year, month or day, which Debezium
// writes as null (or the epoch).
func isZeroDate(s string) bool {
	return len(s) >= 10 && (s[:4] == "0000" || s[5:7] == "00" || s[8:10] == "00")
}

func fxCivil(s string) (time.Time, bool) {
	if isZeroDate(s) {
		return time.Time{}, false
	}
	layout := "2006-01-02 15:04:05.999999"
	if len(s) == 10 {
		layout = "2006-01-02"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		panic(err)
	}
	return t, true
}

// fxMicros parses [-]h:mm:ss[.f] as microseconds.
func fxMicros(s string) int64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	hms, frac, _ := strings.Cut(s, ".")
	p := strings.Split(hms, ":")
	h, _ := strconv.ParseInt(p[0], 10, 64)
	m, _ := strconv.ParseInt(p[1], 10, 64)
	sec, _ := strconv.ParseInt(p[2], 10, 64)
	us := ((h*60+m)*60 + sec) * 1e6
	if frac != "" {
		f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		us += f
	}
	if neg {
		us = -us
	}
	return us
}

// javaBytes is Java's BigInteger.toByteArray of n: the minimal
// big-endian two's complement.
func javaBytes(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	l := m.BitLen()/8 + 1
	v := new(big.Int).Lsh(big.NewInt(1), uint(8*l))
	v.Add(v, n)
	b := v.Bytes()
	for len(b) < l {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// want is the value format must write for the server's text s (nil:
// NULL) of column c.
func (c *fxCol) want(format string, s *string) any {
	if s == nil {
		return nil
	}
	v := *s
	num := json.Number(v)
	text := func(x string) any {
		if format == "canal" {
			return x
		}
		return json.Number(x)
	}
	switch c.kind {
	case fxInt:
		if format == "debezium" && c.u64 {
			u, _ := strconv.ParseUint(v, 10, 64)
			return json.Number(strconv.FormatInt(int64(u), 10))
		}
		return text(v)
	case fxBit:
		if format == "debezium" {
			if c.param == 1 {
				return v != "0"
			}
			u, _ := strconv.ParseUint(v, 10, 64)
			var le [8]byte
			binary.LittleEndian.PutUint64(le[:], u)
			return base64.StdEncoding.EncodeToString(le[:(c.param+7)/8])
		}
		return text(v)
	case fxYear:
		if format == "debezium" && v == "0" {
			return json.Number("1900") // Debezium's binlog reader: 1900 + the stored byte
		}
		return text(v)
	case fxDec:
		switch format {
		case "json", "canal":
			return v
		case "maxwell":
			return num
		}
		n, ok := new(big.Int).SetString(strings.Replace(v, ".", "", 1), 10)
		if !ok {
			panic(v)
		}
		return base64.StdEncoding.EncodeToString(javaBytes(n))
	case fxFloat, fxDouble:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			panic(err)
		}
		bits := 64
		if c.kind == fxFloat {
			f, bits = float64(float32(f)), 32
		}
		if format == "canal" {
			return shortestFloat(f, bits)
		}
		if bits == 32 {
			return f32(f)
		}
		return f64(f)
	case fxDate, fxDatetime, fxTimestamp:
		if format == "maxwell" && len(v) >= 10 && (v[5:7] == "00" || v[8:10] == "00") {
			// Maxwell writes a date with a zero month or day as the zero
			// date of the column's shape (test_zero_created_at).
			return strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return '0'
				}
				return r
			}, v)
		}
		if format != "debezium" {
			return v
		}
		t, ok := fxCivil(v)
		if !ok {
			if c.nullable {
				return nil
			}
			if c.kind == fxTimestamp {
				return "1970-01-01T00:00:00Z"
			}
			return json.Number("0")
		}
		switch c.kind {
		case fxDate:
			return json.Number(strconv.FormatInt(t.Unix()/86400, 10))
		case fxTimestamp:
			return strings.Replace(v, " ", "T", 1) + "Z"
		}
		if c.param <= 3 {
			return json.Number(strconv.FormatInt(t.UnixMilli(), 10))
		}
		return json.Number(strconv.FormatInt(t.UnixMicro(), 10))
	case fxTime:
		if format == "debezium" {
			return json.Number(strconv.FormatInt(fxMicros(v), 10))
		}
		return v
	case fxText, fxJSON:
		return fxUnhex(v)
	case fxBytes:
		if format == "maxwell" && (strings.HasPrefix(c.ddl, "BINARY(") || c.ddl == "UUID" || c.ddl == "INET4" || c.ddl == "INET6") {
			// Maxwell writes BINARY(n) as the binlog logs it, without
			// its trailing 0x00 bytes (test_blob); MariaDB's UUID, INET4
			// and INET6 are BINARY(n) in the binlog.
			return fxB64(strings.TrimRight(fxUnhex(v), "\x00"))
		}
		return fxB64(fxUnhex(v))
	case fxEnum:
		i, l, _ := strings.Cut(v, ":")
		if i == "0" {
			if format == "json" {
				return json.Number("0")
			}
			return ""
		}
		return fxUnhex(l)
	case fxSet:
		mask, err := strconv.ParseUint(v, 10, 64)
		if err != nil { // SET + 0 is signed: m63 reads as negative
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				panic(err)
			}
			mask = uint64(n)
		}
		l := c.setLabels(mask)
		if format == "json" || format == "maxwell" {
			a := []any{}
			for _, s := range l {
				a = append(a, s)
			}
			return a
		}
		return strings.Join(l, ",") // Debezium's convertSetValue
	case fxGeom:
		srid, h, _ := strings.Cut(v, ":")
		wkb := fxB64(fxUnhex(h))
		switch format {
		case "json":
			return &Obj{Keys: []string{"srid", "wkb"}, M: map[string]any{"srid": json.Number(srid), "wkb": wkb}}
		case "canal":
			return wkb
		case "maxwell":
			return fxAnyString{}
		}
		o := &Obj{M: map[string]any{"wkb": wkb, "srid": json.Number(srid)}}
		if srid == "0" {
			o.M["srid"] = nil
		}
		raw := []byte(fxUnhex(h))
		if c.point && len(raw) == 21 {
			o.Keys = []string{"x", "y"}
			o.M["x"] = f64(math.Float64frombits(binary.LittleEndian.Uint64(raw[5:])))
			o.M["y"] = f64(math.Float64frombits(binary.LittleEndian.Uint64(raw[13:])))
		}
		o.Keys = append(o.Keys, "wkb", "srid")
		return o
	}
	panic(c.name)
}

// fxAnyString expects some JSON string (Maxwell's WKT, not compared).
type fxAnyString struct{}

func fxEqual(got, want any) bool {
	if _, ok := want.(fxAnyString); ok {
		_, ok := got.(string)
		return ok
	}
	return equalJSON(got, want)
}
