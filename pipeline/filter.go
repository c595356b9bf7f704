package pipeline

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Filter selects tables by db.table patterns. Each part is a glob
// (path.Match syntax: *, ?, [...]) or a backquoted identifier, matched
// literally (`d.b`.`x“y` is the table x`y in the database d.b). A table
// passes when it matches an include pattern (or there are none) and no
// exclude pattern.
//
// Letter case: names are compared case-insensitively. binlogcdc cannot
// know the server's lower_case_table_names: with 1 or 2 the server stores
// names in lower case (TABLE_MAP events carry them so) while statements
// keep the user's spelling, so only a case-insensitive match selects
// their DDL reliably. Two tables whose names differ only in case (possible
// on Linux with lower_case_table_names=0) cannot be told apart: Unmatched
// reports it when the input holds such a pair.
type Filter struct {
	include, exclude []*pattern

	seen map[string]string // lower-cased db.table of TABLE_MAPs → the first spelling
	twin map[string]string // lower-cased db.table → a second spelling
}

type pattern struct {
	text      string // as given
	db, table part
	used      bool // it matched a table the input mentions
}

// part is one side of a pattern: a lower-cased glob, or a literal name.
type part struct {
	s       string
	literal bool
}

func (p part) match(name string) bool {
	name = strings.ToLower(name)
	if p.literal {
		return name == p.s
	}
	ok, _ := path.Match(p.s, name)
	return ok
}

// star reports a part that matches every name.
func (p part) star() bool { return !p.literal && p.s == "*" }

// NewFilter checks and compiles the patterns.
func NewFilter(include, exclude []string) (*Filter, error) {
	f := &Filter{}
	for _, list := range []struct {
		in  []string
		out *[]*pattern
	}{{include, &f.include}, {exclude, &f.exclude}} {
		for _, s := range list.in {
			db, table, dbq, tq, err := splitName(s)
			if err != nil {
				return nil, fmt.Errorf("table pattern %q: %v", s, err)
			}
			p := &pattern{text: s, db: part{strings.ToLower(db), dbq}, table: part{strings.ToLower(table), tq}}
			for _, pt := range []part{p.db, p.table} {
				if _, err := path.Match(pt.s, ""); err != nil && !pt.literal {
					return nil, fmt.Errorf("table pattern %q: %v (quote a name that holds * ? [ or \\ with backquotes)", s, err)
				}
			}
			*list.out = append(*list.out, p)
		}
	}
	return f, nil
}

// ParseTableName reads one table name, db.table, where either part may be
// backquoted (`d.b`.`x“y`): a name holding a dot or a backquote must be.
// An unquoted part is taken as written.
func ParseTableName(s string) (db, table string, err error) {
	db, table, _, _, err = splitName(s)
	return db, table, err
}

// ParseColumnNames reads a comma-separated list of db.table.column names,
// any part backquoted (`d.b`.t.`c,1`).
func ParseColumnNames(list string) ([][3]string, error) {
	var out [][3]string
	rest := strings.TrimSpace(list)
	for rest != "" {
		var n [3]string
		var err error
		for i := range n {
			if i > 0 {
				if rest == "" || rest[0] != '.' {
					return nil, fmt.Errorf("%q: want db.table.column (backquote a name that holds a dot or a comma)", list)
				}
				rest = rest[1:]
			}
			if n[i], rest, _, err = namePartUntil(rest, ".,`"); err != nil {
				return nil, fmt.Errorf("%q: %v", list, err)
			}
		}
		out = append(out, n)
		rest = strings.TrimSpace(rest)
		if rest != "" {
			if rest[0] != ',' {
				return nil, fmt.Errorf("%q: unexpected %q after a column name (backquote a name that holds a dot or a comma)", list, rest)
			}
			rest = strings.TrimSpace(rest[1:])
		}
	}
	return out, nil
}

// QuoteName writes db.table the way ParseTableName and NewFilter read it
// back literally: both parts backquoted.
func QuoteName(db, table string) string {
	q := func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
	return q(db) + "." + q(table)
}

// splitName splits db.table, reporting which parts were backquoted.
func splitName(s string) (db, table string, dbq, tq bool, err error) {
	db, rest, dbq, err := namePart(s)
	if err != nil {
		return
	}
	if rest == "" || rest[0] != '.' {
		err = fmt.Errorf("want db.table, e.g. shop.orders, shop.* or `my.db`.`my.table` (backquote a name that holds a dot)")
		return
	}
	table, rest, tq, err = namePart(rest[1:])
	if err != nil {
		return
	}
	if rest != "" {
		err = fmt.Errorf("unexpected %q after the table name (backquote a name that holds a dot)", rest)
	}
	return
}

// namePart reads an unquoted name up to the next dot, or a backquoted one
// (“ is a backquote inside it).
func namePart(s string) (name, rest string, quoted bool, err error) {
	return namePartUntil(s, ".`")
}

