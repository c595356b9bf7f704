package conformance

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// wholeFiles lists every binlog file fixture (with the magic bytes).
func wholeFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"blackbeam__rust_mysql_common", "osheroff__mysql-binlog-connector-java", "apecloud__mysql-binlog-connector-rust",
		"rust-us__mysql-cdc-rs", "rusuly__MySqlCdc", "percona__percona-server-mysql-operator", "mariadb-operator__mariadb-poc"} {
		files, err := filepath.Glob(filepath.Join(fixturesRoot(t), dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s", dir)
		}
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && bytes.HasPrefix(b, binlog.Magic) {
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	if len(out) < 60 {
		t.Fatalf("only %d binlog fixtures found", len(out))
	}
	return out
}

// nothing is a filter that selects no table: the pipeline then reads
// through MINIMAL table maps and statement-based DML.
func nothing(t *testing.T) pipeline.Options {
	f, err := pipeline.NewFilter([]string{"no_such_db.no_such_table"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Options{Filter: f}
}

// checkErr accepts a clean end, a MetadataError, or a *binlog.Error naming
// the file and an offset inside it.
func checkErr(t *testing.T, path string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var me *tablemap.MetadataError
	if errors.As(err, &me) {
		if me.File != filepath.Base(path) {
			t.Errorf("MetadataError names file %q: %v", me.File, err)
		}
		return
	}
	be := asBinlogError(t, err, filepath.Base(path))
	if st, _ := os.Stat(path); st != nil && be.Pos.Offset > uint64(st.Size()) {
		t.Errorf("error offset %d past the end of the file (%d bytes)", be.Pos.Offset, st.Size())
	}
}

// endsWithoutRotate lists the fixtures whose FORMAT_DESCRIPTION_EVENT
// lacks LOG_EVENT_BINLOG_IN_USE_F although their last event is neither a
// ROTATE nor a STOP. See TestInUseFlagClearedInStreams: a server clears
// that flag in the FDE it sends to replicas, so a raw capture of an
// active binlog over the replication protocol (mysqlbinlog
// --read-from-remote-server --raw, or a connector's test capture) looks
// like this, as do copies upstream projects cut short on purpose.
var endsWithoutRotate = map[string]bool{
	"tests__parse_file_tests__mysql-bin.000057":      true, // MySQL 8.0.31, ends after a TRANSACTION_PAYLOAD
	"tests__parse_file_tests__mysql-bin.000080":      true, // MySQL 5.7.40, ends after an XID
	"test-data__binlogs__binlog_savepoint.000001":    true, // MySQL 5.1.43, ends after an XID
	"src__test__resources__mysql-bin.aurora-padding": true, // Aurora 5.7.12, ends after BEGIN
	"tests__events__8.0__02_query__binlog.000001":    true, // MySQL 8.2.0, ends after a QUERY
}

// cleanEnd turns the FileSource's "closed file without ROTATE/STOP"
// truncation report, raised exactly at the end of such a file, into a
// clean end; any other error is returned as is.
func cleanEnd(path string, err error) error {
	var be *binlog.Error
	if err == nil || !errors.As(err, &be) || !errors.Is(err, io.ErrUnexpectedEOF) || !endsWithoutRotate[filepath.Base(path)] {
		return err
	}
	if st, serr := os.Stat(path); serr == nil && be.Pos.Offset == uint64(st.Size()) {
		return nil
	}
	return err
}

// TestEveryFixtureNoPanic decodes every whole-file fixture twice: as is,
// and with a filter that selects no table (so the pipeline reads through
// MINIMAL metadata and statement DML). It must never panic, and every
// error must be a MetadataError or a *binlog.Error naming file:offset.
func TestEveryFixtureNoPanic(t *testing.T) {
	for _, path := range wholeFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := run(t, openFile(t, path), pipeline.Options{})
			checkErr(t, path, err)
			_, err = run(t, openFile(t, path), nothing(t))
			checkErr(t, path, err)
			_, err = events(t, openFile(t, path))
			checkErr(t, path, cleanEnd(path, err))
		})
	}
}

// TestEventCounts checks the top-level event counts the upstream readers
// assert (osheroff BinaryLogFileReaderIntegrationTest, apecloud
// parse_file_tests): a TRANSACTION_PAYLOAD_EVENT counts once.
func TestEventCounts(t *testing.T) {
	sakila := gunzip(t, osheroff+"mysql-bin.sakila.gz")
	for _, c := range []struct {
		path string
		want int
	}{
		{fixture(t, osheroff+"mysql-bin.checksum-crc32"), 303},
		{fixture(t, osheroff+"mysql-bin.checksum-none"), 191},
		{fixture(t, osheroff+"mysql-bin.compressed"), 5},
		{sakila, 1462},
		{fixture(t, apecloud+"mysql-bin.000057"), 8},
		{fixture(t, apecloud+"mysql-bin.000080"), 37},
	} {
		evs, err := events(t, openFile(t, c.path))
		if err := cleanEnd(c.path, err); err != nil {
			t.Errorf("%s: %v", filepath.Base(c.path), err)
		}
		if got := topLevelCount(evs); got != c.want {
			t.Errorf("%s: %d events, upstream counts %d", filepath.Base(c.path), got, c.want)
		}
	}
	// Sakila is MySQL 5.5: no column names. Filtered out, it reads through.
	_, err := run(t, openFile(t, sakila), pipeline.Options{})
	var me *tablemap.MetadataError
	if !errors.As(err, &me) || me.ServerVersion != "5.5.27-log" || !strings.HasPrefix(me.DB+"."+me.Table, "sakila.") {
		t.Errorf("sakila: want a MetadataError from 5.5.27-log, got %v", err)
	}
	if _, err := run(t, openFile(t, sakila), nothing(t)); err != nil {
		t.Errorf("sakila, nothing selected: %v", err)
	}
}

func gunzip(t *testing.T, rel string) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(readFixture(t, rel)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, t.TempDir(), "mysql-bin.sakila", data)
}

