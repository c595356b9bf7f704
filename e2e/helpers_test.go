package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// Obj is a decoded JSON object that remembers its key order.
type Obj struct {
	Keys []string
	M    map[string]any
}

// Has reports whether key is present (a null value counts as present).
func (o *Obj) Has(key string) bool {
	if o == nil {
		return false
	}
	_, ok := o.M[key]
	return ok
}

// Rec is one decoded JSON line.
type Rec struct {
	Line  string
	Keys  []string // top-level keys in order
	Op    string
	DB    string
	Table string
	PK    []string
	SQL   string
	// Before and After are nil when the line has no such key.
	Before, After *Obj
	TS            string
	File          string
	Offset        uint64
	Row           int
	GTID          string
}

// parseValue reads one JSON value from dec, objects as *Obj, numbers as
// json.Number (dec must have UseNumber set).
func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := &Obj{M: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				if _, dup := o.M[k]; dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.Keys = append(o.Keys, k)
				o.M[k] = v
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %v", tok)
	default:
		return tok, nil // string, json.Number, bool, nil
	}
}

// ParseLines parses JSON lines output. Every line must be one complete
// JSON object.
func ParseLines(out []byte) ([]Rec, error) {
	var recs []Rec
	if len(out) == 0 {
		return nil, nil
	}
	if out[len(out)-1] != '\n' {
		return nil, fmt.Errorf("output does not end with a newline: %q", tail(out))
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		v, err := parseValue(dec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v: %s", i+1, err, line)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("line %d: trailing data: %s", i+1, line)
		}
		o, ok := v.(*Obj)
		if !ok {
			return nil, fmt.Errorf("line %d is not an object: %s", i+1, line)
		}
		r, err := toRec(o)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v: %s", i+1, err, line)
		}
		r.Line = line
		recs = append(recs, r)
	}
	return recs, nil
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

func toRec(o *Obj) (Rec, error) {
	r := Rec{Keys: o.Keys}
	str := func(k string) string { s, _ := o.M[k].(string); return s }
	r.Op, r.DB, r.Table, r.SQL, r.TS, r.GTID = str("op"), str("db"), str("table"), str("sql"), str("ts"), str("gtid")
	if pk, ok := o.M["pk"].([]any); ok {
		r.PK = []string{}
		for _, p := range pk {
			s, ok := p.(string)
			if !ok {
				return r, fmt.Errorf("pk element %v is not a string", p)
			}
			r.PK = append(r.PK, s)
		}
	}
	if b, ok := o.M["before"]; ok {
		if r.Before, ok = b.(*Obj); !ok {
			return r, fmt.Errorf("before is %T", b)
		}
	}
	if a, ok := o.M["after"]; ok {
		if r.After, ok = a.(*Obj); !ok {
			return r, fmt.Errorf("after is %T", a)
		}
	}
	pos, ok := o.M["pos"].(*Obj)
	if !ok {
		return r, fmt.Errorf("no pos object")
	}
	r.File, _ = pos.M["file"].(string)
	off, _ := pos.M["offset"].(json.Number)
	n, err := strconv.ParseUint(string(off), 10, 64)
	if err != nil {
		return r, fmt.Errorf("pos.offset %q: %v", off, err)
	}
	r.Offset = n
	row, _ := pos.M["row"].(json.Number)
	ri, err := strconv.Atoi(string(row))
	if err != nil {
		return r, fmt.Errorf("pos.row %q: %v", row, err)
	}
	r.Row = ri
	var want []string
	switch r.Op {
	case "insert":
		want = []string{"op", "db", "table", "pk", "after", "ts", "pos"}
	case "update":
		want = []string{"op", "db", "table", "pk", "before", "after", "ts", "pos"}
	case "delete":
		want = []string{"op", "db", "table", "pk", "before", "ts", "pos"}
	case "ddl":
		want = []string{"op", "db", "sql", "kind"}
		if o.Has("tables") {
			want = append(want, "tables")
		}
		if o.Has("databases") {
			want = append(want, "databases")
		}
		want = append(want, "ts", "pos")
	default:
		return r, fmt.Errorf("unknown op %q", r.Op)
	}
	if o.Has("gtid") {
		want = append(want, "gtid")
	}
	if !reflect.DeepEqual(o.Keys, want) {
		return r, fmt.Errorf("keys %v, want %v (README: keys in this order)", o.Keys, want)
	}
	return r, nil
}

