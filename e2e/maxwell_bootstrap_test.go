package e2e

// Maxwell's bootstrap tests (testdata/maxwell/bootstrap-*, unchanged from
// zendesk/maxwell's src/test/resources/sql/json, run by its
// BootstrapIntegrationTest). Maxwell starts a bootstrap when a row is
// inserted into its maxwell.bootstrap table; binlogcdc's bootstrap is the
// 'snapshot' command. Each file's other statements run on a private
// MariaDB, each "insert into maxwell.bootstrap" becomes 'binlogcdc
// snapshot --format maxwell --tables db.table', and every expected row
// must be among the rows of 'read --format maxwell' (the file's binlog)
// and of the snapshots, compared as TestMaxwellSuite compares them.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// mxBootstrapSkipped are the expected rows binlogcdc cannot be asked
// for, by file (and type, when only some of a file's rows), with the reason.
var mxBootstrapSkipped = []struct {
	file, database string // database "": every expected row of the file
	reason         string
}{
	{"bootstrap-js-filters", "", "binlogcdc has no JavaScript filters"},
	{"bootstrap-second-server", "", "binlogcdc has one source server; Maxwell's test reads its schema from one server and bootstraps from another"},
	{"bootstrap-multiple-row-with-whereclause", "shard_1", "binlogcdc's snapshot has no WHERE clause (Maxwell's bootstrap.where_clause)"},
	{"bootstrap-with-comment", "shard_1/bootstrap", "binlogcdc's snapshot records carry no comment (Maxwell's bootstrap.comment)"},
	{"*", "maxwell", "binlogcdc has no maxwell.bootstrap table: the row inserted into it to start a bootstrap"},
}

// mxBootstrapKnown are the expected rows binlogcdc writes otherwise.
var mxBootstrapKnown = map[string]string{}

// mxMinimalTable is Maxwell's test schema table shard_1.minimal
// (src/test/resources/sql/schema/minimal.sql), which its test support
// creates before each test.
const mxMinimalTable = "CREATE TABLE `minimal` (`id` bigint(20) NOT NULL AUTO_INCREMENT, `account_id` int(11) NOT NULL, " +
	"`text_field` varchar(96), PRIMARY KEY (id, text_field)) ENGINE=InnoDB DEFAULT CHARSET=utf8"

var (
	mxBootstrapInsert   = regexp.MustCompile(`(?i)^insert into maxwell\.bootstrap set database_name = '([^']*)', table_name = '([^']*)'(.*)$`)
	mxBootstrapTruncate = regexp.MustCompile(`(?i)^truncate (table )?maxwell\.bootstrap$`)
)

func mxBootstrapSkip(file string, want map[string]any) (string, bool) {
	for _, s := range mxBootstrapSkipped {
		if s.file != "*" && s.file != file {
			continue
		}
		db, _ := want["database"].(string)
		typ, _ := want["type"].(string)
		switch {
		case s.database == "",
			s.database == db && (s.file == "*" || strings.HasPrefix(typ, "bootstrap-")),
			s.database == db+"/bootstrap" && strings.HasPrefix(typ, "bootstrap-"):
			return s.reason, true
		}
	}
	return "", false
}

func TestMaxwellSuiteBootstrap(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/maxwell/bootstrap-*")
	sort.Strings(files)
	if len(files) != 11 {
		t.Fatalf("%d testdata/maxwell/bootstrap-* files, want Maxwell's 11", len(files))
	}
	srv := testserver.Start(t, testserver.Options{})
	total, met, known, skipped := 0, 0, 0, 0
	for _, f := range files {
		name := filepath.Base(f)
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := parseMxCase(t, string(text))
		srv.Exec(t, "DROP DATABASE IF EXISTS shard_1", "CREATE DATABASE shard_1", "USE shard_1", mxMinimalTable)
		srv.FlushLogs(t)
		before := len(srv.BinlogFiles(t))
		var tables []string
		for _, q := range c.sql {
			q = strings.TrimSuffix(strings.TrimSpace(q), ";")
			if m := mxBootstrapInsert.FindStringSubmatch(q); m != nil {
				tables = append(tables, m[1]+"."+m[2]) // a WHERE clause or comment: their rows are skipped
				continue
			}
			if mxBootstrapTruncate.MatchString(q) {
				continue
			}
			srv.Exec(t, q)
		}
		srv.FlushLogs(t)
		binlogs := srv.BinlogFiles(t)
		outs := [][]byte{}
		out, errs, code := runCLI(t, nil, append([]string{"read", "--format", "maxwell"}, binlogs[before-1:len(binlogs)-1]...)...)
		if code != 0 {
			t.Fatalf("%s: read: exit %d: %s", name, code, errs)
		}
		outs = append(outs, out)
		if len(tables) > 0 && name != "bootstrap-second-server" && name != "bootstrap-js-filters" {
			args := []string{"snapshot", "--source", srv.DSN(), "--format", "maxwell"}
			for _, tb := range tables {
				args = append(args, "--tables", tb)
			}
			out, errs, code := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("%s: snapshot: exit %d: %s", name, code, errs)
			}
			outs = append(outs, out)
		}
		all := bytes.Join(outs, []byte("\n"))
		var rows []map[string]any
		for _, l := range bytes.Split(all, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
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
			if _, skip := mxBootstrapSkip(name, want); skip {
				skipped++
				continue
			}
			total++
			found := false
			for _, r := range rows {
				if mxEqual(want, r) {
					found = true
					break
				}
			}
			id := fmt.Sprintf("%s#%d", name, i)
			reason, isKnown := mxBootstrapKnown[id]
			switch {
			case found && isKnown:
				t.Errorf("%s: met, but listed as a known difference (%s): update mxBootstrapKnown and docs/formats.md", id, reason)
			case found:
				met++
			case isKnown:
				known++
			default:
				t.Errorf("%s: Maxwell writes\n  %s\nbinlogcdc wrote:\n  %s", id, c.raw[i], bytes.ReplaceAll(bytes.TrimSpace(all), []byte("\n"), []byte("\n  ")))
			}
		}
	}
	if total+skipped != 67 {
		t.Errorf("%d assertions, want Maxwell's 67", total+skipped)
	}
	for _, s := range mxBootstrapSkipped {
		t.Logf("skipped: %s (%s): %s", s.file, s.database, s.reason)
	}
	t.Logf("Maxwell bootstrap suite: %d assertions run, %d met, %d not met (known: %v); %d skipped", total, met, known, mxBootstrapKnown, skipped)
}
