package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// fakeServer answers as a server with these binlogs would.
type fakeServer struct {
	flavor string
	files  []string
	at     map[string]string // "file:pos" → BINLOG_GTID_POS; missing: NULL
	state  string
	uuid   string
	subset bool
	xids   map[string]uint64 // "file:end" → the XID of the XID event ending there
	id     uint32            // @@server_id; 0: 1, the default
}

func (f *fakeServer) Flavor() string                                           { return f.flavor }
func (f *fakeServer) Binlogs(context.Context) ([]string, error)                { return f.files, nil }
func (f *fakeServer) GTIDState(context.Context) (string, error)                { return f.state, nil }
func (f *fakeServer) ServerUUID(context.Context) (string, error)               { return f.uuid, nil }
func (f *fakeServer) GTIDSubset(context.Context, string, string) (bool, error) { return f.subset, nil }
func (f *fakeServer) GTIDPosAt(_ context.Context, file string, pos uint64) (string, bool, error) {
	s, ok := f.at[file+":"+itoa(pos)]
	return s, ok, nil
}

func (f *fakeServer) ServerID(context.Context) (uint32, error) {
	if f.id == 0 {
		return 1, nil // MariaDB's default
	}
	return f.id, nil
}

func (f *fakeServer) XidAt(_ context.Context, file string, end uint64) (uint64, bool, error) {
	x, ok := f.xids[file+":"+itoa(end)]
	return x, ok, nil
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestResume(t *testing.T) {
	const path = "/var/lib/cdc/cp.json"
	mariaA := func() *fakeServer {
		return &fakeServer{flavor: "mariadb", files: []string{"mysql-bin.000005", "mysql-bin.000006"},
			at:    map[string]string{"mysql-bin.000005:4": "0-1-10", "mysql-bin.000006:4": "0-1-20", "mysql-bin.000006:1234": "0-1-22"},
			state: "0-1-22"}
	}
	cpA := &Checkpoint{File: "mysql-bin.000006", Offset: 1234, LastGTID: "0-1-22", GTIDSet: "0-1-22", Server: "a:3306"}
	for _, c := range []struct {
		name  string
		srv   *fakeServer
		cp    *Checkpoint
		addr  string
		want  Plan
		wants []string // in the error (or, for a plan, in its note)
	}{
		{name: "its own server", srv: mariaA(), cp: cpA, addr: "a:3306", want: Plan{Pos: cpA.Position()}},
		{name: "its own server, another address", srv: mariaA(), cp: cpA, addr: "10.0.0.1:3306", want: Plan{Pos: cpA.Position()}},
		{name: "another server with a file of that name (issue 12)", cp: cpA, addr: "b:3306",
			srv: &fakeServer{flavor: "mariadb", files: []string{"mysql-bin.000006"},
				at: map[string]string{"mysql-bin.000006:4": "", "mysql-bin.000006:1234": "0-1-4"}, state: "0-1-4"},
			wants: []string{"does not belong to this server (b:3306)", "saved against a:3306", "mysql-bin.000006:1234 is not where its last transaction 0-1-22 ends",
				`GTID state is "0-1-4"`, "--from now"}},
		{name: "another server, the position no event boundary", cp: cpA, addr: "b:3306",
			srv:   &fakeServer{flavor: "mariadb", files: []string{"mysql-bin.000006"}, at: map[string]string{"mysql-bin.000006:4": ""}, state: "0-1-4"},
			wants: []string{"does not belong to this server"}},
		{name: "another server with higher numbers from another server id", cp: cpA, addr: "b:3306",
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000001"}, at: map[string]string{"binlog.000001:4": ""}, state: "0-2-500"},
			wants: []string{"does not belong to this server", "has not logged its GTID position 0-1-22"}},
		{name: "failover to a replica that logged the history", cp: cpA, addr: "c:3306",
			srv:  &fakeServer{flavor: "mariadb", files: []string{"c-bin.000001", "c-bin.000002"}, at: map[string]string{"c-bin.000001:4": ""}, state: "0-1-22,0-2-30"},
			want: Plan{GTIDSet: "0-1-22"}, wants: []string{"no binlog mysql-bin.000006", "saved against a:3306", "resuming after it by GTID"}},
		{name: "failover, the replica's binlogs begin after the checkpoint", cp: cpA, addr: "c:3306",
			srv:   &fakeServer{flavor: "mariadb", files: []string{"c-bin.000007"}, at: map[string]string{"c-bin.000007:4": "0-1-25"}, state: "0-1-30"},
			wants: []string{"no longer has the transactions after it", "oldest binlog c-bin.000007 starts at GTID state 0-1-25", "purged"}},
		{name: "binlog reset on the same server", cp: cpA, addr: "a:3306",
			srv:  &fakeServer{flavor: "mariadb", files: []string{"mysql-bin.000001", "mysql-bin.000006"}, at: map[string]string{"mysql-bin.000001:4": "0-1-22", "mysql-bin.000006:1234": "0-1-23"}, state: "0-1-40"},
			want: Plan{GTIDSet: "0-1-22"}, wants: []string{"is not where its last transaction 0-1-22 ends"}},
		{name: "idle checkpoint, its binlog purged", addr: "a:3306",
			cp:   &Checkpoint{File: "binlog.000002", Offset: 500, LastGTID: "0-1-5", GTIDSet: "0-1-5"},
			srv:  &fakeServer{flavor: "mariadb", files: []string{"binlog.000004", "binlog.000005"}, at: map[string]string{"binlog.000004:4": "0-1-5"}, state: "0-1-9"},
			want: Plan{Pos: change.Position{File: "binlog.000004", Offset: 4}}, wants: []string{"lost nothing after the checkpoint"}},
		{name: "purged after the checkpoint", addr: "a:3306",
			cp:    &Checkpoint{File: "binlog.000002", Offset: 500, LastGTID: "0-1-5", GTIDSet: "0-1-5"},
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000004"}, at: map[string]string{"binlog.000004:4": "0-1-8"}, state: "0-1-9"},
			wants: []string{"resumes at binlog.000002:500, but the server no longer has binlog.000002", "hint"}},
		{name: "no GTIDs, a file the server never had", addr: "b:3306",
			cp:    &Checkpoint{File: "binlog.000009", Offset: 500, Server: "a:3306"},
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000001", "binlog.000002"}},
			wants: []string{"never had binlog.000009: its binlogs are binlog.000001 … binlog.000002"}},
		{name: "no GTIDs, another sequence", addr: "b:3306",
			cp:    &Checkpoint{File: "mysql-bin.000001", Offset: 500},
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000003"}},
			wants: []string{"never had mysql-bin.000001", "an unknown server"}},
		{name: "no GTIDs, purged", addr: "a:3306",
			cp:    &Checkpoint{File: "binlog.000001", Offset: 500},
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000003"}},
			wants: []string{"no longer has binlog.000001", "purged"}},
		{name: "no GTIDs, none before it here either", addr: "b:3306",
			cp:   &Checkpoint{File: "binlog.000001", Offset: 500, Server: "a:3306"},
			srv:  &fakeServer{flavor: "mariadb", files: []string{"binlog.000001"}, at: map[string]string{"binlog.000001:500": ""}},
			want: Plan{Pos: change.Position{File: "binlog.000001", Offset: 500}}},
		{name: "no GTIDs, transactions before it here", addr: "b:3306",
			cp:    &Checkpoint{File: "binlog.000001", Offset: 500, Server: "a:3306"},
			srv:   &fakeServer{flavor: "mariadb", files: []string{"binlog.000001"}, at: map[string]string{"binlog.000001:500": "0-1-3"}},
			wants: []string{"it has no GTIDs, and binlog.000001:500 comes after GTID position 0-1-3 on this server"}},
		{name: "no GTIDs, same address", addr: "a:3306",
			cp:   &Checkpoint{File: "binlog.000001", Offset: 500, Server: "a:3306"},
			srv:  &fakeServer{flavor: "mariadb", files: []string{"binlog.000001"}, at: map[string]string{"binlog.000001:500": "0-1-3"}},
			want: Plan{Pos: change.Position{File: "binlog.000001", Offset: 500}}},
		{name: "MySQL, another server_uuid", addr: "b:3306",
			cp:    &Checkpoint{File: "binlog.000001", Offset: 500, ServerUUID: "aaaa", Server: "a:3306"},
			srv:   &fakeServer{flavor: "mysql", files: []string{"binlog.000001"}, uuid: "bbbb"},
			wants: []string{"server_uuid aaaa", "this one's is bbbb"}},
		{name: "MySQL, the same server", addr: "a:3306",
			cp:   &Checkpoint{File: "binlog.000001", Offset: 500, ServerUUID: "aaaa", LastGTID: "aaaa:5"},
			srv:  &fakeServer{flavor: "mysql", files: []string{"binlog.000001"}, uuid: "AAAA", subset: true},
			want: Plan{Pos: change.Position{File: "binlog.000001", Offset: 500}}},
		{name: "MySQL, GTID not executed", addr: "a:3306",
			cp:    &Checkpoint{File: "binlog.000001", Offset: 500, LastGTID: "aaaa:5"},
			srv:   &fakeServer{flavor: "mysql", files: []string{"binlog.000001"}, uuid: "aaaa"},
			wants: []string{"has not executed its last transaction aaaa:5"}},
	} {
		got, err := Resume(context.Background(), c.srv, c.cp, path, c.addr)
		text := got.Note
		if err != nil {
			var pe *binlog.PreflightError
			if !errors.As(err, &pe) {
				t.Errorf("%s: %T %v, want a PreflightError", c.name, err, err)
				continue
			}
			text = pe.Problem + " hint: " + pe.Hint
			if c.want != (Plan{}) {
				t.Errorf("%s: %v, want %+v", c.name, err, c.want)
				continue
			}
			if !strings.Contains(text, path) {
				t.Errorf("%s: the error does not name the checkpoint file: %s", c.name, text)
			}
		} else {
			if c.want == (Plan{}) {
				t.Errorf("%s: resumed at %+v, want an error", c.name, got)
				continue
			}
			if got.Pos != c.want.Pos || got.GTIDSet != c.want.GTIDSet {
				t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
			}
			if len(c.wants) == 0 && got.Note != "" {
				t.Errorf("%s: note %q on a plain resume", c.name, got.Note)
			}
		}
		for _, w := range c.wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", c.name, text, w)
			}
		}
	}
}

