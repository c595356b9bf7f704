package pipeline

import (
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

type queryKind uint8

const (
	queryOther queryKind = iota // DDL and other statements that commit on their own
	queryBegin
	queryCommit
	querySavepoint
	queryDML
	queryXAStart    // XA START xid: the group ends with XA_PREPARE (or XA COMMIT ... ONE PHASE)
	queryXACommit   // XA COMMIT xid: a prepared XA transaction committed
	queryXARollback // XA ROLLBACK xid: a prepared XA transaction rolled back
	queryXAEnd      // XA END xid: the last statement before XA PREPARE
)

type query struct {
	kind queryKind
	db   string
	sql  string
	xid  string // XA statements: the transaction's xid, as the server wrote it
	// micros: the microseconds of the statement's start, -1 when the
	// event does not carry them (binlog.Query.StartMicros).
	micros int32
	tz     string // the session's time_zone when the statement used it
	// collServer, collDB: the session's collation_server and
	// collation_database (0: not logged), for the schema history.
	collServer, collDB uint32
}

// classify sorts a statement by what it does to the transaction.
func classify(bq binlog.Query) query {
	q := query{db: bq.DB, sql: bq.SQL, micros: -1, tz: bq.TimeZone, collServer: bq.CollationServer, collDB: bq.CollationDatabase}
	if bq.HasStartMicros {
		q.micros = int32(bq.StartMicros)
	}
	switch w := firstWord(q.sql); w {
	case "BEGIN":
		q.kind = queryBegin
	case "XA":
		classifyXA(&q)
	case "COMMIT":
		q.kind = queryCommit
	case "ROLLBACK":
		if strings.Contains(strings.ToUpper(q.sql), " TO ") {
			q.kind = querySavepoint
		} else {
			q.kind = queryCommit
		}
	case "SAVEPOINT", "RELEASE":
		q.kind = querySavepoint
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD":
		q.kind = queryDML
	}
	return q
}

// classifyXA sorts XA statements. Servers log a prepared XA transaction as
// its own group (GTID, XA START, rows, XA END, XA_PREPARE_LOG_EVENT; MariaDB
// writes no XA START but flags the GTID event) and
// its outcome later as another (GTID, XA COMMIT or XA ROLLBACK), in the
// xid format they print for both ("X'7831',X”,1"). XA COMMIT ... ONE
// PHASE ends the group that holds the rows, like COMMIT.
func classifyXA(q *query) {
	words := strings.Fields(q.sql)
	if len(words) < 2 {
		q.kind = querySavepoint
		return
	}
	xid := strings.TrimSpace(strings.Join(words[2:], " "))
	onePhase := strings.HasSuffix(strings.ToUpper(xid), " ONE PHASE")
	if onePhase {
		xid = strings.TrimSpace(xid[:len(xid)-len(" ONE PHASE")])
	}
	q.xid = xid
	switch strings.ToUpper(words[1]) {
	case "START", "BEGIN":
		q.kind = queryXAStart
	case "COMMIT":
		q.kind = queryXACommit
		if onePhase {
			q.kind = queryCommit
		}
	case "ROLLBACK":
		q.kind = queryXARollback
	case "END":
		q.kind = queryXAEnd
	default: // XA PREPARE (as a statement), XA RECOVER
		q.kind = querySavepoint
	}
}

// firstWord returns the statement's first keyword, upper-cased, skipping
// white space and /* comments */.
func firstWord(sql string) string {
	s := sql
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		if strings.HasPrefix(s, "/*") {
			end := strings.Index(s, "*/")
			if end < 0 {
				return ""
			}
			s = s[end+2:]
			continue
		}
		if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "-- ") {
			nl := strings.IndexByte(s, '\n')
			if nl < 0 {
				return ""
			}
			s = s[nl+1:]
			continue
		}
		break
	}
	end := strings.IndexAny(s, " \t\r\n(;")
	if end < 0 {
		end = len(s)
	}
	return strings.ToUpper(s[:end])
}

// rowsQuery is the statement an ANNOTATE_ROWS (MariaDB) or ROWS_QUERY
// (MySQL) event carries: what made the rows events that follow it.
// ROWS_QUERY starts with a length byte that servers fill with the
// length modulo 256; the text runs to the event's end.
func rowsQuery(ev *binlog.Event) string {
	b := ev.Body
	if ev.Type() == replication.ROWS_QUERY_EVENT {
		if len(b) == 0 {
			return ""
		}
		b = b[1:]
	}
	return string(b)
}
