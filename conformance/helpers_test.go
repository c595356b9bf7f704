package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/fixtures"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Fixture directories, relative to the fixtures root.
const (
	blackbeam = "blackbeam__rust_mysql_common/test-data__binlogs__"
	zongji    = "vlasky__zongji/test__fixtures__"
	gomysql   = "go-mysql-org__go-mysql/replication__"
	osheroff  = "osheroff__mysql-binlog-connector-java/src__test__resources__"
	apecloud  = "apecloud__mysql-binlog-connector-rust/tests__parse_file_tests__"
	rustus    = "rust-us__mysql-cdc-rs/tests__events__"
	percona   = "percona__percona-server-mysql-operator/pkg__binlogsource__testdata__"
	rusuly    = "rusuly__MySqlCdc/samples__MySqlCdc.Sample__"
)

// fixturesRoot returns ../shared/fixtures/upstream (see internal/fixtures).
func fixturesRoot(t testing.TB) string { return fixtures.Root(t) }

// fixture returns the path of a fixture file, failing when it is missing.
func fixture(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(fixturesRoot(t), rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture missing: %v", err)
	}
	return p
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rec is one committed row change, with its values cloned.
type rec struct {
	Op            change.Op
	Table         *tablemap.Table
	Before, After change.Row
	Pos           change.Position
	RowIndex      int
	GTID          string
}

// col returns the value of the named column in img, failing when the
// table has no such column.
func (r rec) col(t testing.TB, img change.Row, name string) change.Value {
	t.Helper()
	for i, c := range r.Table.Columns {
		if c.Name == name {
			return img[i]
		}
	}
	t.Fatalf("table %s.%s has no column %q", r.Table.DB, r.Table.Name, name)
	return change.Value{}
}

func (r rec) after(t testing.TB, name string) change.Value {
	t.Helper()
	return r.col(t, r.After, name)
}
func (r rec) before(t testing.TB, name string) change.Value {
	t.Helper()
	return r.col(t, r.Before, name)
}

// key renders a record for comparisons.
func (r rec) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s.%s %s:%d#%d %s", r.Op, r.Table.DB, r.Table.Name, r.Pos.File, r.Pos.Offset, r.RowIndex, r.GTID)
	for _, img := range []change.Row{r.Before, r.After} {
		b.WriteString(" [")
		for _, v := range img {
			fmt.Fprintf(&b, "%v:%v ", v.Kind(), v.Interface())
		}
		b.WriteString("]")
	}
	return b.String()
}

type txRec struct {
	end  change.TxEnd
	at   int64 // the tracker's position at commit, when there is one
	rows []rec
}

// memSink keeps committed changes in memory. Write's change is only valid
// during the call, so values are cloned.
type memSink struct {
	pending []rec
	txs     []txRec
	at      func() int64 // optional: where the source is, recorded at each commit
	closed  bool
}

var _ sink.Sink = (*memSink)(nil)

func (s *memSink) Write(_ context.Context, c *change.Change) error {
	if c.Op == change.DDL {
		return nil
	}
	s.pending = append(s.pending, rec{Op: c.Op, Table: c.Table, Before: c.Before.Clone(), After: c.After.Clone(),
		Pos: c.Pos, RowIndex: c.RowIndex, GTID: c.GTID})
	return nil
}

func (s *memSink) Commit(_ context.Context, tx change.TxEnd) error {
	t := txRec{end: tx, rows: s.pending}
	if s.at != nil {
		t.at = s.at()
	}
	s.txs = append(s.txs, t)
	s.pending = nil
	return nil
}

func (s *memSink) Rollback(context.Context) error {
	s.pending = nil
	return nil
}

func (s *memSink) Close(context.Context) error {
	s.pending = nil
	s.closed = true
	return nil
}

// rows returns every committed row, in order.
func (s *memSink) rows() []rec {
	var out []rec
	for _, tx := range s.txs {
		out = append(out, tx.rows...)
	}
	return out
}

// run runs src through a pipeline into a memSink.
func run(t testing.TB, src binlog.Source, opts pipeline.Options) (*memSink, error) {
	t.Helper()
	s := &memSink{}
	err := pipeline.New(src, s, opts).Run(context.Background())
	s.Close(context.Background())
	src.Close()
	return s, err
}

