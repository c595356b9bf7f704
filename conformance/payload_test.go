package conformance

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// payloadCase is a file with TRANSACTION_PAYLOAD_EVENTs (zstd, MINIMAL
// metadata).
type payloadCase struct {
	rel      string
	topLevel int // the upstream event count (a payload counts as one event)
	payloads map[uint64][]replication.EventType
	after    map[uint64]uint64 // payload offset -> offset of the next event
}

var payloadCases = []payloadCase{
	{
		// Upstream: the decompressed payload yields exactly QUERY,
		// TABLE_MAP, WRITE_ROWS(v2), XID, then end.
		rel:      blackbeam + "transaction_compression.000001",
		topLevel: 5, // FDE, PREVIOUS_GTIDS, ANONYMOUS_GTID, PAYLOAD, ROTATE
		payloads: map[uint64][]replication.EventType{274: {replication.QUERY_EVENT, replication.TABLE_MAP_EVENT,
			replication.WRITE_ROWS_EVENTv2, replication.XID_EVENT}},
		after: map[uint64]uint64{274: 431},
	},
	{
		// Upstream (BinaryLogFileReaderIntegrationTest) counts 5 events;
		// the payload holds QUERY, TABLE_MAP demo.movies, UPDATE_ROWS v2, XID.
		rel:      osheroff + "mysql-bin.compressed",
		topLevel: 5,
		payloads: map[uint64][]replication.EventType{236: {replication.QUERY_EVENT, replication.TABLE_MAP_EVENT,
			replication.UPDATE_ROWS_EVENTv2, replication.XID_EVENT}},
		after: map[uint64]uint64{236: 724},
	},
	{
		// Upstream (apecloud parse_file_tests) counts 8 successful
		// parser.next() calls: FDE, PREVIOUS_GTIDS, GTID, QUERY, GTID,
		// PAYLOAD, GTID, PAYLOAD — each payload is one event there.
		rel:      apecloud + "mysql-bin.000057",
		topLevel: 8,
		payloads: map[uint64][]replication.EventType{
			457: {replication.QUERY_EVENT, replication.ROWS_QUERY_EVENT, replication.TABLE_MAP_EVENT,
				replication.WRITE_ROWS_EVENTv2, replication.XID_EVENT},
			730: {replication.QUERY_EVENT, replication.ROWS_QUERY_EVENT, replication.TABLE_MAP_EVENT,
				replication.UPDATE_ROWS_EVENTv2, replication.ROWS_QUERY_EVENT, replication.TABLE_MAP_EVENT,
				replication.WRITE_ROWS_EVENTv2, replication.XID_EVENT},
		},
		after: map[uint64]uint64{457: 651, 730: 1283},
	},
}

// TestTransactionPayloadFraming iterates the Source directly: the events
// inside each TRANSACTION_PAYLOAD_EVENT come out flattened, in order,
// marked InPayload, at the payload event's offset, with log_pos 0 (as
// the server writes them inside a payload) and a resume point after the
// whole payload on the XID. Then the pipeline refuses the MINIMAL
// metadata with a MetadataError at the payload's offset.
func TestTransactionPayloadFraming(t *testing.T) {
	for _, c := range payloadCases {
		t.Run(filepath.Base(c.rel), func(t *testing.T) {
			path := fixture(t, c.rel)
			evs, err := events(t, openFile(t, path))
			if err := cleanEnd(path, err); err != nil {
				t.Fatal(err)
			}
			if got := topLevelCount(evs); got != c.topLevel {
				t.Errorf("%d top-level events, upstream counts %d", got, c.topLevel)
			}
			got := map[uint64][]replication.EventType{}
			for i, e := range evs {
				if !e.InPayload {
					if e.Type == replication.TRANSACTION_PAYLOAD_EVENT {
						t.Errorf("event %d: the payload event itself was returned", i)
					}
					continue
				}
				got[e.Pos.Offset] = append(got[e.Pos.Offset], e.Type)
				if e.LogPos != 0 {
					t.Errorf("inner %v at %d: log_pos %d, want 0", e.Type, e.Pos.Offset, e.LogPos)
				}
				if e.Pos.File != filepath.Base(path) {
					t.Errorf("inner event file %q", e.Pos.File)
				}
				want := e.Pos
				if e.Type == replication.XID_EVENT {
					want = change.Position{File: e.Pos.File, Offset: c.after[e.Pos.Offset]}
				}
				if e.Next != want && e.Type != replication.QUERY_EVENT {
					t.Errorf("inner %v at %d: next %v, want %v", e.Type, e.Pos.Offset, e.Next, want)
				}
			}
			if !reflect.DeepEqual(got, c.payloads) {
				t.Errorf("inner events %v, want %v", got, c.payloads)
			}
			// The event after each payload starts where the payload ends.
			for i := 1; i < len(evs); i++ {
				if evs[i-1].InPayload && !evs[i].InPayload {
					if want := c.after[evs[i-1].Pos.Offset]; evs[i].Pos.Offset != want {
						t.Errorf("event after payload %d at %d, want %d", evs[i-1].Pos.Offset, evs[i].Pos.Offset, want)
					}
				}
			}

			// MINIMAL metadata: the rows inside cannot be named.
			var first uint64
			for off := range c.payloads {
				if first == 0 || off < first {
					first = off
				}
			}
			_, err = runFixture(t, c.rel, pipeline.Options{})
			var me *tablemap.MetadataError
			if !errors.As(err, &me) || me.Offset != first {
				t.Errorf("want MetadataError at the payload offset %d, got %v", first, err)
			}
		})
	}
}

