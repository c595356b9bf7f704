package binlog

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// mariadbGTID decodes what go-mysql's MariadbGTIDEvent does.
func TestMariaDBGTIDFastPath(t *testing.T) {
	for _, tc := range []struct {
		domain, server uint32
		seq            uint64
		flags          byte
		extra          int // bytes after the flags (commit id)
	}{
		{0, 1, 1, replication.BINLOG_MARIADB_FL_STANDALONE | replication.BINLOG_MARIADB_FL_DDL, 0},
		{0, 1, 226504, replication.BINLOG_MARIADB_FL_TRANSACTIONAL, 0},
		{4294967295, 4294967295, 18446744073709551615, replication.BINLOG_MARIADB_FL_GROUP_COMMIT_ID, 8},
		{7, 100, 42, 0, 6},
	} {
		body := binary.LittleEndian.AppendUint64(nil, tc.seq)
		body = binary.LittleEndian.AppendUint32(body, tc.domain)
		body = append(body, tc.flags)
		body = append(body, make([]byte, tc.extra)...)
		ev := &Event{Header: replication.EventHeader{EventType: replication.MARIADB_GTID_EVENT, ServerID: tc.server}, Body: body}
		got := (&EventDecoder{}).mariadbGTID(ev)

		e := &replication.MariadbGTIDEvent{}
		e.GTID.ServerID = tc.server
		if err := e.Decode(body); err != nil {
			t.Fatal(err)
		}
		want := GTID{ID: fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber), Standalone: e.IsStandalone()}
		if got != want {
			t.Errorf("%+v: got %+v, want %+v", tc, got, want)
		}
	}
}

// TestStringBlockKeepsStrings: the GTID strings carved from shared blocks
// keep their text while later ones are made (over several blocks).
func TestStringBlockKeepsStrings(t *testing.T) {
	var b stringBlock
	var got []string
	for i := range 2000 {
		got = append(got, b.make(fmt.Appendf(nil, "0-1-%d", i)))
	}
	for i, s := range got {
		if want := fmt.Sprintf("0-1-%d", i); s != want {
			t.Fatalf("string %d is %q, want %q", i, s, want)
		}
	}
	if s := b.make(nil); s != "" {
		t.Fatalf("empty: %q", s)
	}
}
