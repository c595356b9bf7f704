package e2e

// binlogcdc archive and read DIR on MySQL, against a fake MySQL source
// (internal/testserver/mysqlsrc) serving synthesized MySQL 8.0 files
// (internal/mysqlsynth): MySQL cannot run on the test machine. What is
// checked is binlogcdc's side: the dump it asks for, the bytes it keeps,
// the manifest, and the reads.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/internal/mysqlsynth"
	"github.com/binlogcdc/binlogcdc/internal/testserver/mysqlsrc"
)

const (
	myUUIDA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	myUUIDB = "0ab1e9f0-1111-11ee-8888-000000000002"
)

var myCols = []mysqlsynth.Column{{Name: "id"}, {Name: "note", Varchar: 40}}

// myTx is one transaction: server uuid and number; it inserts a row of
// shop.orders with id = 100*server + gno, so that a read says which.
type myTx struct {
	sid string
	gno int64
}

func (x myTx) id() int32 {
	if x.sid == myUUIDB {
		return int32(200 + x.gno)
	}
	return int32(100 + x.gno)
}

// myFile synthesizes a MySQL 8.0 binlog file of server serverID: prev
// its PREVIOUS_GTIDS, then the transactions; next: it ends with a
// ROTATE to next, else it is still open (in-use flag).
func myFile(t *testing.T, serverID uint32, when uint32, prev string, txs []myTx, next string) []byte {
	t.Helper()
	f, err := mysqlsynth.NewFile(serverID, when, "8.0.36", prev)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range txs {
		u, err := mysqlsynth.ParseUUID(x.sid)
		if err != nil {
			t.Fatal(err)
		}
		f.Tx(u, x.gno, "shop", "orders", myCols, [][]mysqlsynth.Value{{x.id(), fmt.Sprintf("%s:%d", x.sid[:4], x.gno)}})
	}
	if next != "" {
		f.Rotate(next)
	} else {
		f.InUse()
	}
	return f.Bytes()
}

func txRange(sid string, from, to int64) []myTx {
	var out []myTx
	for g := from; g <= to; g++ {
		out = append(out, myTx{sid, g})
	}
	return out
}