func openFile(t testing.TB, path string) *binlog.FileSource {
	t.Helper()
	src, err := binlog.OpenFiles([]string{path}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// runFixture decodes a whole binlog file fixture.
func runFixture(t testing.TB, rel string, opts pipeline.Options) (*memSink, error) {
	t.Helper()
	return run(t, openFile(t, fixture(t, rel)), opts)
}

// runStreamFixture decodes a replication stream capture.
func runStreamFixture(t testing.TB, rel string, opts pipeline.Options) (*memSink, error) {
	t.Helper()
	return run(t, binlog.NewStreamSource(bytes.NewReader(readFixture(t, rel))), opts)
}

// mustRun decodes and fails on any error.
func mustRun(t testing.TB, rel string) []rec {
	t.Helper()
	var s *memSink
	var err error
	if strings.HasSuffix(rel, ".stream.bin") {
		s, err = runStreamFixture(t, rel, pipeline.Options{})
	} else {
		s, err = runFixture(t, rel, pipeline.Options{})
	}
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return s.rows()
}

// jsonLines decodes src through the JSON lines sink and returns its output.
func jsonLines(t testing.TB, src binlog.Source) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	sk := jsonl.New(&buf, jsonl.Options{})
	err := pipeline.New(src, sk, pipeline.Options{}).Run(context.Background())
	if cerr := sk.Close(context.Background()); cerr != nil && err == nil {
		err = cerr
	}
	src.Close()
	return buf.String(), err
}

// evInfo is what tests check about one event from a Source.
type evInfo struct {
	Type      replication.EventType
	Pos, Next change.Position
	LogPos    uint32
	Flags     uint16
	Size      uint32
	InPayload bool
	Raw       []byte
}

// events reads src to its end and returns its events and the final error
// (nil at a clean end).
func events(t testing.TB, src binlog.Source) ([]evInfo, error) {
	t.Helper()
	defer src.Close()
	var out []evInfo
	for {
		ev, err := src.Next(context.Background())
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
		out = append(out, evInfo{Type: ev.Type(), Pos: ev.Pos, Next: ev.NextPos, LogPos: ev.Header.LogPos,
			Flags: ev.Header.Flags, Size: ev.Header.EventSize, InPayload: ev.InPayload, Raw: append([]byte(nil), ev.Raw...)})
	}
}

// topLevelCount counts events as they sit in the file: events flattened
// out of one TRANSACTION_PAYLOAD_EVENT count as that one event (this is
// how the upstream readers count).
func topLevelCount(evs []evInfo) int {
	n := 0
	payloads := map[change.Position]bool{}
	for _, e := range evs {
		if !e.InPayload {
			n++
		} else if !payloads[e.Pos] {
			payloads[e.Pos] = true
			n++
		}
	}
	return n
}

// boundaries returns the start offsets of the events of a raw event
// sequence starting at off, and its end.
func boundaries(t testing.TB, data []byte, off int) []int {
	t.Helper()
	var out []int
	for off < len(data) {
		out = append(out, off)
		if off+13 > len(data) {
			t.Fatalf("event header cut short at %d", off)
		}
		size := int(binary.LittleEndian.Uint32(data[off+9:]))
		if size < binlog.HeaderSize {
			t.Fatalf("bad event size %d at %d", size, off)
		}
		off += size
	}
	if off != len(data) {
		t.Fatalf("last event runs past the end (%d > %d)", off, len(data))
	}
	return append(out, off)
}

// writeTemp writes data to a file named name in a fresh temporary
// directory (outside the repository) and returns its path.
func writeTemp(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// asBinlogError checks that err is a *binlog.Error whose message names
// file:offset.
func asBinlogError(t testing.TB, err error, file string) *binlog.Error {
	t.Helper()
	var be *binlog.Error
	if !errors.As(err, &be) {
		t.Fatalf("error %T is not a *binlog.Error: %v", err, err)
	}
	if be.Pos.File != file {
		t.Errorf("error names file %q, want %q: %v", be.Pos.File, file, err)
	}
	if want := fmt.Sprintf("%s:%d", be.Pos.File, be.Pos.Offset); !strings.Contains(err.Error(), want) {
		t.Errorf("error message does not name %s: %v", want, err)
	}
	return be
}
