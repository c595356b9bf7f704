package conformance

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// minimalCase is a real-server binlog with TABLE_MAPs but no column names
// (binlog_row_metadata MINIMAL, or a server before MySQL 8.0).
type minimalCase struct {
	rel     string
	file    string // the file name positions use
	table   string // the first table met: db.table
	offset  uint64 // where its TABLE_MAP (or the TRANSACTION_PAYLOAD holding it) starts
	version string
	tables  []string // every table with rows events in the file, to exclude
}

var minimalCases = []minimalCase{
	{rel: blackbeam + "minimal_row_metadata.000001", table: "noria.t1", offset: 312, version: "8.0.40"},
	{rel: blackbeam + "json.binlog.000001", table: "mysql.t", offset: 1000, version: "8.0.22"}, // also has PARTIAL_UPDATE_ROWS
	{rel: blackbeam + "transaction_compression.000001", table: "test.tb1", offset: 274, version: "8.0.32"},
	{rel: blackbeam + "time_issue.000001", table: "noria.t", offset: 312, version: "8.0.40"},
	{rel: blackbeam + "rpl_unfiltered_hidden_gcol.000001", table: "test.t", offset: 924, version: "8.0.17-debug"},
	{rel: blackbeam + "binlog_transaction_with_GTID_TAG.000001", table: "test.orders", offset: 405, version: "9.6.0"},
	{rel: osheroff + "mysql-bin.compressed", table: "demo.movies", offset: 236, version: "8.0.28"},
	{rel: apecloud + "mysql-bin.000057", table: "a.b", offset: 457, version: "8.0.31", tables: []string{"a.b", "a.test_table_3"}},
	{rel: apecloud + "mysql-bin.000080", table: "a.b", offset: 328, version: "5.7.40-log", tables: []string{"a.b", "a.emoji"}},
	{rel: rustus + "8.0__02_query_bigger__binlog.000733", table: "test.LINEITEM", offset: 1336, version: "8.0.31", tables: []string{"test.LINEITEM", "test.Demo"}},
	{rel: rustus + "8.0__19_30_Table_map_event_Write_rows_log_event__binlog.000018", table: "test.int_table", offset: 1129, version: "8.2.0"},
	{rel: rustus + "8.0__31_update_rows_v2__binlog.000001", table: "test.int_table", offset: 986, version: "8.2.0"},
	{rel: rustus + "8.0__32_delete_rows_v2__binlog.000001", table: "test.int_table", offset: 986, version: "8.2.0"},
	{rel: percona + "binlog.000003", table: "t.a", offset: 348, version: "8.4.10-10"},
	{rel: rusuly + "mysql-bin.000001", table: "test.mysqlcdc", offset: 1449, version: "5.7.23-log"},
	// Replication stream captures: positions come from log_pos.
	{rel: zongji + "binlog-mysql84.json.stream.bin", file: "mysql-bin.000008", table: "zongji_fixture_capture.capture_types", offset: 1639, version: "8.4.8"},
	// MariaDB 11.8 writes log_pos 0 inside transactions: the TABLE_MAP's
	// offset is worked out from the events before it (GTID at 2198, 42
	// bytes; ANNOTATE_ROWS, 589 bytes).
	{rel: zongji + "binlog-mariadb118.json.stream.bin", file: "mysql-bin.000001", table: "zongji_fixture_capture.capture_types", offset: 2829,
		version: "11.8.8-MariaDB-ubu2404-log", tables: []string{"zongji_fixture_capture.*"}},
}

// TestMinimalMetadataRefused: every MINIMAL / pre-8.0 file with TABLE_MAPs
// stops with a *tablemap.MetadataError that names the table, file:offset
// and server version and says how to fix the server; excluding the
// tables with a filter makes the same file decode without that error.
func TestMinimalMetadataRefused(t *testing.T) {
	for _, c := range minimalCases {
		t.Run(filepath.Base(c.rel), func(t *testing.T) {
			file := c.file
			if file == "" {
				file = filepath.Base(c.rel)
			}
			run := runFixture
			if strings.HasSuffix(c.rel, ".stream.bin") {
				run = runStreamFixture
			}
			s, err := run(t, c.rel, pipeline.Options{})
			var me *tablemap.MetadataError
			if !errors.As(err, &me) {
				t.Fatalf("want *tablemap.MetadataError, got %T: %v", err, err)
			}
			if !errors.Is(err, tablemap.ErrNoColumnNames) {
				t.Errorf("error does not wrap ErrNoColumnNames: %v", err)
			}
			if me.DB+"."+me.Table != c.table || me.File != file || me.Offset != c.offset || me.ServerVersion != c.version {
				t.Errorf("MetadataError{%s.%s %s:%d %q}, want {%s %s:%d %q}", me.DB, me.Table, me.File, me.Offset, me.ServerVersion,
					c.table, file, c.offset, c.version)
			}
			msg := err.Error()
			for _, want := range []string{"table " + c.table + ":", fmt.Sprintf("%s:%d", file, c.offset), c.version, "binlog_row_metadata = FULL"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q: %s", want, msg)
				}
			}
			if n := len(s.rows()); n != 0 {
				t.Errorf("%d rows committed before the error", n)
			}

			// With the tables filtered out, nothing raises the error.
			exclude := c.tables
			if exclude == nil {
				exclude = []string{c.table}
			}
			f, err := pipeline.NewFilter(nil, exclude)
			if err != nil {
				t.Fatal(err)
			}
			s, err = run(t, c.rel, pipeline.Options{Filter: f})
			if err := cleanEnd(fixture(t, c.rel), err); err != nil {
				t.Errorf("with --exclude-tables %q: %v", exclude, err)
			}
			if n := len(s.rows()); n != 0 {
				t.Errorf("with --exclude-tables: %d rows", n)
			}
			// An include filter naming another table has the same effect.
			f, _ = pipeline.NewFilter([]string{"other_db.other_table"}, nil)
			if _, err := run(t, c.rel, pipeline.Options{Filter: f}); cleanEnd(fixture(t, c.rel), err) != nil {
				t.Errorf("with --tables other_db.other_table: %v", err)
			}
		})
	}
}