// readIDs runs 'binlogcdc read args...' and returns the ids inserted, in
// order.
func readIDs(t *testing.T, args ...string) ([]string, string, int) {
	t.Helper()
	out, stderr, code := runCLI(t, nil, append([]string{"read"}, args...)...)
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Op    string         `json:"op"`
			After map[string]any `json:"after"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		ids = append(ids, fmt.Sprint(rec.After["id"]))
	}
	return ids, stderr, code
}

func wantIDs(txs []myTx) []string {
	var out []string
	for _, x := range txs {
		out = append(out, fmt.Sprint(x.id()))
	}
	return out
}

// myArchiveCmp checks that every file the fake source holds is in the
// archive dir, byte for byte.
func myArchiveCmp(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the archive's copy (%d bytes) differs from the source's (%d bytes) at byte %d", name, len(got), len(want), firstByteDiff(got, want))
		}
	}
}

// TestArchiveMySQLFake: archive from a MySQL source across rotations and
// a restart keeps its files byte for byte and records each file's
// PREVIOUS_GTIDS; read DIR --start-gtid SET gives exactly the
// transactions after SET, as read --source --start-gtid SET does from the
// source; a SET the archive cannot serve is refused.
func TestArchiveMySQLFake(t *testing.T) {
	srv := mysqlsrc.Start(t, mysqlsrc.Options{ServerID: 1, UUID: myUUIDA})
	f1 := txRange(myUUIDA, 1, 3)
	f2 := append(txRange(myUUIDA, 4, 5), myTx{myUUIDB, 1}, myTx{myUUIDA, 6})
	files := map[string][]byte{
		"binlog.000001": myFile(t, 1, 1700000000, "", f1, "binlog.000002"),
		"binlog.000002": myFile(t, 1, 1700003600, myUUIDA+":1-3", f2, ""),
	}
	srv.SetFile("binlog.000001", files["binlog.000001"])
	srv.SetFile("binlog.000002", files["binlog.000002"])
	srv.SetExecuted(myUUIDA + ":1-6," + myUUIDB + ":1")
	dir := filepath.Join(t.TempDir(), "arch")
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--from", "earliest", "--stop-at-end"); code != 0 {
		t.Fatalf("archive: exit %d\n%s\nunknown queries: %q", code, stderr, srv.Unknown())
	}
	myArchiveCmp(t, dir, files)

	// The server goes on: binlog.000002 gets more and is rotated, a
	// third file begins. The archiver, run again, resumes.
	f2b := append(f2, txRange(myUUIDA, 7, 8)...)
	f3 := txRange(myUUIDA, 9, 11)
	files["binlog.000002"] = myFile(t, 1, 1700003600, myUUIDA+":1-3", f2b, "binlog.000003")
	files["binlog.000003"] = myFile(t, 1, 1700007200, myUUIDA+":1-8,"+myUUIDB+":1", f3, "")
	srv.SetFile("binlog.000002", files["binlog.000002"])
	srv.SetFile("binlog.000003", files["binlog.000003"])
	srv.SetExecuted(myUUIDA + ":1-11," + myUUIDB + ":1")
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end"); code != 0 {
		t.Fatalf("archive again: exit %d\n%s\nunknown queries: %q", code, stderr, srv.Unknown())
	}
	myArchiveCmp(t, dir, files)
	var m struct {
		Flavor string `json:"flavor"`
		Files  []struct {
			Name     string  `json:"name"`
			Complete bool    `json:"complete"`
			Previous *string `json:"previous_gtids"`
		} `json:"files"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	wantPrev := []string{"", myUUIDA + ":1-3", myUUIDB + ":1," + myUUIDA + ":1-8"}
	if m.Flavor != "mysql" || len(m.Files) != 3 {
		t.Fatalf("manifest: %s", b)
	}
	for i, f := range m.Files {
		if f.Previous == nil || *f.Previous != wantPrev[i] {
			t.Errorf("%s: previous_gtids %v, want %q\n%s", f.Name, f.Previous, wantPrev[i], b)
		}
	}

	all := append(append(append([]myTx{}, f1...), f2b...), f3...)
	ids, stderr, code := readIDs(t, dir)
	if code != 0 || strings.Join(ids, " ") != strings.Join(wantIDs(all), " ") {
		t.Fatalf("read DIR: exit %d, ids %v, want %v\n%s", code, ids, wantIDs(all), stderr)
	}
	for _, c := range []struct {
		set  string
		want []myTx
		from string
	}{
		{myUUIDA + ":1-4", all[4:], "binlog.000002"},
		{myUUIDA + ":1-8," + myUUIDB + ":1", f3, "binlog.000003"},
		{myUUIDA + ":1-2:4-8," + myUUIDB + ":1", append([]myTx{{myUUIDA, 3}}, f3...), "binlog.000001"},
		{myUUIDA + ":1-11," + myUUIDB + ":1", nil, "binlog.000003"},
	} {
		ids, stderr, code := readIDs(t, dir, "--start-gtid", c.set)
		if code != 0 || strings.Join(ids, " ") != strings.Join(wantIDs(c.want), " ") {
			t.Errorf("read DIR --start-gtid %s: exit %d, ids %v, want %v\n%s", c.set, code, ids, wantIDs(c.want), stderr)
		}
		if !strings.Contains(stderr, "reading the archive "+dir+": "+c.from) {
			t.Errorf("read DIR --start-gtid %s: want it to start in %s:\n%s", c.set, c.from, stderr)
		}
		// The same set means the same with --source: the server's
		// COM_BINLOG_DUMP_GTID leaves out what the set holds.
		ids, stderr, code = readIDs(t, "--source", srv.DSN(), "--start-gtid", c.set)
		if code != 0 || strings.Join(ids, " ") != strings.Join(wantIDs(c.want), " ") {
			t.Errorf("read --source --start-gtid %s: exit %d, ids %v, want %v\n%s", c.set, code, ids, wantIDs(c.want), stderr)
		}
	}
	if q := srv.Unknown(); len(q) > 0 {
		t.Errorf("binlogcdc asked the fake source what it has no answer for: %q", q)
	}
	_, stderr, code = readIDs(t, dir, "--start-gtid", myUUIDA+":1-20")
	if code == 0 || !strings.Contains(stderr, "past the archive's last transaction of "+myUUIDA) {
		t.Errorf("a set past the archive: exit %d\n%s", code, stderr)
	}
}

