package pipeline

import (
	"fmt"
	"path"
	"strings"
)

// Filter selects tables by "db.table" glob patterns (path.Match syntax:
// *, ?, [...]). A table passes when it matches an include pattern (or
// there are none) and no exclude pattern.
type Filter struct {
	include, exclude []pattern
}

type pattern struct{ db, table string }

// NewFilter checks and compiles the patterns.
func NewFilter(include, exclude []string) (*Filter, error) {
	f := &Filter{}
	for _, list := range []struct {
		in  []string
		out *[]pattern
	}{{include, &f.include}, {exclude, &f.exclude}} {
		for _, p := range list.in {
			db, table, ok := strings.Cut(p, ".")
			if !ok {
				return nil, fmt.Errorf("table pattern %q: want db.table, e.g. shop.orders or shop.*", p)
			}
			for _, part := range []string{db, table} {
				if _, err := path.Match(part, ""); err != nil {
					return nil, fmt.Errorf("table pattern %q: %v", p, err)
				}
			}
			*list.out = append(*list.out, pattern{db, table})
		}
	}
	return f, nil
}

// Table reports whether db.table passes the filter.
func (f *Filter) Table(db, table string) bool {
	if f == nil {
		return true
	}
	if len(f.include) > 0 && !matchAny(f.include, db, table) {
		return false
	}
	return !matchAny(f.exclude, db, table)
}

// DB reports whether statements whose default database is db may concern
// selected tables: some include pattern's database part matches it.
func (f *Filter) DB(db string) bool {
	if f == nil || len(f.include) == 0 {
		return true
	}
	for _, p := range f.include {
		if ok, _ := path.Match(p.db, db); ok {
			return true
		}
	}
	return false
}

func matchAny(ps []pattern, db, table string) bool {
	for _, p := range ps {
		okDB, _ := path.Match(p.db, db)
		okT, _ := path.Match(p.table, table)
		if okDB && okT {
			return true
		}
	}
	return false
}
