package e2e

// The tables and the workload of TestRecoverDifferential
// (recover_diff_test.go): the column generators of TestReplayDifferential
// (replay_diff_gen_test.go) in tables with keys of every kind, run through
// inserts, updates, key changes, deletes and re-inserts (dfTx), in FULL,
// MINIMAL and NOBLOB images, and ALTER TABLE chains between them.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// rdCols picks dfCols by name, in the order given.
func rdCols(names ...string) []dfCol {
	var out []dfCol
	for _, n := range names {
		i := slices.IndexFunc(dfCols, func(c dfCol) bool { return c.name == n })
		if i < 0 {
			panic("no dfCol " + n)
		}
		out = append(out, dfCols[i])
	}
	return out
}

// rdAllCols is every dfCol, UUID and INET ones included.
func rdAllCols() []dfCol { return append([]dfCol(nil), dfCols...) }

// rdBig is a LONGBLOB of a few MiB (kept beside Pebble), or a small one.
var rdBig = dfCol{name: "big", ddl: "LONGBLOB", blob: true, gen: func(g *rpGen) string {
	switch g.pick(80) {
	case 0:
		return fmt.Sprintf("REPEAT(X'00FF', %d)", 1<<20+g.pick(1<<19)) // 2-3 MiB
	case 1:
		return fmt.Sprintf("CONCAT(REPEAT(X'AB', %d), X'0000')", 1<<20) // ends in zero bytes
	}
	return dfRaw(g, "binary", 20)
}}

// rdTables makes the workload's tables (their names are those of the
// dfTable kinds, so dfTx treats them alike).
func rdTables() []*dfTable {
	ts := []*dfTable{
		{name: "wide", keyDDL: "id INT NOT NULL, PRIMARY KEY (id)", keyCols: []string{"id"}, key: dfIntKey,
			cols: append(rdAllCols(), rdBig)},
		{name: "ubig", keyDDL: "id BIGINT UNSIGNED NOT NULL PRIMARY KEY", keyCols: []string{"id"}, key: func(s int) []string {
			if s%2 == 1 {
				return []string{strconv.FormatUint(18446744073709551615-uint64(s/2), 10)}
			}
			return []string{strconv.Itoa(s / 2)}
		}, cols: rdCols("tiu", "biu", "d65u", "f", "fd", "ts6", "vu", "bl", "st")},
		{name: "comp", keyDDL: "a INT NOT NULL, b VARBINARY(8) NOT NULL, PRIMARY KEY (b, a)", keyCols: []string{"a", "b"}, key: func(s int) []string {
			return []string{strconv.Itoa(s%7 - 3), fmt.Sprintf("X'%02x00ff%02x'", s/7%256, s/7/256)}
		}, cols: rdCols("ti", "si", "d55", "d2010", "dt0", "tm6", "cl", "vl", "vuc", "en", "b64", "gm")},
		{name: "vkey", keyDDL: "k VARCHAR(32) CHARACTER SET utf8mb4 NOT NULL PRIMARY KEY", keyCols: []string{"k"}, key: dfTextKey, cols: rdCols("mi", "miu", "d1", "f73", "da", "vnn", "vub", "vnp", "v3", "vkoi", "vgb", "js", "tu")},
		{name: "bkey", keyDDL: "k BINARY(6) NOT NULL PRIMARY KEY", keyCols: []string{"k"}, key: dfBinKey, cols: rdCols("b1", "b7", "b17", "b33", "bn", "vb", "tb", "yr", "pt", "ts0")},
		{name: "uniq", keyDDL: "id INT NOT NULL PRIMARY KEY, u VARCHAR(20), UNIQUE KEY (u)", keyCols: []string{"id"},
			key: func(s int) []string { return []string{strconv.Itoa(s)} }, cols: rdCols("uu", "i6", "i4", "vu", "i", "dt6")},
		{name: "nokey", keyDDL: "n INT", key: func(s int) []string { return []string{strconv.Itoa(s)} },
			cols: rdCols("ti", "vl", "fd", "f", "da", "vu16", "vu32", "vas", "en", "st", "bl")},
		{name: "evo", keyDDL: "id INT NOT NULL, PRIMARY KEY (id)", keyCols: []string{"id"}, key: dfIntKey,
			cols: rdCols("ti", "siu", "i", "bi", "f", "fd", "d2010", "dt2", "dt6", "tm3", "da", "vu", "vl", "vcp", "vsj", "vu16", "bn", "vb", "b7", "en", "st", "yr", "js", "tu")},
		{name: "cyc", keyDDL: "id INT NOT NULL, PRIMARY KEY (id)", keyCols: []string{"id"}, key: dfIntKey,
			cols: rdCols("i", "vu", "dt6", "bl")},
	}
	for _, t := range ts {
		t.keyOf = map[int][]string{}
	}
	return ts
}

// rdCol is t's column name, or nil.
func (t *dfTable) rdCol(name string) *dfCol {
	for i := range t.cols {
		if t.cols[i].name == name {
			return &t.cols[i]
		}
	}
	return nil
}

// rdAlter is one ALTER TABLE of a chain: its clauses, and what it does to
// the model (columns, key).
type rdAlter struct {
	sql   string
	apply func(t *dfTable)
}

// rdModify returns an apply that gives columns new DDL (types, charsets;
// the generators stay: the server coerces their literals).
func rdModify(ddl map[string]string) func(t *dfTable) {
	return func(t *dfTable) {
		for n, d := range ddl {
			t.rdCol(n).ddl = d
		}
	}
}

func rdModifySQL(ddl map[string]string) string {
	var parts []string
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range ddl {
			if !yield(n) {
				return
			}
		}
	}) {
		parts = append(parts, "MODIFY "+rpQ(n)+" "+ddl[n])
	}
	return strings.Join(parts, ", ")
}

