package e2e

// Debezium's own binlog connector tests (issue 24, section 4): the DDL
// fixtures (testdata/debezium, unchanged) and the values the matching
// integration tests assert, transcribed here as data, checked against
// 'binlogcdc read --format debezium' of the binlog a private MariaDB
// writes for them; the ITs' snapshot twins run through 'binlogcdc
// snapshot --format debezium' of the same table.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// dbzCase is one integration test: its fixture, the statements the test
// runs after it, the flags that set its connector options, and the
// values it asserts in the after image of each row of table, in order.
type dbzCase struct {
	it      string // the Java test, for the report
	fixture string // testdata/debezium/<fixture>.sql
	db      string
	table   string
	more    []string
	flags   []string
	rows    []map[string]string // column: expected JSON text
	every   bool                // the IT asserts every row, not only the last
	// snap: the IT has a twin that asserts the fixture's row (rows[0]) in
	// its snapshot record: run through 'binlogcdc snapshot'.
	snap bool
}

func dbzF32(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }
func dbzF64(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// yearRow is BinlogYearIT's insert; adjusted tells its two assertion
// sets apart: enable.time.adjuster=true (default) and =false.
func yearRows(adjusted bool) []map[string]string {
	r := map[string]string{
		"y18": "2018", "y0018": "2018", "y2018": "2018",
		"d18": "17622", "d2018": "17622", "dt18": "1522586096000", "dt2018": "1522586096000",
		"y78": "1978", "y0078": "1978", "y1978": "1978",
		"d78": "3012", "d1978": "3012", "dt78": "260282096000", "dt1978": "260282096000",
	}
	if adjusted {
		r["d0018"], r["dt0018"], r["d0078"], r["dt0078"] = "17622", "1522586096000", "3012", "260282096000"
	} else {
		r["d0018"], r["d0078"] = "-712863", "-690948" // the test asserts no DATETIME here
	}
	return []map[string]string{r, r}
}

var binaryInsert = "INSERT INTO dbz_1814_binary_mode_test (id, blob_col, tinyblob_col, mediumblob_col, longblob_col, binary_col, varbinary_col) " +
	"VALUES (default, X'010203', X'010203', X'010203', X'010203', X'010203', X'010203')"

func binaryRows(v string) []map[string]string {
	r := map[string]string{}
	for _, c := range []string{"blob_col", "tinyblob_col", "mediumblob_col", "longblob_col", "binary_col", "varbinary_col"} {
		r[c] = `"` + v + `"`
	}
	return []map[string]string{r, r}
}

func uuidRows(vals ...string) []map[string]string {
	var rows []map[string]string
	for _, v := range vals {
		rows = append(rows, map[string]string{"file_uuid": `"` + v + `"`})
	}
	return rows
}

var dbzCases = []dbzCase{
	{it: "BinlogFloatIT.shouldHandleFloatAsFloatAndDouble", fixture: "float_test", db: "floatit", table: "DBZ3865",
		flags: []string{"--debezium-float-double-columns", "floatit_*.DBZ3865.f2,floatit_*.DBZ3865.f3"},
		rows:  floatRows, snap: true},
	// The IT then creates DBZ3865_2 as DBZ3865 and inserts the same row.
	{it: "BinlogFloatIT.shouldHandleFloatAsFloatAndDouble (DBZ3865_2)", fixture: "float_test", db: "floatit", table: "DBZ3865_2",
		more:  []string{floatCreate2, "INSERT INTO DBZ3865_2(f1, f2, f3, f4_23, f4_24, f4_25, weight) VALUE (5.6, 5.61, 30.123456, 64.1, 64.1, 64.1, 64.1234)"},
		flags: []string{"--debezium-float-double-columns", "floatit_*.DBZ3865_2.f2,floatit_*.DBZ3865_2.f3"},
		rows:  floatRows},
	{it: "BinlogYearIT.shouldProcessTwoAndForDigitYearsInConnector", fixture: "year_test", db: "yearit", table: "dbz_1143_year_test",
		more: []string{yearInsert}, snap: true, rows: yearRows(true)},
	{it: "BinlogYearIT.shouldProcessTwoAndForDigitYearsInDatabase", fixture: "year_test", db: "yearit", table: "dbz_1143_year_test",
		more: []string{yearInsert}, snap: true, flags: []string{"--debezium-enable-time-adjuster=false"}, rows: yearRows(false)},
	{it: "BinlogBinaryModeIT (bytes)", fixture: "binary_mode_test", db: "binarymodeit", table: "dbz_1814_binary_mode_test",
		more: []string{binaryInsert}, snap: true, rows: binaryRows("AQID")},
	{it: "BinlogBinaryModeIT (hex)", fixture: "binary_mode_test", db: "binarymodeit", table: "dbz_1814_binary_mode_test",
		more: []string{binaryInsert}, snap: true, flags: []string{"--debezium-binary-handling-mode", "hex"}, rows: binaryRows("010203")},
	{it: "BinlogBinaryModeIT (base64)", fixture: "binary_mode_test", db: "binarymodeit", table: "dbz_1814_binary_mode_test",
		more: []string{binaryInsert}, snap: true, flags: []string{"--debezium-binary-handling-mode", "base64"}, rows: binaryRows("AQID")},
	{it: "BinlogBinaryModeIT (base64-url-safe)", fixture: "binary_mode_test", db: "binarymodeit", table: "dbz_1814_binary_mode_test",
		more: []string{binaryInsert}, snap: true, flags: []string{"--debezium-binary-handling-mode", "base64-url-safe"}, rows: binaryRows("AQID")},
	{it: "BinlogFixedLengthBinaryColumnIT.bytesMode", fixture: "binary_column_test", db: "binarycolumnit", table: "dbz_254_binary_column_test",
		every: true, rows: uuidRows("ZRrtCDkPSJOy8TaSPnt0AA==", "ZRrtCDkPSJOy8TaSPnt0qw==", "ZRrtCDkPSJOy8TaSPnt0AA==", "AAAAAAAAAAAAAAAAAAAAAA==")},
	{it: "BinlogFixedLengthBinaryColumnIT.hexMode", fixture: "binary_column_test", db: "binarycolumnit", table: "dbz_254_binary_column_test",
		flags: []string{"--debezium-binary-handling-mode", "hex"},
		every: true, rows: uuidRows("651aed08390f4893b2f136923e7b7400", "651aed08390f4893b2f136923e7b74ab", "651aed08390f4893b2f136923e7b7400", "00000000000000000000000000000000")},
	{it: "BinlogFixedLengthBinaryColumnIT.base64Mode", fixture: "binary_column_test", db: "binarycolumnit", table: "dbz_254_binary_column_test",
		flags: []string{"--debezium-binary-handling-mode", "base64"},
		every: true, rows: uuidRows("ZRrtCDkPSJOy8TaSPnt0AA==", "ZRrtCDkPSJOy8TaSPnt0qw==", "ZRrtCDkPSJOy8TaSPnt0AA==", "AAAAAAAAAAAAAAAAAAAAAA==")},
	{it: "BinlogFixedLengthBinaryColumnIT.base64UrlSafeMode", fixture: "binary_column_test", db: "binarycolumnit", table: "dbz_254_binary_column_test",
		flags: []string{"--debezium-binary-handling-mode", "base64-url-safe"},
		every: true, rows: uuidRows("ZRrtCDkPSJOy8TaSPnt0AA==", "ZRrtCDkPSJOy8TaSPnt0qw==", "ZRrtCDkPSJOy8TaSPnt0AA==", "AAAAAAAAAAAAAAAAAAAAAA==")},
}

// floatRows is what BinlogFloatIT asserts of its row, in each record.
var floatRows = []map[string]string{{"f1": dbzF32(5.6), "f2": dbzF64(float64(float32(5.61))), "f3": dbzF64(float64(float32(30.12346))),
	"f4_23": dbzF32(64.1), "f4_24": dbzF32(64.1), "f4_25": dbzF64(64.1), "weight": dbzF32(64.1234)}}

var floatCreate2 = "CREATE TABLE `DBZ3865_2` (`id` INT NOT NULL AUTO_INCREMENT, `f1` FLOAT DEFAULT 5.6, `f2` FLOAT(10, 2) DEFAULT NULL, " +
	"`f3` FLOAT(35, 5) DEFAULT NULL, `f4_23` FLOAT(23) DEFAULT NULL, `f4_24` FLOAT(24) DEFAULT NULL, `f4_25` FLOAT(25) DEFAULT NULL, " +
	"`weight` FLOAT UNSIGNED DEFAULT '0', PRIMARY KEY (`ID`)) ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8mb4"

var yearInsert = "INSERT INTO dbz_1143_year_test VALUES (default, '18', '0018', '2018', '18-04-01', '0018-04-01', '2018-04-01', " +
	"'18-04-01 12:34:56', '0018-04-01 12:34:56', '2018-04-01 12:34:56', '78', '0078', '1978', '78-04-01', '0078-04-01', '1978-04-01', " +
	"'78-04-01 12:34:56', '0078-04-01 12:34:56', '1978-04-01 12:34:56')"

// dbzSkipped are the assertions of these ITs not run, with the reason.
var dbzSkipped = []struct {
	what    string
	asserts int
	reason  string
}{}

// splitFixture splits a DDL fixture into statements (a ';' at a line's
// end ends one; '--' comment lines dropped).
func splitFixture(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if s := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// TestDebeziumSuite runs the cases above, each on its own database and
// binlog files of one private MariaDB.
func TestDebeziumSuite(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	total, met := 0, 0
	for i, c := range dbzCases {
		fixture, err := os.ReadFile("testdata/debezium/" + c.fixture + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		db := fmt.Sprintf("%s_%d", c.db, i)
		srv.FlushLogs(t)
		before := len(srv.BinlogFiles(t))
		srv.Exec(t, "CREATE DATABASE "+db, "USE "+db)
		srv.Exec(t, splitFixture(string(fixture))...)
		srv.Exec(t, c.more...)
		srv.FlushLogs(t)
		binlogs := srv.BinlogFiles(t)
		args := append([]string{"read", "--format", "debezium", "--tables", db + "." + c.table}, c.flags...)
		out, errs, code := runCLI(t, nil, append(args, binlogs[before-1:len(binlogs)-1]...)...)
		if code != 0 {
			t.Fatalf("%s: read: exit %d: %s", c.it, code, errs)
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		if len(lines) != len(c.rows) {
			t.Fatalf("%s: %d records, want %d:\n%s", c.it, len(lines), len(c.rows), out)
		}
		for r, want := range c.rows {
			var rec struct {
				After map[string]json.RawMessage `json:"after"`
			}
			if err := json.Unmarshal(lines[r], &rec); err != nil {
				t.Fatalf("%s: %v: %s", c.it, err, lines[r])
			}
			// The IT asserts the last row (the one it inserts, or its
			// fixture's); the other rows hold the same values and are
			// checked too, not counted.
			counted := c.every || r == len(c.rows)-1
			for col, v := range want {
				if counted {
					total++
				}
				if got := string(rec.After[col]); got != v {
					t.Errorf("%s row %d: %s = %s, Debezium's test asserts %s", c.it, r, col, got, v)
					continue
				}
				if counted {
					met++
				}
			}
		}
		if c.snap {
			n, m := dbzSnapshotTwin(t, srv, db, c)
			total, met = total+n, met+m
		}
	}
	skipped := 0
	for _, s := range dbzSkipped {
		skipped += s.asserts
		t.Logf("skipped: %s: %d assertions: %s", s.what, s.asserts, s.reason)
	}
	t.Logf("Debezium ITs: %d assertions run, %d met, %d not met; %d skipped", total, met, total-met, skipped)
}

// dbzSnapshotTwin runs an IT's snapshot twin: 'binlogcdc snapshot' of
// the case's table gives a snapshot record ("op":"r") for each row, and
// the twin asserts the fixture's row, rows[0]; the others are checked,
// not counted. It returns the assertions run and met.
func dbzSnapshotTwin(t *testing.T, srv *testserver.Server, db string, c dbzCase) (total, met int) {
	t.Helper()
	args := append([]string{"snapshot", "--source", srv.DSN(), "--format", "debezium", "--tables", db + "." + c.table}, c.flags...)
	out, errs, code := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("%s snapshot twin: exit %d: %s", c.it, code, errs)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(c.rows) {
		t.Fatalf("%s snapshot twin: %d records, want %d:\n%s", c.it, len(lines), len(c.rows), out)
	}
	for r, want := range c.rows {
		var rec struct {
			After map[string]json.RawMessage `json:"after"`
			Op    string                     `json:"op"`
		}
		if err := json.Unmarshal(lines[r], &rec); err != nil {
			t.Fatalf("%s snapshot twin: %v: %s", c.it, err, lines[r])
		}
		if rec.Op != "r" {
			t.Errorf("%s snapshot twin row %d: op %q, want r", c.it, r, rec.Op)
		}
		for col, v := range want {
			if r == 0 {
				total++
			}
			if got := string(rec.After[col]); got != v {
				t.Errorf("%s snapshot twin row %d: %s = %s, Debezium's test asserts %s", c.it, r, col, got, v)
				continue
			}
			if r == 0 {
				met++
			}
		}
	}
	return total, met
}
