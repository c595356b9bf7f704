package pipeline

import (
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
)

type queryKind uint8

const (
	queryOther queryKind = iota // DDL and other statements that commit on their own
	queryBegin
	queryCommit
	querySavepoint
	queryDML
)

type query struct {
	kind queryKind
	db   string
	sql  string
}

// classify sorts a statement by what it does to the transaction.
func classify(bq binlog.Query) query {
	q := query{db: bq.DB, sql: bq.SQL}
	switch w := firstWord(q.sql); w {
	case "BEGIN", "XA":
		if w == "XA" {
			// XA START opens; XA END/PREPARE/COMMIT/ROLLBACK are bookkeeping
			// inside the group that an XID or XA_PREPARE event ends.
			if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q.sql)), "XA START") {
				q.kind = queryBegin
			} else if u := strings.ToUpper(strings.TrimSpace(q.sql)); strings.HasPrefix(u, "XA COMMIT") || strings.HasPrefix(u, "XA ROLLBACK") {
				q.kind = queryCommit
			} else {
				q.kind = querySavepoint
			}
		} else {
			q.kind = queryBegin
		}
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
