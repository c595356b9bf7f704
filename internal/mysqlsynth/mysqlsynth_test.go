package mysqlsynth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/internal/fixtures"
)

// realEvents splits a real binlog file into its events (header, body
// without the checksum).
func realEvents(t *testing.T, data []byte) (hdrs [][]byte, bodies [][]byte) {
	t.Helper()
	for off := 4; off+19 <= len(data); {
		size := int(binary.LittleEndian.Uint32(data[off+9:]))
		if size < 23 || off+size > len(data) {
			t.Fatalf("event at %d of %d bytes", off, size)
		}
		hdrs = append(hdrs, data[off:off+19])
		bodies = append(bodies, data[off+19:off+size-4])
		off += size
	}
	return hdrs, bodies
}

// TestEncodeLikeMySQL80: the FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS and
// GTID_LOG_EVENT of a real MySQL 8.0.26 file, encoded again from what
// they say, are the same bytes.
func TestEncodeLikeMySQL80(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__binlog-invisible-columns.000001"))
	if err != nil {
		t.Fatal(err)
	}
	hdrs, bodies := realEvents(t, data)
	fde := bodies[0]
	version := string(bytes.TrimRight(fde[2:52], "\x00"))
	if got := FDEBody(version, binary.LittleEndian.Uint32(fde[52:])); !bytes.Equal(got, fde) {
		t.Errorf("FDE body:\n got %x\nwant %x", got, fde)
	}
	if hdrs[1][4] != PreviousGTIDsEvent {
		t.Fatalf("second event is type %d", hdrs[1][4])
	}
	f, err := NewFile(1, 0, version, "") // the fixture's set is empty
	if err != nil {
		t.Fatal(err)
	}
	_, mine := realEvents(t, f.Bytes())
	if !bytes.Equal(mine[1], bodies[1]) {
		t.Errorf("PREVIOUS_GTIDS body:\n got %x\nwant %x", mine[1], bodies[1])
	}
	n := 0
	for i, h := range hdrs {
		if h[4] != GTIDEvent {
			continue
		}
		b := bodies[i]
		var sid UUID
		copy(sid[:], b[1:17])
		gno := int64(binary.LittleEndian.Uint64(b[17:]))
		seq := int64(binary.LittleEndian.Uint64(b[34:]))
		var ts [8]byte
		copy(ts[:], b[42:49])
		txLen, _, _ := lenEnc(b[49:])
		got := GTIDBody(sid, gno, seq, binary.LittleEndian.Uint64(ts[:]), txLen)
		binary.LittleEndian.PutUint32(got[len(got)-4:], binary.LittleEndian.Uint32(b[len(b)-4:])) // the server's version
		got[0] = b[0]
		if !bytes.Equal(got, b) {
			t.Errorf("GTID body at event %d:\n got %x\nwant %x", i, got, b)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no GTID event in the fixture")
	}
}

func lenEnc(b []byte) (uint64, int, bool) {
	switch {
	case len(b) == 0:
		return 0, 0, false
	case b[0] < 251:
		return uint64(b[0]), 1, true
	case b[0] == 0xfc && len(b) >= 3:
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3, true
	}
	return 0, 0, false
}

// TestDecodes: go-mysql's parser reads a synthesized file whole: the
// GTIDs, the column names of the TABLE_MAP's FULL metadata, the rows.
func TestDecodes(t *testing.T) {
	sid, _ := ParseUUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
	f, err := NewFile(1, 1700000000, "8.0.36", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4")
	if err != nil {
		t.Fatal(err)
	}
	cols := []Column{{Name: "id"}, {Name: "note", Varchar: 100}}
	f.Tx(sid, 5, "shop", "orders", cols, [][]Value{{int32(1), "first"}, {int32(-2), nil}})
	f.Rotate("binlog.000002")
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	var gtids []string
	var names []string
	var rows [][]any
	err = p.ParseReader(bytes.NewReader(f.Bytes()[4:]), func(e *replication.BinlogEvent) error {
		switch ev := e.Event.(type) {
		case *replication.PreviousGTIDsEvent:
			gtids = append(gtids, "prev "+ev.GTIDSets)
		case *replication.GTIDEvent:
			s, _ := ev.GTIDNext()
			gtids = append(gtids, s.String())
		case *replication.TableMapEvent:
			for _, n := range ev.ColumnName {
				names = append(names, string(n))
			}
		case *replication.RowsEvent:
			rows = ev.Rows
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[prev 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4 3e11fa47-71ca-11e1-9e33-c80aa9429562:5]"; sprint(gtids) != want {
		t.Errorf("GTIDs %v, want %s", gtids, want)
	}
	if sprint(names) != "[id note]" {
		t.Errorf("column names %v", names)
	}
	if sprint(rows) != "[[1 first] [-2 <nil>]]" {
		t.Errorf("rows %v", rows)
	}
}

func sprint(v any) string { return fmt.Sprint(v) }