// TestRobustnessFixtures checks the deliberately damaged and old-format
// files one by one.
func TestRobustnessFixtures(t *testing.T) {
	t.Run("truncated_event", func(t *testing.T) {
		// 14 bytes: the magic and 10 bytes of an event header.
		path := fixture(t, blackbeam+"binlog_truncated_event.000001")
		_, err := run(t, openFile(t, path), pipeline.Options{})
		be := asBinlogError(t, err, filepath.Base(path))
		if be.Pos.Offset != 4 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("want unexpected EOF at offset 4, got %v", err)
		}
	})
	t.Run("truncated_prev_gtid_event", func(t *testing.T) {
		// MySQL 5.7.2: the FDE (in-use flag set, CRC32) then 9 bytes of
		// the PREVIOUS_GTIDS event.
		path := fixture(t, blackbeam+"binlog_truncated_prev_gtid_event.000001")
		evs, err := events(t, openFile(t, path))
		if len(evs) != 1 || evs[0].Type != replication.FORMAT_DESCRIPTION_EVENT {
			t.Errorf("events %v, want the FDE only", evs)
		}
		be := asBinlogError(t, err, filepath.Base(path))
		if be.Pos.Offset != 120 || !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, binlog.ErrChecksum) {
			t.Errorf("want unexpected EOF at offset 120, got %v", err)
		}
		_, err = run(t, openFile(t, path), pipeline.Options{})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("pipeline: %v", err)
		}
	})
	t.Run("corrupt-relay-bin", func(t *testing.T) {
		// MySQL 5.0.30 relay log; upstream: a broken QUERY event of size
		// 171 near the end. The framing is intact, the event body is not.
		path := fixture(t, blackbeam+"corrupt-relay-bin.000624")
		evs, err := events(t, openFile(t, path))
		if err != nil {
			t.Fatal(err)
		}
		broken := -1
		for i, e := range evs {
			if e.Type == replication.QUERY_EVENT && e.Size == 171 {
				broken = i
			}
		}
		if broken < 0 {
			t.Fatal("no QUERY event of 171 bytes")
		}
		_, err = run(t, openFile(t, path), nothing(t))
		be := asBinlogError(t, err, filepath.Base(path))
		if be.Pos != evs[broken].Pos {
			t.Errorf("error at %v, want at the broken QUERY event %v: %v", be.Pos, evs[broken].Pos, err)
		}
	})
	t.Run("aurora-padding", func(t *testing.T) {
		// Aurora MySQL 5.7.12: an unknown, ignorable type-100 event.
		path := fixture(t, osheroff+"mysql-bin.aurora-padding")
		evs, err := events(t, openFile(t, path))
		if err := cleanEnd(path, err); err != nil {
			t.Fatal(err)
		}
		type ev struct {
			typ  replication.EventType
			at   uint64
			size uint32
		}
		var got []ev
		for _, e := range evs {
			got = append(got, ev{e.Type, e.Pos.Offset, e.Size})
		}
		want := []ev{{replication.FORMAT_DESCRIPTION_EVENT, 4, 181}, {replication.PREVIOUS_GTIDS_EVENT, 185, 31},
			{replication.ANONYMOUS_GTID_EVENT, 216, 65}, {100, 281, 928}, {replication.QUERY_EVENT, 1209, 85}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
		if evs[3].Flags&replication.LOG_EVENT_IGNORABLE_F == 0 {
			t.Error("the type-100 event is not flagged ignorable")
		}
		_, err = run(t, openFile(t, path), pipeline.Options{})
		if err := cleanEnd(path, err); err != nil {
			t.Errorf("pipeline: %v", err)
		}
	})
	t.Run("checksum-none", func(t *testing.T) {
		// MySQL 5.7.20 with binlog_checksum=NONE: 191 events, no CRCs.
		path := fixture(t, osheroff+"mysql-bin.checksum-none")
		_, err := run(t, openFile(t, path), pipeline.Options{})
		var me *tablemap.MetadataError
		if !errors.As(err, &me) || me.Offset != 1273 || me.DB+"."+me.Table != "account_db.account" {
			t.Errorf("want MetadataError for account_db.account at 1273, got %v", err)
		}
		if _, err := run(t, openFile(t, path), nothing(t)); err != nil {
			t.Errorf("nothing selected: %v", err)
		}
	})
	for _, name := range []string{"ver_5_1-wl2325_r.001", "ver_5_1-wl2325_s.001", "ver_5_1_23.001", "ver_trunk_row_v2.001",
		"update-full-row.binlog", "update-partial-row.binlog", "write-full-row.binlog", "write-partial-row.binlog"} {
		t.Run(name, func(t *testing.T) {
			// Pre-8.0 servers: no column names; some use v0/v1 rows
			// events and statement-based LOAD DATA.
			path := fixture(t, blackbeam+name)
			s, err := run(t, openFile(t, path), pipeline.Options{})
			if err == nil || len(s.rows()) != 0 {
				t.Errorf("want an error and no rows, got %d rows, %v", len(s.rows()), err)
			}
			checkErr(t, path, err)
			_, err = run(t, openFile(t, path), nothing(t))
			checkErr(t, path, err)
		})
	}
}

