package verify

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Definitions are compared in two classes. A difference in what a
// column or key stores or how it compares (position, type, character
// set, collation, nullability, default, generated or not and how,
// visibility, AUTO_INCREMENT, ON UPDATE, the primary and unique keys,
// system versioning) goes to Table.Schema and makes the table differ.
// A difference that changes no data (engine, row format, comments, the
// table's default collation, an integer's display width, the
// AUTO_INCREMENT counter, non-unique indexes, index names) goes to
// Table.Cosmetic and makes it differ only with Options.StrictSchema.

// addrTypes are shown as text but stored as bytes.
var addrTypes = map[string]bool{"uuid": true, "inet4": true, "inet6": true}

// displayWidth is an integer type's display width: int(11) is int.
var displayWidth = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint)\(\d+\)`)

// dataType is the column's type without what does not change its data.
func (c column) dataTypeText() string {
	t := strings.ToLower(c.typ)
	if !strings.Contains(t, "zerofill") { // zerofill's width is shown data
		t = displayWidth.ReplaceAllString(t, "$1")
	}
	return t
}

// extraTokens are the EXTRA attributes that change data, in a fixed
// order; MySQL's DEFAULT_GENERATED only says the default is an
// expression, which the default's text shows.
func (c column) extraText() string {
	e := strings.ToUpper(c.extra)
	var out []string
	for _, tok := range []string{"AUTO_INCREMENT", "INVISIBLE", "ROW START", "ROW END"} {
		if strings.Contains(e, tok) {
			out = append(out, tok)
		}
	}
	if i := strings.Index(e, "ON UPDATE "); i >= 0 {
		rest := c.extra[i:]
		if j := strings.Index(strings.ToUpper(rest), " INVISIBLE"); j >= 0 {
			rest = rest[:j]
		}
		out = append(out, strings.TrimSpace(rest))
	}
	return strings.Join(out, " ")
}

// definition is the column's definition as far as it changes data, as
// people read it.
func (c column) definition() string {
	var b strings.Builder
	b.WriteString(quote(c.name) + " " + c.dataTypeText())
	if c.charset != "" {
		b.WriteString(" CHARACTER SET " + c.charset + " COLLATE " + c.collation)
	}
	if c.generated == "ALWAYS" && c.expr != "" {
		kind := "VIRTUAL"
		if strings.Contains(strings.ToUpper(c.extra), "STORED") || strings.Contains(strings.ToUpper(c.extra), "PERSISTENT") {
			kind = "STORED"
		}
		b.WriteString(" GENERATED ALWAYS AS (" + c.expr + ") " + kind)
	}
	if c.nullable == "NO" {
		b.WriteString(" NOT NULL")
	} else {
		b.WriteString(" NULL")
	}
	if c.def != nil && !(c.generated == "ALWAYS" && c.expr != "") {
		b.WriteString(" DEFAULT " + *c.def)
	}
	if e := c.extraText(); e != "" {
		b.WriteString(" " + e)
	}
	return b.String()
}

// compareDefinitions notes every difference of the two tables'
// definitions in out.Schema and out.Cosmetic, and returns the source's
// columns that the target has too (in the source's order).
func compareDefinitions(st, dt *tableInfo, out *Table) []column {
	if st.versioned != dt.versioned {
		out.Schema = append(out.Schema, fmt.Sprintf("system versioning: source %v, target %v", st.versioned, dt.versioned))
	}
	tcols := map[string]column{}
	for _, c := range dt.cols {
		tcols[strings.ToLower(c.name)] = c
	}
	var cols []column
	var srcOrder, dstOrder []string
	seen := map[string]bool{}
	for _, c := range st.cols {
		lc := strings.ToLower(c.name)
		seen[lc] = true
		tc, ok := tcols[lc]
		if !ok {
			out.Schema = append(out.Schema, "column "+quote(c.name)+" is missing on the target (source: "+c.definition()+")")
			continue
		}
		if sd, td := c.definition(), tc.definition(); sd != td {
			out.Schema = append(out.Schema, fmt.Sprintf("column %s: source %s; target %s", quote(c.name), sd, td))
		} else if c.typ != tc.typ {
			out.Cosmetic = append(out.Cosmetic, fmt.Sprintf("column %s: type source %s, target %s", quote(c.name), c.typ, tc.typ))
		}
		if c.comment != tc.comment {
			out.Cosmetic = append(out.Cosmetic, fmt.Sprintf("column %s: comment source %q, target %q", quote(c.name), c.comment, tc.comment))
		}
		// A UUID or address against BINARY(16) (recover's copy): both
		// are read as their stored bytes.
		c.asBytes = addrTypes[c.dataType] || addrTypes[tc.dataType]
		cols = append(cols, c)
		srcOrder = append(srcOrder, lc)
	}
	for _, c := range dt.cols {
		lc := strings.ToLower(c.name)
		if !seen[lc] {
			out.Schema = append(out.Schema, "column "+quote(c.name)+" is extra on the target (target: "+c.definition()+")")
		} else {
			dstOrder = append(dstOrder, lc)
		}
	}
	if strings.Join(srcOrder, "\x00") != strings.Join(dstOrder, "\x00") {
		out.Schema = append(out.Schema, fmt.Sprintf("column order: source (%s), target (%s)", colNames(st.cols), colNames(dt.cols)))
	}
	compareIndexes(st, dt, out)
	var opts []string
	for k := range st.options {
		opts = append(opts, k)
	}
	sort.Strings(opts)
	for _, k := range opts {
		if st.options[k] != dt.options[k] {
			out.Cosmetic = append(out.Cosmetic, fmt.Sprintf("table %s: source %q, target %q", k, st.options[k], dt.options[k]))
		}
	}
	if st.versioned && dt.versioned && periodEnd(cols) == "" {
		// Implicit period columns are not in information_schema.
		cols = append(cols, column{name: "row_start", dataType: "timestamp", extra: "ROW START"},
			column{name: "row_end", dataType: "timestamp", extra: "ROW END"})
	}
	return cols
}

// keyText is a primary or unique key as far as it constrains data.
func (ix index) keyText() string {
	kind := "UNIQUE KEY"
	if ix.name == "PRIMARY" {
		kind = "PRIMARY KEY"
	}
	return kind + " (" + strings.Join(ix.cols, ",") + ")"
}

// fullText is an index's whole definition.
func (ix index) fullText() string {
	kind := "KEY"
	switch {
	case ix.name == "PRIMARY":
		kind = "PRIMARY KEY"
	case ix.unique:
		kind = "UNIQUE KEY"
	}
	return fmt.Sprintf("%s %s (%s) %s", kind, quote(ix.name), strings.Join(ix.cols, ","), ix.typ)
}

// compareIndexes: the primary and unique keys change data (which rows
// can be stored, and how verify matches rows); other indexes and the
// names do not.
func compareIndexes(st, dt *tableInfo, out *Table) {
	keys := func(t *tableInfo) map[string]bool {
		m := map[string]bool{}
		for _, ix := range t.indexes {
			if ix.unique {
				m[ix.keyText()] = true
			}
		}
		return m
	}
	diff := func(a, b map[string]bool) (onlyA, onlyB []string) {
		for k := range a {
			if !b[k] {
				onlyA = append(onlyA, k)
			}
		}
		for k := range b {
			if !a[k] {
				onlyB = append(onlyB, k)
			}
		}
		sort.Strings(onlyA)
		sort.Strings(onlyB)
		return
	}
	ks, kd := diff(keys(st), keys(dt))
	for _, k := range ks {
		out.Schema = append(out.Schema, "key on the source only: "+k)
	}
	for _, k := range kd {
		out.Schema = append(out.Schema, "key on the target only: "+k)
	}
	// The indexes whose key difference is reported already are left out.
	reported := map[string]bool{}
	for _, k := range append(ks, kd...) {
		reported[k] = true
	}
	others := func(t *tableInfo) map[string]bool {
		m := map[string]bool{}
		for _, ix := range t.indexes {
			if !(ix.unique && reported[ix.keyText()]) {
				m[ix.fullText()] = true
			}
		}
		return m
	}
	is, id := diff(others(st), others(dt))
	for _, k := range is {
		out.Cosmetic = append(out.Cosmetic, "index on the source only: "+k)
	}
	for _, k := range id {
		out.Cosmetic = append(out.Cosmetic, "index on the target only: "+k)
	}
}

func colNames(cols []column) string {
	var q []string
	for _, c := range cols {
		q = append(q, quote(c.name))
	}
	return strings.Join(q, ",")
}
