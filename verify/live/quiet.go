package live

import (
	"context"
	"fmt"
	"strconv"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/verify"
)

// A source snapshot's position is where the last transaction it holds
// ends, or past events that change nothing: after FLUSH BINARY LOGS it
// is in the new file, after its header. The applier reports only where
// transactions end, so whether it holds everything up to the snapshot is
// then read from the source's binlog (SHOW BINLOG EVENTS, which needs
// the privilege the stream needs already: REPLICATION CLIENT, MariaDB's
// BINLOG MONITOR).

// inert are the event types that are no transaction and change no data.
var inert = map[string]bool{"Format_desc": true, "Gtid_list": true, "Binlog_checkpoint": true, "Rotate": true,
	"Stop": true, "Start_encryption": true, "Previous_gtids": true, "Heartbeat": true}

// quietPage is how many events are read at a time; more than a page of
// inert events between two positions is not expected: the applier is
// then waited for.
const quietPage = 64

// quiet reports whether the source's binlog holds nothing but inert
// events from from up to to.
func quiet(ctx context.Context, q verify.Querier, from, to change.Position) (bool, error) {
	if !before(from, to) {
		return true, nil
	}
	files := []string{from.File}
	if from.File != to.File {
		all, err := binlogFiles(q)
		if err != nil {
			return false, err
		}
		files = files[:0]
		for _, f := range all {
			if f >= from.File && f <= to.File {
				files = append(files, f)
			}
		}
		if len(files) == 0 || files[0] != from.File || files[len(files)-1] != to.File {
			return false, nil // purged, or not there: wait for the applier
		}
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		off, end := uint64(4), uint64(0) // end 0: the whole file
		if i == 0 {
			off = from.Offset
		}
		if f == to.File {
			end = to.Offset
		}
		ok, err := inertFrom(q, f, off, end)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// inertFrom reports whether file holds only inert events from off up to
// end (0: its end), reading at most a page.
func inertFrom(q verify.Querier, file string, off, end uint64) (bool, error) {
	if end != 0 && off >= end {
		return true, nil
	}
	stmt := fmt.Sprintf("SHOW BINLOG EVENTS IN '%s' FROM %d LIMIT %d", escape(file), off, quietPage)
	r, err := q.Execute(stmt)
	if err != nil {
		return false, fmt.Errorf("source: %s: %w (the --source user needs REPLICATION CLIENT, on MariaDB BINLOG MONITOR)", stmt, err)
	}
	defer r.Close()
	n := r.RowNumber()
	for i := 0; i < n; i++ {
		// Log_name, Pos, Event_type, Server_id, End_log_pos, Info
		ps, _ := r.GetString(i, 1)
		pos, err := strconv.ParseUint(ps, 10, 64)
		if err != nil {
			return false, fmt.Errorf("source: %s: row %d: position %q", stmt, i, ps)
		}
		if end != 0 && pos >= end {
			return true, nil
		}
		typ, _ := r.GetString(i, 2)
		if !inert[typ] {
			return false, nil
		}
	}
	// The page was full without reaching end: more than expected, wait
	// for the applier instead. A whole file read to its end is inert.
	return n < quietPage, nil
}

// binlogFiles lists the source's binlog files (SHOW BINARY LOGS).
func binlogFiles(q verify.Querier) ([]string, error) {
	r, err := q.Execute("SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("source: SHOW BINARY LOGS: %w (the --source user needs REPLICATION CLIENT, on MariaDB BINLOG MONITOR)", err)
	}
	defer r.Close()
	var out []string
	for i := 0; i < r.RowNumber(); i++ {
		f, _ := r.GetString(i, 0)
		out = append(out, f)
	}
	return out, nil
}

// escape makes s safe inside a single-quoted SQL string.
func escape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '\\':
			b = append(b, '\\')
		case 0:
			b = append(b, '\\')
			b = append(b, '0')
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}
