package e2e

// TestFormatsDifferential: random tables of every column type, random
// inserts, updates and deletes under binlog_row_image FULL, MINIMAL and
// NOBLOB; every value of every image that 'read' writes, as JSON lines
// and as Debezium, Maxwell and Canal envelopes, is compared with the
// server's own rendering of the row just before and just after the
// statement, and the columns each image carries with what the server
// logs for that binlog_row_image (absent columns absent, never null).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// fxTable is one random table: id INT PRIMARY KEY, n INT (changed by
// every update, so that each one is logged), then its columns.
type fxTable struct {
	name string
	cols []fxCol
	live []int
	next int
}

// fxStep is one statement, on one row, and the server's row around it.
type fxStep struct {
	sql       string
	t         *fxTable
	op        string             // insert, update, delete
	set       []string           // the columns the statement assigns
	pre, post map[string]*string // the row before and after (nil: none)
}

func (t *fxTable) names() []string {
	n := []string{"id", "n"}
	for _, c := range t.cols {
		n = append(n, c.name)
	}
	return n
}

func (t *fxTable) col(name string) *fxCol {
	switch name {
	case "id", "n":
		return &fxCol{name: name, kind: fxInt, nullable: name == "n"}
	}
	for i := range t.cols {
		if t.cols[i].name == name {
			return &t.cols[i]
		}
	}
	panic(name)
}

// row reads row id as the server renders it (nil when it is not there).
func (t *fxTable) row(tb testing.TB, srv *testserver.Server, id int) map[string]*string {
	names := t.names()
	exprs := make([]string, len(names))
	for i, n := range names {
		exprs[i] = t.col(n).expr()
	}
	rows := srv.QueryStrings(tb, fmt.Sprintf("SELECT %s FROM fx.%s WHERE id = %d", strings.Join(exprs, ", "), t.name, id))
	if len(rows) == 0 {
		return nil
	}
	m := map[string]*string{}
	for i, n := range names {
		m[n] = rows[0][i]
	}
	return m
}

func fxTables(g *rpGen, pool []fxCol) []*fxTable {
	var ts []*fxTable
	for k := 0; k < 4; k++ {
		t := &fxTable{name: fmt.Sprintf("t%d", k)}
		for i, c := range pool {
			if k == 0 || (i+k)%3 == 0 || g.chance(0.2) {
				t.cols = append(t.cols, c)
			}
		}
		if k > 0 { // the order of columns is random too
			g.r.Shuffle(len(t.cols), func(i, j int) { t.cols[i], t.cols[j] = t.cols[j], t.cols[i] })
		}
		ts = append(ts, t)
	}
	return ts
}

func (t *fxTable) create() string {
	defs := []string{"id INT NOT NULL PRIMARY KEY", "n INT"}
	for _, c := range t.cols {
		defs = append(defs, rpQ(c.name)+" "+c.ddl)
	}
	return "CREATE TABLE fx." + t.name + " (" + strings.Join(defs, ", ") + ")"
}

func (c *fxCol) value(g *rpGen) string {
	if c.nullable && g.chance(0.1) {
		return "NULL"
	}
	return c.gen(g)
}

// step makes a random statement on t.
func (t *fxTable) step(g *rpGen) fxStep {
	op := "insert"
	if len(t.live) > 3 {
		op = []string{"insert", "update", "update", "update", "delete"}[g.pick(5)]
	}
	switch op {
	case "insert":
		id := t.next
		t.next++
		t.live = append(t.live, id)
		set := []string{"id", "n"}
		vals := []string{strconv.Itoa(id), strconv.Itoa(g.pick(100))}
		all := g.chance(0.5)
		for _, c := range t.cols {
			if all || g.chance(0.4) {
				set = append(set, c.name)
				vals = append(vals, c.value(g))
			}
		}
		cols := make([]string, len(set))
		for i, s := range set {
			cols[i] = rpQ(s)
		}
		return fxStep{sql: fmt.Sprintf("INSERT INTO fx.%s (%s) VALUES (%s)", t.name, strings.Join(cols, ", "), strings.Join(vals, ", ")),
			t: t, op: op, set: set}
	case "update":
		id := t.live[g.pick(len(t.live))]
		set := []string{"n"}
		assign := []string{"n = IFNULL(n, 0) + 1"}
		for _, i := range g.r.Perm(len(t.cols))[:1+g.pick(4)] {
			c := &t.cols[i]
			set = append(set, c.name)
			assign = append(assign, rpQ(c.name)+" = "+c.value(g))
		}
		return fxStep{sql: fmt.Sprintf("UPDATE fx.%s SET %s WHERE id = %d", t.name, strings.Join(assign, ", "), id), t: t, op: op, set: set}
	}
	i := g.pick(len(t.live))
	id := t.live[i]
	t.live = append(t.live[:i], t.live[i+1:]...)
	return fxStep{sql: fmt.Sprintf("DELETE FROM fx.%s WHERE id = %d", t.name, id), t: t, op: op}
}