// myFailoverSetup archives server 1 (uuid A: A:1-3 in binlog.000001, A:4-5
// in the open binlog.000002), then stops it.
func myFailoverSetup(t *testing.T) (dir string, files map[string][]byte) {
	t.Helper()
	srv := mysqlsrc.Start(t, mysqlsrc.Options{ServerID: 1, UUID: myUUIDA})
	files = map[string][]byte{
		"binlog.000001": myFile(t, 1, 1700000000, "", txRange(myUUIDA, 1, 3), "binlog.000002"),
		"binlog.000002": myFile(t, 1, 1700003600, myUUIDA+":1-3", txRange(myUUIDA, 4, 5), ""),
	}
	srv.SetFile("binlog.000001", files["binlog.000001"])
	srv.SetFile("binlog.000002", files["binlog.000002"])
	srv.SetExecuted(myUUIDA + ":1-5")
	dir = filepath.Join(t.TempDir(), "arch")
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--from", "earliest", "--stop-at-end"); code != 0 {
		t.Fatalf("archive: exit %d\n%s\nunknown queries: %q", code, stderr, srv.Unknown())
	}
	myArchiveCmp(t, dir, files)
	srv.Close()
	return dir, files
}

// TestArchiveMySQLFailover: the source replaced by a promoted replica
// (server_id 2, server_uuid B) whose binlogs hold A's transactions, then
// its own: the archive checks the replica executed the archive's last
// transaction A:5 and logged it with the same changes, goes on in
// history-2 from the replica's file holding A:5, byte for byte, and
// read DIR gives each transaction once, with or without --start-gtid.
func TestArchiveMySQLFailover(t *testing.T) {
	dir, _ := myFailoverSetup(t)
	rep := mysqlsrc.Start(t, mysqlsrc.Options{ServerID: 2, UUID: myUUIDB})
	// The replica's files: its own names, times and rotation points;
	// A's transactions as the replica logged them (server_id 1 in their
	// headers, as MySQL keeps the originating server's id).
	r1 := myFile(t, 1, 1700000100, "", txRange(myUUIDA, 1, 4), "replica-bin.000002")
	r2 := myFile(t, 1, 1700003700, myUUIDA+":1-4", append(txRange(myUUIDA, 5, 5), txRange(myUUIDB, 1, 2)...), "")
	rep.SetFile("replica-bin.000001", r1)
	rep.SetFile("replica-bin.000002", r2)
	rep.SetExecuted(myUUIDA + ":1-5," + myUUIDB + ":1-2")
	_, stderr, code := runCLI(t, nil, "archive", "--source", rep.DSN(), "--dir", dir, "--stop-at-end")
	if code != 0 {
		t.Fatalf("archive after the failover: exit %d\n%s\nunknown queries: %q", code, stderr, rep.Unknown())
	}
	if q := rep.Unknown(); len(q) > 0 {
		t.Errorf("binlogcdc asked the fake source what it has no answer for: %q", q)
	}
	if !strings.Contains(stderr, "it has the archive's last transaction "+myUUIDA+":5, the same") {
		t.Errorf("no note of the switch:\n%s", stderr)
	}
	myArchiveCmp(t, filepath.Join(dir, "history-2"), map[string][]byte{"replica-bin.000002": r2})
	if _, err := os.Stat(filepath.Join(dir, "history-2", "replica-bin.000001")); !os.IsNotExist(err) {
		t.Errorf("history-2 holds replica-bin.000001, which only repeats history 1: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "history-2", "binlogcdc-archive.json"))
	var m struct {
		Switch struct {
			After    string `json:"after"`
			LastGTID string `json:"last_gtid"`
		} `json:"switch"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Switch.After != myUUIDA+":1-5" || m.Switch.LastGTID != myUUIDA+":5" {
		t.Errorf("history-2's switch: %+v %v\n%s", m.Switch, err, b)
	}

	// archive.ReadList (the library's list): history 1 up to the end of
	// A:5, then replica-bin.000002 from B:1, its first transaction after
	// the switch.
	segs, err := archive.ReadList(dir)
	if err != nil || len(segs) != 3 {
		t.Fatalf("ReadList: %+v %v", segs, err)
	}
	if s := segs[2]; s.Name != "replica-bin.000002" || s.History != 2 || s.From <= 4 || r2[s.From+4] != mysqlsynth.GTIDEvent ||
		!bytes.Equal(r2[s.From+19+1:s.From+19+17], mustUUID(t, myUUIDB)) || r2[s.From+19+17] != 1 {
		t.Errorf("ReadList's history-2 segment %+v does not start at B:1", s)
	}
	if segs[1].Name != "binlog.000002" || segs[1].To == 0 {
		t.Errorf("ReadList's history-1 end %+v", segs[1])
	}

	all := append(txRange(myUUIDA, 1, 5), txRange(myUUIDB, 1, 2)...)
	for _, c := range []struct {
		set  string
		want []myTx
	}{
		{"", all},
		{myUUIDA + ":1-4", all[4:]},
		{myUUIDA + ":1-5", all[5:]},
		{myUUIDA + ":1-5," + myUUIDB + ":1", all[6:]},
	} {
		args := []string{dir}
		if c.set != "" {
			args = append(args, "--start-gtid", c.set)
		}
		ids, stderr, code := readIDs(t, args...)
		if code != 0 || strings.Join(ids, " ") != strings.Join(wantIDs(c.want), " ") {
			t.Errorf("read DIR --start-gtid %q: exit %d, ids %v, want %v\n%s", c.set, code, ids, wantIDs(c.want), stderr)
		}
	}
}

// TestArchiveMySQLFailoverRefused: a new source that has not executed the
// archive's last transaction, or logged it with other changes, is not
// taken for the archive's history: refused before anything is written.
func TestArchiveMySQLFailoverRefused(t *testing.T) {
	for _, c := range []struct {
		name     string
		executed string
		files    func(t *testing.T) []byte
		want     string
	}{
		{"missing", myUUIDA + ":1-4," + myUUIDB + ":1-2", func(t *testing.T) []byte {
			return myFile(t, 1, 1700000100, "", append(txRange(myUUIDA, 1, 4), txRange(myUUIDB, 1, 2)...), "")
		}, "has not executed " + myUUIDA + ":5"},
		{"other changes", myUUIDA + ":1-5", func(t *testing.T) []byte {
			f, _ := mysqlsynth.NewFile(1, 1700000100, "8.0.36", "")
			a, _ := mysqlsynth.ParseUUID(myUUIDA)
			for g := int64(1); g <= 5; g++ {
				note := fmt.Sprintf("%s:%d", myUUIDA[:4], g)
				if g == 5 {
					note = "not what the archive holds"
				}
				f.Tx(a, g, "shop", "orders", myCols, [][]mysqlsynth.Value{{int32(100 + g), note}})
			}
			f.InUse()
			return f.Bytes()
		}, "logged " + myUUIDA + ":5 with other changes than the archive holds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := myFailoverSetup(t)
			rep := mysqlsrc.Start(t, mysqlsrc.Options{ServerID: 2, UUID: myUUIDB})
			rep.SetFile("replica-bin.000001", c.files(t))
			rep.SetExecuted(c.executed)
			before, _ := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
			_, stderr, code := runCLI(t, nil, "archive", "--source", rep.DSN(), "--dir", dir, "--stop-at-end")
			if code == 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "it is not a replica that had every transaction of the archive") {
				t.Fatalf("exit %d, want a refusal saying %q:\n%s", code, c.want, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "history-2")); !os.IsNotExist(err) {
				t.Errorf("history-2 was created: %v", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
			if !bytes.Equal(before, after) {
				t.Errorf("the manifest changed:\n%s\n---\n%s", before, after)
			}
		})
	}
}

func mustUUID(t *testing.T, s string) []byte {
	t.Helper()
	u, err := mysqlsynth.ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u[:]
}
