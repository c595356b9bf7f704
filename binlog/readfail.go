package binlog

import (
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// readFailure explains ERROR 1236 (ER_MASTER_FATAL_ERROR_READING_BINLOG):
// the server could not send the binlog from the requested position. Its
// message says why; each cause has its own fix.
func readFailure(err error, me *mysql.MyError) *PreflightError {
	msg := strings.ToLower(me.Message)
	switch {
	case strings.Contains(msg, "truncated in the middle of event"), strings.Contains(msg, "bogus data in log event"),
		strings.Contains(msg, "impossible position"), strings.Contains(msg, "position > file size"),
		strings.Contains(msg, "event too big"), strings.Contains(msg, "event too small"):
		return &PreflightError{Problem: "the server cannot read an event at the requested position", Err: err,
			Hint: "the position is probably not the start of an event in that file (or the file is damaged there). " +
				"Start at a transaction's first event: a position from SHOW BINARY LOG STATUS / SHOW MASTER STATUS, or the Pos of a Gtid row of SHOW BINLOG EVENTS (a JSON line's pos.offset is a rows event inside its transaction, not a start)"}
	case strings.Contains(msg, "max_allowed_packet"):
		return &PreflightError{Problem: "an event is larger than the source's max_allowed_packet", Err: err,
			Hint: "raise it on the source: SET GLOBAL max_allowed_packet = 1073741824 (and in my.cnf), then restart binlogcdc"}
	case strings.Contains(msg, "could not find first log file"), strings.Contains(msg, "purged"),
		strings.Contains(msg, "could not open log file"), strings.Contains(msg, "could not find"):
		return &PreflightError{Problem: "the server cannot send the binlog from the requested position", Err: err,
			Hint: "the binlog file was probably purged (see SHOW BINARY LOGS). Changes between the checkpoint and the oldest binlog are gone from the server: rebuild the target from a fresh snapshot, then restart with --from now, or accept the gap with --from earliest"}
	}
	return &PreflightError{Problem: "the server cannot send the binlog from the requested position", Err: err,
		Hint: "the server's message says why; see SHOW BINARY LOGS for the files it has"}
}