// Decode reads files through the library path (binlog.OpenFiles →
// pipeline → sink/jsonl) and returns the JSON output and the run's error.
func Decode(files []string, opts pipeline.Options) ([]byte, error) {
	src, err := binlog.OpenFiles(files, change.Position{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var buf bytes.Buffer
	sk := jsonl.New(&buf, jsonl.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := pipeline.New(src, sk, opts).Run(ctx)
	if err := sk.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	return buf.Bytes(), runErr
}

// DecodeServer decodes every binlog of srv (with DDL records) and fails
// the test on any error.
func DecodeServer(t testing.TB, srv *testserver.Server) []Rec {
	t.Helper()
	out, err := Decode([]string{srv.BinlogIndex()}, pipeline.Options{DDL: true})
	if err != nil {
		t.Fatalf("decoding the binlogs of %s: %v", srv.Dir, err)
	}
	recs, err := ParseLines(out)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Rows returns the row records of db.table (not DDL), in output order.
func Rows(recs []Rec, db, table string) []Rec {
	var out []Rec
	for _, r := range recs {
		if r.Op != "ddl" && r.DB == db && r.Table == table {
			out = append(out, r)
		}
	}
	return out
}

// clip shortens long values in messages.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// firstDiff describes where two strings first differ, by rune.
func firstDiff(got, want string) string {
	g, w := []rune(got), []rune(want)
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	at := func(r []rune) string {
		if i >= len(r) {
			return "end"
		}
		return fmt.Sprintf("U+%04X %q (bytes % x)", r[i], string(r[i:min(i+8, len(r))]), string(r[i]))
	}
	return fmt.Sprintf("rune %d: decoded %s, want %s", i, at(g), at(w))
}

// one runs a query that returns one value.
func one(t testing.TB, srv *testserver.Server, sql string) *string {
	t.Helper()
	rows := srv.QueryStrings(t, sql)
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %d rows", sql, len(rows))
	}
	return rows[0][0]
}

// tableColumns returns the table's column names in table order, from the
// server's information_schema.
func tableColumns(t testing.TB, srv *testserver.Server, db, table string) []string {
	t.Helper()
	var cols []string
	for _, r := range srv.QueryStrings(t, fmt.Sprintf(
		"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' ORDER BY ORDINAL_POSITION", db, table)) {
		cols = append(cols, *r[0])
	}
	if len(cols) == 0 {
		t.Fatalf("table %s.%s has no columns on the server", db, table)
	}
	return cols
}

// primaryKey returns the table's primary key columns in key order, from
// the server's information_schema ([] without a primary key).
func primaryKey(t testing.TB, srv *testserver.Server, db, table string) []string {
	t.Helper()
	pk := []string{}
	for _, r := range srv.QueryStrings(t, fmt.Sprintf(
		"SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", db, table)) {
		pk = append(pk, *r[0])
	}
	return pk
}

// CheckInserts compares the insert records of db.table with the table's
// rows on the server, matched on the key column (whose JSON value is a
// number or a string). oracles gives every column's oracle; a column
// without one is compared with Num(column). Each record's "after" must
// list wantCols (the columns the binlog carries, in table order); nil
// means every column, in table order, as information_schema lists them.
// It returns the number of rows compared.
func CheckInserts(t testing.TB, srv *testserver.Server, recs []Rec, db, table, key string, wantCols []string, oracles map[string]Oracle) int {
	t.Helper()
	rows := Rows(recs, db, table)
	if len(rows) == 0 {
		t.Errorf("%s.%s: no records decoded", db, table)
		return 0
	}
	if wantCols == nil {
		wantCols = tableColumns(t, srv, db, table)
	}
	pk := primaryKey(t, srv, db, table)
	exprs := []string{"CAST(`" + key + "` AS CHAR)"}
	for _, c := range wantCols {
		o, ok := oracles[c]
		if !ok {
			o = Num("`" + c + "`")
		}
		exprs = append(exprs, o.Expr)
	}
	want := map[string][]*string{}
	for _, r := range srv.QueryStrings(t, fmt.Sprintf("SELECT %s FROM `%s`.`%s`", strings.Join(exprs, ", "), db, table)) {
		want[*r[0]] = r[1:]
	}
	n := 0
	for _, r := range rows {
		if r.Op != "insert" {
			continue
		}
		if !reflect.DeepEqual(r.PK, pk) {
			t.Errorf("%s.%s: pk %q, want %q (information_schema)", db, table, r.PK, pk)
		}
		if !reflect.DeepEqual(r.After.Keys, wantCols) {
			t.Errorf("%s.%s: after has columns %q, want %q\n%s", db, table, r.After.Keys, wantCols, r.Line)
			continue
		}
		var k string
		switch v := r.After.M[key].(type) {
		case json.Number:
			k = string(v)
		case string:
			k = v
		default:
			t.Errorf("%s.%s: key %s is %T", db, table, key, v)
			continue
		}
		w, ok := want[k]
		if !ok {
			t.Errorf("%s.%s: decoded row %s=%s is not on the server", db, table, key, k)
			continue
		}
		delete(want, k)
		n++
		for i, c := range wantCols {
			o, ok := oracles[c]
			if !ok {
				o = Num("`" + c + "`")
			}
			exp := o.Want(w[i])
			if got := r.After.M[c]; !equalJSON(got, exp) {
				srvText := "NULL"
				if w[i] != nil {
					srvText = strconv.Quote(*w[i])
				}
				t.Errorf("%s.%s %s=%s column %s: decoded %s, want %s (server %s = %s)",
					db, table, key, k, c, clip(show(got)), clip(show(exp)), o.Expr, clip(srvText))
				if g, ok := got.(string); ok {
					if w, ok := exp.(string); ok {
						t.Logf("  first difference: %s", firstDiff(g, w))
					}
				}
			}
		}
	}
	for k := range want {
		t.Errorf("%s.%s: server row %s=%s was not decoded", db, table, key, k)
	}
	return n
}

var (
	cliOnce sync.Once
	cliDir  string
	cliPath string
	cliErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// cliBinary builds cmd/binlogcdc once per test run.
func cliBinary(t testing.TB) string {
	t.Helper()
	cliOnce.Do(func() {
		cliDir, cliErr = os.MkdirTemp("", "binlogcdc-e2e")
		if cliErr != nil {
			return
		}
		cliPath = filepath.Join(cliDir, "binlogcdc")
		out, err := exec.Command(goTool(), "build", "-o", cliPath, "github.com/binlogcdc/binlogcdc/cmd/binlogcdc").CombinedOutput()
		if err != nil {
			cliErr = fmt.Errorf("go build ./cmd/binlogcdc: %v: %s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// goTool returns the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// runCLI runs the built binlogcdc binary with extra environment entries.
func runCLI(t testing.TB, env []string, args ...string) (stdout []byte, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(cliBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.Bytes(), errb.String(), code
}