func rdMod(ddl map[string]string) rdAlter { return rdAlter{rdModifySQL(ddl), rdModify(ddl)} }

func rdDrop(t *dfTable, name string) {
	t.cols = slices.DeleteFunc(t.cols, func(c dfCol) bool { return c.name == name })
}

func rdRename(t *dfTable, from, to string) {
	if c := t.rdCol(from); c != nil {
		c.name = to
	}
	for i, k := range t.keyCols {
		if k == from {
			t.keyCols[i] = to
		}
	}
}

// The ALTER chain of evo: columns added with defaults, widened, narrowed
// (the session is not strict: values are cut, rounded, clipped), renamed,
// dropped, every text column converted to another charset and back, and
// the primary key changed to a composite one.
var rdEvoChain = []rdAlter{
	{"ADD COLUMN k2 INT NOT NULL DEFAULT 0, ADD COLUMN note VARCHAR(20) CHARACTER SET latin1 DEFAULT 'n''ote' AFTER ti, " +
		"ADD COLUMN added DATETIME(3) DEFAULT '2001-02-03 04:05:06.789', ADD COLUMN fl FLOAT NOT NULL DEFAULT 0.1, ADD COLUMN e2 ENUM('p','q') NOT NULL",
		func(t *dfTable) {
			t.cols = append(t.cols,
				// k2 stays 0 until it joins the key (the model's keys assume so).
				dfCol{name: "k2", ddl: "INT NOT NULL DEFAULT 0", gen: func(g *rpGen) string { return "0" }},
				dfCol{name: "note", ddl: "VARCHAR(20) CHARACTER SET latin1", gen: func(g *rpGen) string { return dfText(g, 20, dfLat1) }},
				dfCol{name: "added", ddl: "DATETIME(3)", gen: func(g *rpGen) string { return dfDatetime(g, 3) }},
				dfCol{name: "fl", ddl: "FLOAT NOT NULL", gen: dfFloat},
				dfCol{name: "e2", ddl: "ENUM('p','q') NOT NULL", gen: func(g *rpGen) string { return dfPick(g, "'p'", "'q'") }})
		}},
	rdMod(map[string]string{"ti": "INT", "siu": "MEDIUMINT UNSIGNED", "f": "DOUBLE", "d2010": "DECIMAL(30,12)", "dt2": "DATETIME(6)",
		"tm3": "TIME(6)", "da": "DATETIME", "vu": "TEXT CHARACTER SET utf8mb4", "bn": "VARBINARY(20)",
		"en": "ENUM('', 'a', 'b c', 'ü', '\\\\N', 'new')", "yr": "SMALLINT"}),
	rdMod(map[string]string{"fd": "FLOAT", "dt6": "DATETIME(2) NOT NULL DEFAULT '2001-01-01 00:00:00'", "vl": "VARCHAR(10) CHARACTER SET latin1",
		"i": "SMALLINT", "bi": "DECIMAL(8,2)", "d2010": "DECIMAL(12,3)", "tm3": "TIME(1)", "siu": "TINYINT", "ti": "VARCHAR(4)", "f": "DECIMAL(10,4)"}),
	{"RENAME COLUMN vcp TO vcp2, CHANGE COLUMN vsj vsj2 VARCHAR(40) CHARACTER SET utf8mb4, DROP COLUMN vb, DROP COLUMN tu", func(t *dfTable) {
		rdRename(t, "vcp", "vcp2")
		rdRename(t, "vsj", "vsj2")
		t.rdCol("vsj2").ddl = "VARCHAR(40) CHARACTER SET utf8mb4"
		rdDrop(t, "vb")
		rdDrop(t, "tu")
	}},
	{"CONVERT TO CHARACTER SET utf8mb4", func(*dfTable) {}},
	{"DROP PRIMARY KEY, ADD PRIMARY KEY (id, k2)", func(t *dfTable) {
		for seq, k := range t.keyOf {
			t.keyOf[seq] = []string{k[0], "0"} // k2 is not set by dfTx's key changes: rows keep their k2
		}
		rdDrop(t, "k2")
		t.keyCols = []string{"id", "k2"}
		t.key = func(s int) []string { return []string{dfIntKey(s)[0], strconv.Itoa(s % 3)} }
	}},
	{"CONVERT TO CHARACTER SET latin1", func(*dfTable) {}},
}

// The ALTER chain of comp: a key column's type widened and renamed, a
// column added first, the key's column order changed.
var rdCompChain = []rdAlter{
	{"MODIFY a BIGINT NOT NULL, ADD COLUMN z VARCHAR(5) CHARACTER SET utf8mb4 NOT NULL DEFAULT 'zé' FIRST, MODIFY vuc VARCHAR(40) CHARACTER SET utf8mb4",
		func(t *dfTable) {
			t.cols = append(t.cols, dfCol{name: "z", ddl: "VARCHAR(5) NOT NULL", gen: func(g *rpGen) string { return dfText(g, 5, dfUTF8) }})
			t.rdCol("vuc").ddl = "VARCHAR(40) CHARACTER SET utf8mb4"
		}},
	{"RENAME COLUMN a TO aa, DROP PRIMARY KEY, ADD PRIMARY KEY (aa, b), MODIFY d55 DECIMAL(7,3), MODIFY ti SMALLINT UNSIGNED", func(t *dfTable) {
		rdRename(t, "a", "aa")
		t.rdCol("d55").ddl = "DECIMAL(7,3)"
		t.rdCol("ti").ddl = "SMALLINT UNSIGNED"
	}},
}
