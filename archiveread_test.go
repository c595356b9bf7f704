package binlogcdc

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// TestParsePositionHistory: a path names its file, but an archive's
// later server history keeps its history-N/ (change.History).
func TestParsePositionHistory(t *testing.T) {
	for in, want := range map[string]string{
		"binlog.000003:4":                      "binlog.000003",
		"/var/lib/mysql/binlog.000003:4":       "binlog.000003",
		"history-2/binlog.000003:4":            "history-2/binlog.000003",
		"/backup/a/history-12/binlog.000003:4": "history-12/binlog.000003",
		"/backup/history-x/binlog.000003:4":    "binlog.000003",
		"/backup/history-1/mysql-bin.000001:4": "mysql-bin.000001",
	} {
		p, err := ParsePosition(in)
		if err != nil || p.File != want || p.Offset != 4 {
			t.Errorf("%s: %+v %v, want %s", in, p, err, want)
		}
	}
}

// TestResumeArchived: a target's checkpoint resumes in the plan's file
// that holds it, on either side of a failover; past the plan, there is
// nothing to do; before it, an error.
func TestResumeArchived(t *testing.T) {
	o := RemoteOptions{arch: &archive.ReadPlan{Parts: []binlog.Part{
		{Name: "mariadb-bin.000002"}, {Name: "mariadb-bin.000003", To: 900}, {Name: "history-2/binlog.000001", From: 300}}}}
	for _, c := range []struct {
		cp   change.Position
		done bool
		err  bool
	}{
		{change.Position{File: "mariadb-bin.000003", Offset: 900}, false, false},
		{change.Position{File: "history-2/binlog.000001", Offset: 700}, false, false},
		{change.Position{File: "history-2/binlog.000002", Offset: 4}, true, false},
		{change.Position{File: "history-3/a.000001", Offset: 4}, true, false},
		{change.Position{File: "mariadb-bin.000001", Offset: 4}, false, true},
	} {
		start, done, err := o.resumeArchived(c.cp)
		if done != c.done || (err != nil) != c.err || !done && !c.err && start != c.cp {
			t.Errorf("%+v: %+v %v %v", c.cp, start, done, err)
		}
	}
}