// TestTransactionPayloadZstdFrame wraps the raw zstd frame that go-mysql's
// TestTransactionPayloadEventDecode took from a MySQL 8.0.27
// TRANSACTION_PAYLOAD_EVENT into a binlog file, behind the real 8.0.32
// FORMAT_DESCRIPTION_EVENT of transaction_compression.000001, and checks
// the eight inner events upstream lists.
func TestTransactionPayloadZstdFrame(t *testing.T) {
	frame := readFixture(t, gomysql+"transaction_payload_event_test.go__TestTransactionPayloadEventDecode__L76__mysql8027_zstd_payload.bin")
	file := readFixture(t, blackbeam+"transaction_compression.000001")
	fde := file[4 : 4+binary.LittleEndian.Uint32(file[4+9:])]
	if replication.EventType(fde[4]) != replication.FORMAT_DESCRIPTION_EVENT {
		t.Fatal("no FDE at offset 4")
	}
	// Payload event body: header fields (type, length, value; all
	// length-encoded), end mark 0, then the compressed events.
	var body []byte
	body = append(body, 2, 1, 0)                // compression type: zstd
	body = append(body, 3, 3, 0xfc, 0x8a, 0x09) // uncompressed size 2442
	body = append(body, 1, 3, 0xfc)             // payload size…
	body = binary.LittleEndian.AppendUint16(body, uint16(len(frame)))
	body = append(body, 0)
	body = append(body, frame...)
	size := binlog.HeaderSize + len(body) + 4
	start := 4 + len(fde)
	ev := make([]byte, binlog.HeaderSize, size)
	ev[4] = byte(replication.TRANSACTION_PAYLOAD_EVENT)
	binary.LittleEndian.PutUint32(ev[5:], 1)
	binary.LittleEndian.PutUint32(ev[9:], uint32(size))
	binary.LittleEndian.PutUint32(ev[13:], uint32(start+size))
	ev = append(ev, body...)
	ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))

	// A STOP event closes the file, as the server's shutdown would.
	stop := make([]byte, binlog.HeaderSize, binlog.HeaderSize+4)
	stop[4] = byte(replication.STOP_EVENT)
	binary.LittleEndian.PutUint32(stop[5:], 1)
	binary.LittleEndian.PutUint32(stop[9:], binlog.HeaderSize+4)
	binary.LittleEndian.PutUint32(stop[13:], uint32(start+size+binlog.HeaderSize+4))
	stop = binary.LittleEndian.AppendUint32(stop, crc32.ChecksumIEEE(stop))

	data := append(append(append(append([]byte(nil), binlog.Magic...), fde...), ev...), stop...)
	path := writeTemp(t, t.TempDir(), "payload.000001", data)
	evs, err := events(t, openFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	var inner []replication.EventType
	for _, e := range evs {
		if e.InPayload {
			inner = append(inner, e.Type)
			if e.Pos.Offset != uint64(start) || e.LogPos != 0 {
				t.Errorf("inner %v at %d log_pos %d, want at %d log_pos 0", e.Type, e.Pos.Offset, e.LogPos, start)
			}
		}
	}
	want := []replication.EventType{replication.QUERY_EVENT, replication.TABLE_MAP_EVENT, replication.WRITE_ROWS_EVENTv2,
		replication.TABLE_MAP_EVENT, replication.UPDATE_ROWS_EVENTv2, replication.TABLE_MAP_EVENT,
		replication.DELETE_ROWS_EVENTv2, replication.XID_EVENT}
	if !reflect.DeepEqual(inner, want) {
		t.Errorf("inner events %v, want %v", inner, want)
	}
	_, err = run(t, openFile(t, path), pipeline.Options{})
	var me *tablemap.MetadataError
	if !errors.As(err, &me) || me.DB+"."+me.Table != "compression_test.large_data" || me.Offset != uint64(start) {
		t.Errorf("want MetadataError for compression_test.large_data at %d, got %v", start, err)
	}
}

// TestPartialUpdateRowsMinimal: json.binlog.000001 (MySQL 8.0.22,
// binlog_row_value_options=PARTIAL_JSON) holds a PARTIAL_UPDATE_ROWS_EVENT;
// its metadata is MINIMAL, so decoding stops at the first TABLE_MAP.
func TestPartialUpdateRowsMinimal(t *testing.T) {
	evs, err := events(t, openFile(t, fixture(t, blackbeam+"json.binlog.000001")))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == replication.PARTIAL_UPDATE_ROWS_EVENT {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PARTIAL_UPDATE_ROWS events, want 1", n)
	}
	_, err = runFixture(t, blackbeam+"json.binlog.000001", pipeline.Options{})
	var me *tablemap.MetadataError
	if !errors.As(err, &me) {
		t.Errorf("want MetadataError, got %v", err)
	}
}
