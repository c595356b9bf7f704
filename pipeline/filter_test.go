package pipeline

import (
	"strings"
	"testing"
)

func TestParseTableName(t *testing.T) {
	for _, c := range []struct{ in, db, table, err string }{
		{"shop.orders", "shop", "orders", ""},
		{"`d.b`.`x.y`", "d.b", "x.y", ""},
		{"`a``b`.t", "a`b", "t", ""},
		{"shop.`o``r`", "shop", "o`r", ""},
		{"shop", "", "", "want db.table"},
		{"a.b.c", "", "", "unexpected"},
		{"`d.b.t", "", "", "not closed"},
		{"sh`op.t", "", "", "backquote inside"},
		{".t", "", "", "empty"},
		{"``.t", "", "", "empty"},
	} {
		db, table, err := ParseTableName(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || db != c.db || table != c.table {
			t.Errorf("%s: %q %q %v", c.in, db, table, err)
		}
		if db2, t2, _ := ParseTableName(QuoteName(db, table)); db2 != db || t2 != table {
			t.Errorf("%s: QuoteName does not read back", c.in)
		}
	}
}

func TestFilter(t *testing.T) {
	f, err := NewFilter([]string{"shop.*", "`d.b`.`x*`", "HR.Emp"}, []string{"shop.promo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		db, table string
		want      bool
	}{
		{"shop", "orders", true}, {"SHOP", "Orders", true}, {"shop", "promo", false},
		{"d.b", "x*", true}, {"d.b", "xy", false}, {"hr", "emp", true}, {"hr", "dept", false},
	} {
		if got := f.Table(c.db, c.table); got != c.want {
			t.Errorf("%s.%s: %v", c.db, c.table, got)
		}
	}
	if any, all := f.Database("shop"); !any || all {
		t.Errorf("shop: any %v all %v", any, all)
	}
	if any, all := f.Database("hr"); !any || all {
		t.Errorf("hr: any %v all %v", any, all)
	}
	if any, _ := f.Database("other"); any {
		t.Errorf("other: any")
	}
	f.noteTable("s", "T")
	f.noteTable("s", "t")
	if u := strings.Join(f.Unmatched("in the input"), "\n"); strings.Contains(u, "matched no table") || !strings.Contains(u, "s.T and s.t") {
		t.Errorf("Unmatched: %s", u)
	}
	g, _ := NewFilter([]string{"shop.order"}, nil)
	g.Table("shop", "orders")
	if u := g.Unmatched("on the server"); len(u) != 1 || !strings.Contains(u[0], "--tables shop.order matched no table on the server") {
		t.Errorf("Unmatched: %v", u)
	}
	// Includes and Excluded, for a snapshot's reasons.
	h, _ := NewFilter(nil, []string{"shop.x*"})
	var nilF *Filter
	if !g.Includes() || h.Includes() || nilF.Includes() {
		t.Error("Includes")
	}
	if !h.Excluded("SHOP", "x1") || h.Excluded("shop", "y") || g.Excluded("shop", "order") || nilF.Excluded("a", "b") {
		t.Error("Excluded")
	}
}

func TestParseColumnNames(t *testing.T) {
	got, err := ParseColumnNames("shop.orders.total, `d.b`.`x``y`.`c,1`,a.b.c")
	if err != nil || len(got) != 3 || got[0] != [3]string{"shop", "orders", "total"} || got[1] != [3]string{"d.b", "x`y", "c,1"} || got[2] != [3]string{"a", "b", "c"} {
		t.Errorf("%q %v", got, err)
	}
	for _, bad := range []string{"shop.orders", "a.b.c.d", "a.b.`c", ".b.c"} {
		if _, err := ParseColumnNames(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestFilterAdd(t *testing.T) {
	f, err := NewFilter([]string{"shop.orders"}, []string{"shop.secret"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Table("shop", "items") {
		t.Fatal("shop.items passes before Add")
	}
	if !f.Add("shop", "items") || !f.Table("shop", "items") || !f.Table("shop", "orders") {
		t.Error("Add did not select shop.items, or lost shop.orders")
	}
	if f.Add("shop", "secret") || f.Table("shop", "secret") {
		t.Error("Add selected an excluded table")
	}
	if !f.Add("a*b", "t?") || !f.Table("a*b", "t?") || f.Table("axb", "tt") {
		t.Error("Add is not literal")
	}
	for _, w := range f.Unmatched("in the input") {
		if strings.Contains(w, "items") {
			t.Errorf("an added table is reported unmatched: %s", w)
		}
	}
}