// namePartUntil is namePart where an unquoted name ends at any of stop
// (which holds "`").
func namePartUntil(s, stop string) (name, rest string, quoted bool, err error) {
	if s == "" {
		return "", "", false, fmt.Errorf("want db.table, e.g. shop.orders or shop.*: a name is empty")
	}
	if s[0] != '`' {
		end := strings.IndexAny(s, stop)
		if end < 0 {
			end = len(s)
		}
		if end < len(s) && s[end] == '`' {
			return "", "", false, fmt.Errorf("a backquote inside an unquoted name: quote the whole name, doubling the backquote (`a``b`)")
		}
		if end == 0 {
			return "", "", false, fmt.Errorf("want db.table, e.g. shop.orders or shop.*: a name is empty")
		}
		return s[:end], s[end:], false, nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '`' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '`' {
			b.WriteByte('`')
			i++
			continue
		}
		if b.Len() == 0 {
			return "", "", false, fmt.Errorf("an empty quoted name")
		}
		return b.String(), s[i+1:], true, nil
	}
	return "", "", false, fmt.Errorf("a backquoted name is not closed")
}

// Table reports whether db.table passes the filter.
func (f *Filter) Table(db, table string) bool {
	if f == nil {
		return true
	}
	in := len(f.include) == 0
	for _, p := range f.include {
		if p.db.match(db) && p.table.match(table) {
			p.used, in = true, true
		}
	}
	out := false
	for _, p := range f.exclude {
		if p.db.match(db) && p.table.match(table) {
			p.used, out = true, true
		}
	}
	return in && !out
}

// Excluded reports whether an --exclude-tables pattern matches db.table.
func (f *Filter) Excluded(db, table string) bool {
	if f == nil {
		return false
	}
	for _, p := range f.exclude {
		if p.db.match(db) && p.table.match(table) {
			return true
		}
	}
	return false
}

// noteTable records a table name read from a TABLE_MAP, to find names
// that differ only in letter case.
func (f *Filter) noteTable(db, table string) {
	if f == nil || len(f.include)+len(f.exclude) == 0 {
		return
	}
	name := db + "." + table
	key := strings.ToLower(name)
	if f.seen == nil {
		f.seen, f.twin = map[string]string{}, map[string]string{}
	}
	if first, ok := f.seen[key]; !ok {
		f.seen[key] = name
	} else if first != name {
		f.twin[key] = name
	}
}

// Includes reports whether --tables patterns were given (without them,
// every table passes that no --exclude-tables pattern matches).
func (f *Filter) Includes() bool { return f != nil && len(f.include) > 0 }

// active reports whether the filter selects anything less than all.
func (f *Filter) active() bool { return f != nil && len(f.include)+len(f.exclude) > 0 }

// Database reports whether some table of db can pass the filter (any) and
// whether every table of db passes it (all).
func (f *Filter) Database(db string) (any, all bool) {
	if !f.active() {
		return true, true
	}
	any, all = len(f.include) == 0, len(f.include) == 0
	for _, p := range f.include {
		if p.db.match(db) {
			p.used, any = true, true
			all = all || p.table.star()
		}
	}
	for _, p := range f.exclude {
		if p.db.match(db) {
			p.used, all = true, false
			if p.table.star() {
				any = false
			}
		}
	}
	return any, all
}

// Unmatched returns a warning for each pattern that matched no table the
// input mentioned (a misspelled or wrongly quoted pattern selects
// nothing, silently otherwise), and for names in the input that differ
// only in letter case. in says where tables were looked for ("in the
// input").
func (f *Filter) Unmatched(in string) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, list := range []struct {
		flag string
		ps   []*pattern
	}{{"--tables", f.include}, {"--exclude-tables", f.exclude}} {
		for _, p := range list.ps {
			if !p.used {
				out = append(out, fmt.Sprintf("%s %s matched no table %s (a name holding a dot or a backquote must be backquoted: `my.db`.`t`)", list.flag, p.text, in))
			}
		}
	}
	keys := make([]string, 0, len(f.twin))
	for k := range f.twin {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, fmt.Sprintf("the input has tables %s and %s, whose names differ only in letter case: table patterns match names case-insensitively and cannot tell them apart", f.seen[k], f.twin[k]))
	}
	return out
}

// Add selects db.table too, literally, from the next TABLE_MAP on (a
// table an incremental snapshot was asked for). It reports false for a
// table --exclude-tables excludes: that stays excluded.
func (f *Filter) Add(db, table string) bool {
	if f == nil || f.Table(db, table) {
		return true
	}
	for _, p := range f.exclude {
		if p.db.match(db) && p.table.match(table) {
			return false
		}
	}
	f.include = append(f.include, &pattern{text: QuoteName(db, table), used: true,
		db: part{strings.ToLower(db), true}, table: part{strings.ToLower(table), true}})
	return true
}
