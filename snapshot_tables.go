package binlogcdc

import (
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/snapshot"
)

// logSkipped names each object the filters select that the snapshot does
// not copy, with why; a system database's tables (selected only by
// --tables patterns that match them) in one line per database.
func logSkipped(skipped []snapshot.Skipped, logf func(string, ...any)) {
	var sysDBs []string
	sysN := map[string]int{}
	for _, s := range skipped {
		switch {
		case s.Excluded:
		case s.System:
			if sysN[s.DB] == 0 {
				sysDBs = append(sysDBs, s.DB)
			}
			sysN[s.DB]++
		default:
			logf("snapshot: skipped %s: %s", pipeline.QuoteName(s.DB, s.Name), s.Why)
		}
	}
	for _, db := range sysDBs {
		logf("snapshot: skipped %s: a system database, never copied (%d of its tables and views selected)", "`"+db+"`", sysN[db])
	}
}

// checkSelected checks that each --tables pattern selects a table the
// snapshot copies. The snapshot command refuses one that does not (a
// misspelled name, a view, a table --exclude-tables leaves out: a copy
// of less than was asked for, ending in success, would go unnoticed);
// stream --snapshot warns, since the stream selects such a table if one
// is created later. The snapshot command also warns about
// --exclude-tables patterns that match nothing on the server.
func (o *StreamOptions) checkSelected(tables []snapshot.TableInfo, skipped []snapshot.Skipped, filter *pipeline.Filter, logf func(string, ...any)) error {
	var none []string
	for _, pat := range o.Tables {
		pf, err := pipeline.NewFilter([]string{pat}, nil)
		if err != nil {
			return err
		}
		copied := false
		for _, t := range tables {
			if pf.Table(t.DB, t.Name) {
				copied = true
				break
			}
		}
		if copied {
			continue
		}
		var what []string
		for _, s := range skipped {
			if !pf.Table(s.DB, s.Name) {
				continue
			}
			if len(what) == 5 {
				what = append(what, "…")
				break
			}
			why := s.Type
			switch {
			case s.Excluded:
				why = "excluded by --exclude-tables"
			case s.System:
				why = "a system database's"
			}
			what = append(what, pipeline.QuoteName(s.DB, s.Name)+" ("+why+")")
		}
		if len(what) == 0 {
			none = append(none, fmt.Sprintf("--tables %s matches no table on the server", pat))
		} else {
			none = append(none, fmt.Sprintf("--tables %s selects no table to copy, only %s", pat, strings.Join(what, ", ")))
		}
	}
	if len(none) > 0 && o.Snapshot.Only {
		return fmt.Errorf("snapshot: %s: nothing was copied\n"+
			"hint: check the name (SHOW TABLES; the user sees only tables it has a privilege on; a name holding a dot or a backquote must be backquoted: `my.db`.`t`), "+
			"name the tables a view reads rather than the view, or leave the pattern out",
			strings.Join(none, "; "))
	}
	for _, n := range none {
		logf("warning: snapshot: %s: nothing of it is copied; the stream selects a table it matches if one is created", n)
	}
	if o.Snapshot.Only {
		for _, m := range filter.Unmatched("on the server") {
			logf("warning: %s", m)
		}
	}
	return nil
}

// noteServerTables passes the server's tables through the filter at the
// start of a stream, so that the warning at its end names only patterns
// that match no table on the server or in the binlog read: a stream that
// reads no change of a selected table (an idle source, a rerun after a
// snapshot) does not report its pattern as matching nothing.
func (o *StreamOptions) noteServerTables(hist *binlog.History, filter *pipeline.Filter, logf func(string, ...any)) {
	if len(o.Tables)+len(o.Exclude) == 0 || o.Snapshot.Only { // the snapshot lists them itself
		return
	}
	if err := snapshot.NoteServerTables(hist.Conn(), filter); err != nil {
		logf("cannot list the server's tables (%v): a --tables or --exclude-tables pattern that matches no table in the binlog read is reported at the end, whether or not it matches one on the server", err)
	}
}