// TestInUseFlagClearedInStreams: a server clears
// LOG_EVENT_BINLOG_IN_USE_F in the FORMAT_DESCRIPTION_EVENT it sends to a
// replica, even for the binlog it is writing. In both zongji captures the
// FDE of the file opened by FLUSH LOGS (which the server was writing
// when the capture ended) has flags 0.
func TestInUseFlagClearedInStreams(t *testing.T) {
	for _, rel := range []string{zongjiFull, zongji + "binlog-mariadb118.json.stream.bin"} {
		evs, err := events(t, binlog.NewStreamSource(bytes.NewReader(readFixture(t, rel))))
		if err != nil {
			t.Fatal(err)
		}
		var fdes []evInfo
		for _, e := range evs {
			if e.Type == replication.FORMAT_DESCRIPTION_EVENT {
				fdes = append(fdes, e)
			}
		}
		if len(fdes) != 2 {
			t.Fatalf("%s: %d FDEs", rel, len(fdes))
		}
		last := fdes[1]
		if last.Pos.Offset != 4 || last.LogPos == 0 || last.Flags&replication.LOG_EVENT_BINLOG_IN_USE_F != 0 {
			t.Errorf("%s: FDE of the active file at %v flags %#x", rel, last.Pos, last.Flags)
		}
	}
}