// A GTID position that lacks some of the server's domains cannot resume
// by GTID: the server would start those domains from the beginning.
func TestResumeByGTIDNeedsEveryDomain(t *testing.T) {
	srv := &fakeServer{flavor: "mariadb", files: []string{"c-bin.000001"}, at: map[string]string{"c-bin.000001:4": ""}, state: "0-1-22,1-1-5,0-2-30"}
	cp := &Checkpoint{File: "mysql-bin.000006", Offset: 1234, LastGTID: "0-1-22"}
	_, err := Resume(context.Background(), srv, cp, "cp.json", "c:3306")
	if err == nil || !strings.Contains(err.Error(), "lacks the server's GTID domain(s) 1") {
		t.Errorf("Resume = %v", err)
	}
	cp.GTIDSet = "0-1-22,1-1-5"
	if p, err := Resume(context.Background(), srv, cp, "cp.json", "c:3306"); err != nil || p.GTIDSet != "0-1-22,1-1-5" {
		t.Errorf("Resume = %+v, %v", p, err)
	}
}

// Where the GTIDs match at the position, the XID of the transaction that
// ends there must be the checkpoint's: servers with one server_id log
// the same GTIDs. Unless one of the two servers logged it as a replica.
func TestResumeChecksXid(t *testing.T) {
	srv := &fakeServer{flavor: "mariadb", files: []string{"binlog.000001"}, at: map[string]string{"binlog.000001:1774": "0-1-7"},
		state: "0-1-9", xids: map[string]uint64{"binlog.000001:1774": 40}, id: 1}
	cp := &Checkpoint{File: "binlog.000001", Offset: 1774, LastGTID: "0-1-7", GTIDSet: "0-1-7", LastXid: 40, Server: "a:3306"}
	if p, err := Resume(context.Background(), srv, cp, "cp.json", "a:3306"); err != nil || p.Pos != cp.Position() {
		t.Errorf("the same xid: %+v, %v", p, err)
	}
	cp.LastXid = 33
	_, err := Resume(context.Background(), srv, cp, "cp.json", "b:3306")
	if err == nil || !strings.Contains(err.Error(), "(xid 33) is another one than this server's 0-1-7 ending at binlog.000001:1774 (xid 40)") {
		t.Errorf("another xid: %v", err)
	}
	cp.ServerID = 1 // saved against a server with server_id 1: the same
	if _, err := Resume(context.Background(), srv, cp, "cp.json", "b:3306"); err == nil || !strings.Contains(err.Error(), "is another one") {
		t.Errorf("another xid, both servers with the GTID's server_id: %v", err)
	}
	// A replica logs its primary's transactions with XIDs of its own, at
	// the same positions when it followed the primary from the start:
	// after a failover to it (server_id 2), or from it back to the primary.
	srv.id = 2
	if p, err := Resume(context.Background(), srv, cp, "cp.json", "r:3306"); err != nil || p.Pos != cp.Position() {
		t.Errorf("a replica's xid: %+v, %v", p, err)
	}
	srv.id, cp.ServerID = 1, 2
	if p, err := Resume(context.Background(), srv, cp, "cp.json", "a:3306"); err != nil || p.Pos != cp.Position() {
		t.Errorf("saved against a replica, resumed on the primary: %+v, %v", p, err)
	}
	cp.ServerID = 0
	delete(srv.xids, "binlog.000001:1774")
	if _, err := Resume(context.Background(), srv, cp, "cp.json", "b:3306"); err == nil || !strings.Contains(err.Error(), "no XID event ends there") {
		t.Errorf("no XID event: %v", err)
	}
	cp.LastXid = 0 // a DDL, or a checkpoint of an older binlogcdc
	if _, err := Resume(context.Background(), srv, cp, "cp.json", "b:3306"); err != nil {
		t.Errorf("without an xid: %v", err)
	}
}

// A checkpoint ahead of the server (a promoted replica that had not
// received the primary's last transactions) is refused as such, naming
// the transactions the server lacks; one of another history is foreign.
func TestResumeAhead(t *testing.T) {
	srv := &fakeServer{flavor: "mariadb", files: []string{"binlog.000001", "binlog.000002"}, state: "0-1-55,0-2-57", id: 2}
	cp := &Checkpoint{File: "binlog.000003", Offset: 900, LastGTID: "0-1-60", GTIDSet: "0-1-60", Server: "a:3306"}
	_, err := Resume(context.Background(), srv, cp, "cp.json", "r:3306")
	if err == nil || !strings.Contains(err.Error(), "is ahead of this server (r:3306): it was saved after 0-1-60") ||
		!strings.Contains(err.Error(), "the transactions 0-1-56 … 0-1-60 were delivered, and this server never logged them") {
		t.Errorf("ahead: %v", err)
	}
	cp.GTIDSet, cp.LastGTID = "0-3-60", "0-3-60"
	if _, err := Resume(context.Background(), srv, cp, "cp.json", "r:3306"); err == nil || !strings.Contains(err.Error(), "does not belong to this server") {
		t.Errorf("another history: %v", err)
	}
}