func (s *fxStep) id() int {
	var id int
	fmt.Sscanf(s.sql[strings.LastIndex(s.sql, "id = ")+5:], "%d", &id)
	if s.op == "insert" {
		fmt.Sscanf(s.sql[strings.Index(s.sql, "VALUES (")+8:], "%d", &id)
	}
	return id
}

// images are the columns the before and after images carry, in table
// order, under binlog_row_image image (nil: no such image).
func (s *fxStep) images(image string) (before, after []string) {
	all := s.t.names()
	assigned := map[string]bool{}
	for _, c := range s.set {
		assigned[c] = true
	}
	pick := func(keep func(c *fxCol) bool) []string {
		out := []string{}
		for _, n := range all {
			if keep(s.t.col(n)) {
				out = append(out, n)
			}
		}
		return out
	}
	var full, noBlob, minimal []string
	full = all
	noBlob = pick(func(c *fxCol) bool { return !c.blob })
	minimal = pick(func(c *fxCol) bool { return assigned[c.name] })
	key := []string{"id"}
	switch {
	case image == "FULL":
		before, after = full, full
	case image == "NOBLOB":
		before, after = noBlob, pick(func(c *fxCol) bool { return !c.blob || assigned[c.name] })
	default:
		before, after = key, minimal
	}
	switch s.op {
	case "insert":
		return nil, after
	case "delete":
		return before, nil
	}
	return before, after
}

// fxSeed: the workload's seed, fixed unless FX_SEED sets another.
func fxSeed(t *testing.T) *rpGen { return seededGen(t, "FX_SEED", 20261203) }

func TestFormatsDifferential(t *testing.T) {
	pool := fxPool()
	for _, image := range []string{"FULL", "MINIMAL", "NOBLOB"} {
		t.Run(image, func(t *testing.T) {
			g := fxSeed(t)
			srv := testserver.Start(t, testserver.Options{RowImage: image})
			srv.Exec(t, "CREATE DATABASE fx", "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'")
			ts := fxTables(g, pool)
			for _, tb := range ts {
				srv.Exec(t, tb.create())
			}
			var steps []fxStep
			for i := 0; i < 160; i++ {
				s := ts[g.pick(len(ts))].step(g)
				id := s.id()
				s.pre = s.t.row(t, srv, id)
				srv.Exec(t, s.sql)
				s.post = s.t.row(t, srv, id)
				steps = append(steps, s)
			}
			index := srv.BinlogIndex()
			for _, format := range []string{"json", "maxwell", "canal", "debezium"} {
				out, errText, code := runCLI(t, nil, "read", index, "--format", format)
				if format == "debezium" && image != "FULL" {
					if code == 0 || !strings.Contains(errText, "--format debezium writes whole rows and cannot tell an absent column from NULL") {
						t.Errorf("%s: read --format debezium: exit %d, want a refusal of the partial image: %s", image, code, errText)
					}
					continue
				}
				if code != 0 {
					t.Fatalf("%s: read --format %s: exit %d: %s", image, format, code, errText)
				}
				fxCheck(t, image, format, out, steps)
			}
		})
	}
}

// fxRow is one change as a format wrote it: its op and images (nil:
// none), Maxwell's and Canal's old (nil: none).
type fxRow struct {
	op                 string
	before, after, old *Obj
	hasOld             bool
	line               string
}