// inUseFiles are the fixtures whose FDE has LOG_EVENT_BINLOG_IN_USE_F set
// (MANIFEST.md): the server computed the FDE's CRC32 with the flag clear.
var inUseFiles = []string{
	blackbeam + "binlog_truncated_prev_gtid_event.000001",
	blackbeam + "json-opaque.binlog",
	blackbeam + "json.binlog.000001",
	blackbeam + "mariadb-bin.000001",
	blackbeam + "mysql-enum-string-set.000001",
	blackbeam + "mysql_type_bit.000001",
	blackbeam + "slave-relay-bin.000001",
	rustus + "8.0__02_query_bigger__binlog.000733",
	rustus + "8.0__19_30_Table_map_event_Write_rows_log_event__binlog.000018",
	rustus + "8.0__31_update_rows_v2__binlog.000001",
	rustus + "8.0__32_delete_rows_v2__binlog.000001",
	rusuly + "mysql-bin.000001",
}

// TestFDEInUseChecksum: the CRC32 of an FDE with the in-use flag set
// verifies only with the flag cleared; the sources accept these files.
func TestFDEInUseChecksum(t *testing.T) {
	want := map[string]bool{}
	for _, rel := range inUseFiles {
		want[filepath.Base(fixture(t, rel))] = true
	}
	got := map[string]bool{}
	for _, path := range wholeFiles(t) {
		b, _ := os.ReadFile(path)
		if len(b) >= 4+binlog.HeaderSize && replication.EventType(b[8]) == replication.FORMAT_DESCRIPTION_EVENT &&
			binary.LittleEndian.Uint16(b[4+17:])&replication.LOG_EVENT_BINLOG_IN_USE_F != 0 {
			got[filepath.Base(path)] = true
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files with the in-use flag: %v, MANIFEST lists %v", keys(got), keys(want))
	}
	for _, rel := range inUseFiles {
		path := fixture(t, rel)
		b, _ := os.ReadFile(path)
		fde := b[4 : 4+binary.LittleEndian.Uint32(b[4+9:])]
		stored := binary.LittleEndian.Uint32(fde[len(fde)-4:])
		if crc32.ChecksumIEEE(fde[:len(fde)-4]) == stored {
			t.Errorf("%s: the FDE's CRC matches with the flag set; the fixture does not exercise the rule", rel)
		}
		evs, err := events(t, openFile(t, path))
		if errors.Is(err, binlog.ErrChecksum) {
			t.Errorf("%s: %v", rel, err)
		}
		if len(evs) == 0 || evs[0].Type != replication.FORMAT_DESCRIPTION_EVENT {
			t.Errorf("%s: FDE not read", rel)
		}
		if err != nil && !strings.Contains(rel, "truncated") {
			t.Errorf("%s: %v", rel, err)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// prefixCase is a FULL-metadata fixture to cut short at every length.
type prefixCase struct {
	rel    string
	stream bool
}

// TestTruncatedPrefixes cuts FULL-metadata binlogs at every length n
// (like archive/tar's TestReadTruncation). Each prefix must decode to
// exactly the rows of the transactions complete within it — never a row
// of an unfinished transaction — and end cleanly at an event boundary
// or with an unexpected-EOF *binlog.Error; never panic.
func TestTruncatedPrefixes(t *testing.T) {
	cases := []prefixCase{
		{rel: blackbeam + "mysql-enum-string-set.000001"},
		{rel: blackbeam + "vector.binlog"},
		{rel: blackbeam + "mariadb-bin.000001"},
		{rel: blackbeam + "binlog-invisible-columns.000001"},
		{rel: zongjiFull, stream: true},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.rel), func(t *testing.T) {
			t.Parallel()
			data := readFixture(t, c.rel)
			start := 4
			if c.stream {
				start = 0
			}
			bounds := map[int]bool{}
			for _, b := range boundaries(t, data, start) {
				bounds[b] = true
			}

			// The whole input, with the input offset at each commit.
			var full *memSink
			var err error
			if c.stream {
				tr := &streamTracker{src: binlog.NewStreamSource(bytes.NewReader(data))}
				full = &memSink{at: func() int64 { return tr.end }}
				err = pipeline.New(tr, full, pipeline.Options{}).Run(t.Context())
			} else {
				full, err = run(t, openFile(t, fixture(t, c.rel)), pipeline.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(full.rows()) == 0 {
				t.Fatal("no rows")
			}
			txEnd := func(tx txRec) int {
				if c.stream {
					return int(tx.at)
				}
				return int(tx.end.Next.Offset)
			}

			dir := t.TempDir()
			for n := 0; n <= len(data); n++ {
				if testing.Short() && n%16 != 0 && !bounds[n] && !bounds[n-1] {
					continue
				}
				var got *memSink
				var path string
				if c.stream {
					got, err = run(t, binlog.NewStreamSource(bytes.NewReader(data[:n])), pipeline.Options{})
				} else {
					path = writeTemp(t, dir, filepath.Base(c.rel), data[:n])
					got, err = run(t, openFile(t, path), pipeline.Options{})
				}
				var want []string
				for _, tx := range full.txs {
					if txEnd(tx) <= n {
						for _, r := range tx.rows {
							want = append(want, r.key())
						}
					}
				}
				var have []string
				for _, r := range got.rows() {
					have = append(have, r.key())
				}
				if !reflect.DeepEqual(have, want) {
					t.Fatalf("prefix %d: %d rows, want %d:\n got %q\nwant %q", n, len(have), len(want), have, want)
				}
				switch {
				case !c.stream && n < 4:
					if err == nil {
						t.Fatalf("prefix %d (no magic): no error", n)
					}
					asBinlogError(t, err, filepath.Base(c.rel))
				case bounds[n] && err == nil:
				case err == nil:
					t.Fatalf("prefix %d (inside an event): no error", n)
				default:
					// An error inside an event; at an event boundary, the
					// file source may also report a file that ends without
					// its ROTATE/STOP.
					if !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Fatalf("prefix %d: want unexpected EOF, got %v", n, err)
					}
					var be *binlog.Error
					if !errors.As(err, &be) {
						t.Fatalf("prefix %d: %T is not a *binlog.Error: %v", n, err, err)
					}
					if !c.stream {
						if be.Pos.File != filepath.Base(c.rel) || be.Pos.Offset > uint64(n) {
							t.Fatalf("prefix %d: error at %v", n, be.Pos)
						}
						if !strings.Contains(err.Error(), fmt.Sprintf("%s:%d", be.Pos.File, be.Pos.Offset)) {
							t.Fatalf("prefix %d: message does not name file:offset: %v", n, err)
						}
					}
				}
			}
		})
	}
}

// streamTracker counts the input bytes a StreamSource has consumed (the
// sum of the events' sizes; the capture holds no TRANSACTION_PAYLOAD).
type streamTracker struct {
	src binlog.Source
	end int64
}

func (s *streamTracker) Next(ctx context.Context) (*binlog.Event, error) {
	ev, err := s.src.Next(ctx)
	if ev != nil && !ev.InPayload {
		s.end += int64(len(ev.Raw))
	}
	return ev, err
}

func (s *streamTracker) Close() error { return s.src.Close() }

// TestSingleByteFlips flips every byte after the magic, one at a time, in
// CRC32 files. Every flip must be reported — as a checksum mismatch at
// the damaged event, except in the FORMAT_DESCRIPTION_EVENT (which says
// whether there are checksums at all) and in event-size fields (which
// reframe the file) where any *binlog.Error will do — and never decode.
func TestSingleByteFlips(t *testing.T) {
	for _, rel := range []string{blackbeam + "mysql_type_bit.000001", blackbeam + "json-opaque.binlog", blackbeam + "mariadb-bin.000001"} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			t.Parallel()
			data := readFixture(t, rel)
			bounds := boundaries(t, data, 4)
			fdeEnd := bounds[1]
			dir := t.TempDir()
			ev := 0 // index in bounds of the event holding byte i
			for i := 4; i < len(data); i++ {
				for bounds[ev+1] <= i {
					ev++
				}
				d := append([]byte(nil), data...)
				d[i] ^= 0xff
				path := writeTemp(t, dir, filepath.Base(rel), d)
				s, err := run(t, openFile(t, path), pipeline.Options{})
				if err == nil {
					t.Fatalf("byte %d flipped: no error (%d rows)", i, len(s.rows()))
				}
				var be *binlog.Error
				if !errors.As(err, &be) {
					t.Fatalf("byte %d flipped: %T is not a *binlog.Error: %v", i, err, err)
				}
				inSize := i-bounds[ev] >= 9 && i-bounds[ev] < 13
				if i < fdeEnd || inSize {
					continue
				}
				if !errors.Is(err, binlog.ErrChecksum) || be.Pos.Offset != uint64(bounds[ev]) {
					t.Fatalf("byte %d flipped (event at %d): want a checksum error there, got %v", i, bounds[ev], err)
				}
			}
		})
	}
}
