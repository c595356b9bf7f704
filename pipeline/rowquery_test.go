package pipeline

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// TestRowsQuery: MariaDB's ANNOTATE_ROWS body is the statement; MySQL's
// ROWS_QUERY starts with a length byte (the length modulo 256, so not
// to be trusted) before it; an empty body is no statement.
func TestRowsQuery(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	for _, tc := range []struct {
		typ  replication.EventType
		body []byte
		want string
	}{
		{replication.MARIADB_ANNOTATE_ROWS_EVENT, []byte("INSERT INTO t VALUES (1)"), "INSERT INTO t VALUES (1)"},
		{replication.ROWS_QUERY_EVENT, append([]byte{24}, "INSERT INTO t VALUES (1)"...), "INSERT INTO t VALUES (1)"},
		{replication.ROWS_QUERY_EVENT, append([]byte{300 % 256}, long...), string(long)},
		{replication.ROWS_QUERY_EVENT, nil, ""},
		{replication.MARIADB_ANNOTATE_ROWS_EVENT, nil, ""},
	} {
		ev := &binlog.Event{Header: replication.EventHeader{EventType: tc.typ}, Body: tc.body}
		if got := rowsQuery(ev); got != tc.want {
			t.Errorf("%v %q: %q, want %q", tc.typ, tc.body, got, tc.want)
		}
	}
}