// fxRows parses out into the changes of database fx.
func fxRows(t *testing.T, format string, out []byte) []fxRow {
	var rows []fxRow
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		v, err := parseJSONLine(line)
		if err != nil {
			t.Fatalf("%s: %v: %s", format, err, line)
		}
		o := v.(*Obj)
		obj := func(x any) *Obj { r, _ := x.(*Obj); return r }
		r := fxRow{line: line}
		switch format {
		case "json":
			if o.M["db"] != "fx" || o.M["op"] == "ddl" {
				continue
			}
			r.op, r.before, r.after = o.M["op"].(string), obj(o.M["before"]), obj(o.M["after"])
		case "debezium":
			src := obj(o.M["source"])
			if src == nil || src.M["db"] != "fx" {
				continue
			}
			r.op = map[any]string{"c": "insert", "u": "update", "d": "delete"}[o.M["op"]]
			r.before, r.after = obj(o.M["before"]), obj(o.M["after"])
		case "maxwell":
			if o.M["database"] != "fx" {
				continue
			}
			r.op = o.M["type"].(string)
			r.after = obj(o.M["data"])
			r.old, r.hasOld = obj(o.M["old"]), o.Has("old")
		case "canal":
			if o.M["database"] != "fx" || o.M["isDdl"] == true {
				continue
			}
			r.op = strings.ToLower(o.M["type"].(string))
			data, _ := o.M["data"].([]any)
			if len(data) != 1 {
				t.Fatalf("canal: data holds %d rows, want 1: %s", len(data), line)
			}
			r.after = obj(data[0])
			r.hasOld = o.M["old"] != nil
			if old, ok := o.M["old"].([]any); ok && len(old) == 1 {
				r.old = obj(old[0])
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func parseJSONLine(line string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*Obj); !ok {
		return nil, fmt.Errorf("not an object")
	}
	return v, nil
}

// fxCheck compares each change format wrote with its statement.
func fxCheck(t *testing.T, image, format string, out []byte, steps []fxStep) {
	t.Helper()
	rows := fxRows(t, format, out)
	if len(rows) != len(steps) {
		t.Fatalf("%s %s: %d changes, want %d (one per statement)", image, format, len(rows), len(steps))
	}
	errs := 0
	for i, s := range steps {
		r := rows[i]
		what := fmt.Sprintf("%s %s %q", image, format, clip(s.sql))
		before, after := s.images(image)
		fail := func(f string, a ...any) {
			errs++
			if errs <= 40 {
				t.Errorf("%s: %s\n  line: %s", what, fmt.Sprintf(f, a...), clip(r.line))
			}
		}
		if r.op != s.op {
			fail("op %q, want %q", r.op, s.op)
			continue
		}
		check := func(name string, got *Obj, cols []string, server map[string]*string) {
			if !equalStrings(got.Keys, cols) {
				fail("%s has columns %q, want %q", name, got.Keys, cols)
			}
			for _, c := range cols {
				v, ok := got.M[c]
				if !ok {
					continue
				}
				want := s.t.col(c).want(format, server[c])
				if format == "canal" && want != nil {
					if _, isStr := want.(string); !isStr {
						want = fmt.Sprint(want)
					}
				}
				if !fxEqual(v, want) {
					srvText := "NULL"
					if p := server[c]; p != nil {
						srvText = strconv.Quote(*p)
					}
					fail("%s.%s = %s, want %s (server %s = %s)", name, c, clip(show(v)), clip(show(want)), s.t.col(c).expr(), clip(srvText))
				}
			}
		}
		switch format {
		case "json", "debezium":
			if (before == nil) != (r.before == nil) || (after == nil) != (r.after == nil) {
				fail("images before=%v after=%v, want before=%v after=%v", r.before != nil, r.after != nil, before != nil, after != nil)
				continue
			}
			if before != nil {
				check("before", r.before, before, s.pre)
			}
			if after != nil {
				check("after", r.after, after, s.post)
			}
		default:
			// data: the after image, completed from the before image
			// (the before image for a delete); old: what changed.
			data, src := after, s.post
			if s.op == "delete" {
				data, src = before, s.pre
			}
			has := map[string]bool{}
			for _, c := range data {
				has[c] = true
			}
			inBefore := map[string]bool{}
			for _, c := range before {
				inBefore[c] = true
			}
			var cols []string
			server := map[string]*string{}
			for _, c := range s.t.names() {
				switch {
				case has[c]:
					cols = append(cols, c)
					server[c] = src[c]
				case inBefore[c]:
					cols = append(cols, c)
					server[c] = s.pre[c]
				}
			}
			if r.after == nil {
				fail("no data")
				continue
			}
			check("data", r.after, cols, server)
			if s.op != "update" {
				if r.hasOld {
					fail("old on a %s", s.op)
				}
				continue
			}
			var changed []string
			for _, c := range s.t.names() {
				if has[c] && inBefore[c] && !fxSameText(s.pre[c], s.post[c]) {
					changed = append(changed, c)
				}
			}
			if r.old == nil {
				fail("no old on an update")
				continue
			}
			check("old", r.old, changed, s.pre)
		}
	}
	if errs > 40 {
		t.Errorf("%s %s: %d differences in all", image, format, errs)
	}
}

func fxSameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
