package e2e

// Maxwell's own JSON test suite (issue 24, section 4): the SQL and the
// rows Maxwell's tests expect for it (testdata/maxwell, transcribed
// unchanged from zendesk/maxwell's src/test/resources/sql/json), run on a
// private MariaDB and read back with 'binlogcdc read --format maxwell'.
// Each expected row must be among the rows binlogcdc writes for its
// file, compared as Maxwell's harness compares them (MaxwellTestJSON:
// the whole row map, without ts, xid, xoffset and commit).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// mxKnown are the expected rows binlogcdc does not write as Maxwell
// does, by file and the assertion's index in it, with the reason (the
// README's "Other formats" lists them). The test fails when one of them
// passes, so that the list stays true.
var mxKnown = map[string]string{}

// mxSkipped are Maxwell's test files not run here, with their number of
// assertions and the reason. The bootstrap-* files run in
// TestMaxwellSuiteBootstrap (maxwell_bootstrap_test.go).
var mxSkipped = []struct {
	file    string
	asserts int
	reason  string
}{
	{"test_javascript_filters, test_javascript_filters_rich_values", 3, "binlogcdc has no JavaScript filters"},
	{"test_case_insensitive", 1, "not run by Maxwell's own tests (no @Test uses it); it expects lower-cased names from a server with lower_case_table_names"},
}

// mxCase is one of Maxwell's test files: its SQL and expected rows.
type mxCase struct {
	sql     []string
	asserts []map[string]any
	raw     []string
}

// mxUnquoted matches the unquoted keys of Maxwell's relaxed JSON
// (Jackson's ALLOW_UNQUOTED_FIELD_NAMES).
var mxUnquoted = regexp.MustCompile(`([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:`)

// parseMxCase reads a test file as Maxwell's MaxwellTestJSON does: blank
// lines skipped, "-> {…}" starts an expected row, a line with leading
// white space continues the previous one; anything else is SQL.
func parseMxCase(t *testing.T, text string) mxCase {
	var c mxCase
	var buf string
	isJSON, have := false, false
	flush := func() {
		if !have {
			return
		}
		if isJSON {
			quoted := mxUnquoted.ReplaceAllString(buf, `$1"$2":`)
			m, err := mxDecode([]byte(quoted))
			if err != nil {
				t.Fatalf("expected row %q: %v", buf, err)
			}
			c.asserts, c.raw = append(c.asserts, m), append(c.raw, buf)
		} else {
			c.sql = append(c.sql, buf)
		}
		have = false
	}
	jsonLine := regexp.MustCompile(`^\s*->\s*\{`)
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if have && (line[0] == ' ' || line[0] == '\t') && !jsonLine.MatchString(line) {
			buf += " " + strings.TrimSpace(line)
			continue
		}
		flush()
		isJSON = jsonLine.MatchString(line)
		buf, have = line, true
		if isJSON {
			buf = strings.TrimSpace(strings.TrimSpace(line)[2:])
		}
	}
	flush()
	return c
}

func mxDecode(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	return m, d.Decode(&m)
}

// mxNormalize drops what Maxwell's harness drops (ts, xid, xoffset,
// commit) and the fields binlogcdc always writes that are Maxwell
// options off by default (position, gtid, server_id, primary_key,
// primary_key_columns: output_binlog_position, output_gtid_position,
// output_server_id, output_primary_keys, output_primary_key_columns), and
// an empty "old", which binlogcdc writes for Flink and Maxwell leaves out.
func mxNormalize(m map[string]any) {
	for _, k := range []string{"ts", "xid", "xoffset", "commit", "position", "gtid", "server_id", "primary_key", "primary_key_columns"} {
		delete(m, k)
	}
	if old, ok := m["old"].(map[string]any); ok && len(old) == 0 {
		delete(m, "old")
	}
}

// mxEqual compares decoded JSON, numbers by value (Jackson reads 1.50
// and 1.5 as the same double).
func mxEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, _, e1 := big.ParseFloat(string(x), 10, 200, big.ToNearestEven)
		fy, _, e2 := big.ParseFloat(string(y), 10, 200, big.ToNearestEven)
		return e1 == nil && e2 == nil && fx.Cmp(fy) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !mxEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !mxEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestMaxwellSuite runs Maxwell's JSON tests. Each file's statements run
// on their own binlog files (FLUSH BINARY LOGS between files), which
// 'read --format maxwell' then reads; test_minimal runs on a server with
// binlog_row_image=MINIMAL, as Maxwell's test sets it; test_row_query_
// log_is_on is read with --maxwell-output-row-query, as Maxwell's test
// sets output_row_query.
func TestMaxwellSuite(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/maxwell/test_*")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no testdata/maxwell/test_*")
	}
	full := testserver.Start(t, testserver.Options{})
	var minimal *testserver.Server
	total, met, known := 0, 0, 0
	for _, f := range files {
		name := filepath.Base(f)
		if name == "test_case_insensitive" {
			continue // in mxSkipped
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := parseMxCase(t, string(text))
		srv := full
		if name == "test_minimal" {
			minimal = testserver.Start(t, testserver.Options{RowImage: "MINIMAL"})
			minimal.Exec(t, "CREATE DATABASE IF NOT EXISTS test")
			srv = minimal
		}
		srv.FlushLogs(t)
		before := len(srv.BinlogFiles(t))
		for _, q := range c.sql {
			if strings.HasPrefix(q, "#") {
				continue // a comment line, which Maxwell's server answers with an empty query
			}
			srv.Exec(t, strings.TrimSuffix(strings.TrimSpace(q), ";"))
		}
		srv.FlushLogs(t)
		binlogs := srv.BinlogFiles(t)
		args := []string{"read", "--format", "maxwell"}
		if name == "test_row_query_log_is_on" {
			args = append(args, "--maxwell-output-row-query")
		}
		out, errs, code := runCLI(t, nil, append(args, binlogs[before-1:len(binlogs)-1]...)...)
		if code != 0 {
			t.Fatalf("%s: read: exit %d: %s", name, code, errs)
		}
		var rows []map[string]any
		for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			m, err := mxDecode(l)
			if err != nil {
				t.Fatalf("%s: output line %s: %v", name, l, err)
			}
			mxNormalize(m)
			rows = append(rows, m)
		}
		for i, want := range c.asserts {
			total++
			found := false
			for _, r := range rows {
				if mxEqual(want, r) {
					found = true
					break
				}
			}
			id := fmt.Sprintf("%s#%d", name, i)
			reason, isKnown := mxKnown[id]
			switch {
			case found && isKnown:
				t.Errorf("%s: met, but listed as a known difference (%s): update mxKnown and the README", id, reason)
			case found:
				met++
			case isKnown:
				known++
			default:
				t.Errorf("%s: Maxwell writes\n  %s\nbinlogcdc wrote:\n  %s", id, c.raw[i], bytes.ReplaceAll(bytes.TrimSpace(out), []byte("\n"), []byte("\n  ")))
			}
		}
	}
	skipped := 0
	for _, s := range mxSkipped {
		skipped += s.asserts
		t.Logf("skipped: %s: %d assertions: %s", s.file, s.asserts, s.reason)
	}
	t.Logf("Maxwell sql/json suite: %d assertions run, %d met, %d not met (known, with reasons: %v); %d skipped", total, met, known, mxKnown, skipped)
}
