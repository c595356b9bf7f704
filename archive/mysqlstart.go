package archive

import (
	"fmt"
	"strings"
)

// mysqlGTIDStart chooses the first file for a read of a MySQL archive
// that starts after the GTID set s, as a MySQL server does for a replica
// that asks for its binlogs with COM_BINLOG_DUMP_GTID and s as its
// executed set: every transaction of the archive not in s is read, those
// in s are skipped (*skip). The files' PREVIOUS_GTIDS sets (the manifest's
// previous_gtids, else the file's own event) say which hold nothing
// outside s: file i holds what its successor's set adds to its own (a
// later server history's first file: its switch position's set).
//
// The read is refused when the archive cannot give every transaction
// after s: a transaction not in s that was logged before the archive's
// first file still held (expired by --keep-days/--keep-size, or before
// the archive began), or s holding transactions of a server the archive
// follows past the archive's last one (a set taken from another server,
// or the archive lags behind).
func mysqlGTIDStart(dir string, c *chain, s string, skip *func(string) bool) (int, error) {
	fs := c.files
	want, err := parseMySQLSet(s)
	if err != nil {
		return 0, &Error{Msg: fmt.Sprintf("--start-gtid %q: reading a MySQL archive takes a MySQL GTID set (uuid:1-100,uuid2:1-5): %v", s, err),
			Hint: "--start-gtid 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100 (the backup's gtid_executed)"}
	}
	*skip = want.has
	last := len(fs) - 1
	kept := 0
	for kept < last && fs[kept].e.Expired {
		kept++
	}
	prev := make([]mysqlSet, len(fs))
	for i := kept; i <= last; i++ {
		if i > 0 && fs[i].hist != fs[i-1].hist && c.after[fs[i].hist].my != nil {
			// A later server history is read from its switch position
			// on (its first file's PREVIOUS_GTIDS is older: the file
			// repeats what the history before holds).
			prev[i] = c.after[fs[i].hist].my
			continue
		}
		if prev[i], err = filePrevious(fs[i]); err != nil {
			return 0, err
		}
	}
	notAll := func(why string, hint string) error {
		return &Error{Msg: fmt.Sprintf("--start-gtid %s: the archive %s (%s … %s) cannot give every transaction after this set: %s", s, dir, fs[0].name, fs[last].name, why),
			Hint: hint}
	}
	if missing := prev[kept].minus(want); len(missing) > 0 {
		where := fmt.Sprintf("before %s, the archive's first file: the archive began after them", fs[kept].name)
		if kept > 0 {
			where = fmt.Sprintf("in or before %s, which the archive no longer holds (expired: --keep-days/--keep-size)", fs[kept-1].name)
		}
		return 0, notAll(fmt.Sprintf("the transactions %s are not in the set and were logged %s", missing, where),
			"restore the files from the upload (--upload) or another copy, or start from a set that holds them (an archive started later than the backup misses the changes in between)")
	}
	// A server the archive logs transactions of: s may not hold any of
	// its transactions past the archive's last one.
	have := mysqlSet{}
	addGTID := func(g string) {
		if one, err := parseMySQLSet(g); err == nil && strings.Contains(g, ":") {
			for k, iv := range one {
				have[k] = append(have[k], iv...).Normalize()
			}
		}
	}
	for i := kept; i <= last; i++ {
		for k, iv := range prev[i] {
			have[k] = append(have[k], iv...).Normalize()
		}
		addGTID(fs[i].e.FirstGTID)
		addGTID(fs[i].e.LastGTID)
	}
	scanned := false
	for k := range want {
		if _, logged := have[k]; !logged || want.last(k) <= have.last(k) {
			continue
		}
		if !scanned && !fs[last].e.Complete && fs[last].path != "" {
			// The open file's manifest entry lags behind the file: what
			// it holds now decides.
			sc, err := scanOpen(fs[last].path, fs[last].e)
			if err != nil {
				return 0, err
			}
			addGTID(sc.stats.LastGTID)
			scanned = true
			if want.last(k) <= have.last(k) {
				continue
			}
		}
		return 0, notAll(fmt.Sprintf("it holds %s:%d, past the archive's last transaction of %s, %s:%d", k, want.last(k), k, k, have.last(k)),
			"give the executed set of a backup of the server the archive follows (its gtid_executed), taken before the archive's last transaction; or wait for the archive to catch up")
	}
	if len(have) == 0 {
		return 0, &Error{Msg: fmt.Sprintf("--start-gtid %s: the archive %s holds no GTID (its source ran with gtid_mode OFF)", s, dir),
			Hint: "start with --start-position FILE:POS"}
	}
	for i := kept; i < last; i++ {
		if len(prev[i+1].minus(want)) > 0 {
			return i, nil
		}
	}
	return last, nil
}

// filePrevious is a file's PREVIOUS_GTIDS set: the manifest's, else the
// file's event (manifests written before they recorded it).
func filePrevious(f planFile) (mysqlSet, error) {
	if p := f.e.PreviousGTIDs; p != nil {
		set, err := parseMySQLSet(*p)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("the archive's manifest gives %s the previous_gtids %q: %v", f.name, *p, err), Hint: "restore the manifest from a copy"}
		}
		return set, nil
	}
	s, ok, err := filePreviousGTIDs(f.path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("--start-gtid: the archive's %s has no PREVIOUS_GTIDS event, so the GTIDs before it are unknown", f.name),
			Hint: "start with --start-position FILE:POS (a MySQL 5.6+ binlog has the event; this one may come from another server)"}
	}
	set, err := parseMySQLSet(s)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the archive's %s: its PREVIOUS_GTIDS set %q: %v", f.name, s, err)}
	}
	return set, nil
}
