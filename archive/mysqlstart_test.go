package archive

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/fixtures"
	"github.com/binlogcdc/binlogcdc/internal/mysqlsynth"
)

const (
	uuidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uuidB = "0ab1e9f0-1111-11ee-8888-000000000002"
)

// mysqlArchive writes an archive of three synthesized MySQL 8.0 files of
// a server A that also applies B's transactions: binlog.000001 holds
// A:1-3, binlog.000002 A:4-5, B:1, A:6, binlog.000003 (open) A:7-9.
// oldManifest: the manifest has no previous_gtids (written before they
// were recorded).
func mysqlArchive(t *testing.T, oldManifest bool) (string, *Manifest) {
	t.Helper()
	a, _ := mysqlsynth.ParseUUID(uuidA)
	b, _ := mysqlsynth.ParseUUID(uuidB)
	cols := []mysqlsynth.Column{{Name: "id"}, {Name: "note", Varchar: 20}}
	type tx struct {
		sid mysqlsynth.UUID
		gno int64
	}
	files := []struct {
		prev string
		txs  []tx
	}{
		{"", []tx{{a, 1}, {a, 2}, {a, 3}}},
		{uuidA + ":1-3", []tx{{a, 4}, {a, 5}, {b, 1}, {a, 6}}},
		{uuidB + ":1," + uuidA + ":1-6", []tx{{a, 7}, {a, 8}, {a, 9}}},
	}
	dir := t.TempDir()
	m := &Manifest{Format: 1, Flavor: "mysql", Source: "db1:3306", ServerID: 1}
	for i, f := range files {
		name := "binlog.00000" + itoa(i+1)
		fb, err := mysqlsynth.NewFile(1, uint32(1700000000+3600*i), "8.0.36", f.prev)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range f.txs {
			fb.Tx(x.sid, x.gno, "shop", "orders", cols, [][]mysqlsynth.Value{{int32(x.gno), "n"}})
		}
		complete := i < len(files)-1
		if complete {
			fb.Rotate("binlog.00000" + itoa(i+2))
		} else {
			fb.InUse()
		}
		data := fb.Bytes()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		e := &FileEntry{Name: name, Size: uint64(len(data)), Complete: complete,
			FirstGTID: mysqlsynth.UUID(f.txs[0].sid).String() + ":" + itoa(int(f.txs[0].gno)),
			LastGTID:  mysqlsynth.UUID(f.txs[len(f.txs)-1].sid).String() + ":" + itoa(int(f.txs[len(f.txs)-1].gno))}
		if complete {
			sum := sha256.Sum256(data)
			e.SHA256, e.End = hex.EncodeToString(sum[:]), "rotate"
		}
		if !oldManifest {
			// As the archiver records it (scan of the file: dir.go).
			s, err := scanOpen(filepath.Join(dir, name), e)
			if err != nil {
				t.Fatal(err)
			}
			e.PreviousGTIDs = s.stats.PreviousGTIDs
			if e.PreviousGTIDs == nil {
				t.Fatalf("%s: no previous_gtids noted", name)
			}
		}
		m.Files = append(m.Files, e)
	}
	writeManifest(t, dir, m)
	return dir, m
}

// mysqlGTIDs reads the plan's parts and returns the GTIDs of the
// transactions it delivers (the plan's Skip applied).
func mysqlGTIDs(t *testing.T, p *ReadPlan) []string {
	t.Helper()
	src, err := binlog.OpenParts(p.Parts, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []string
	for {
		ev, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type() != replication.GTID_EVENT {
			continue
		}
		var u mysqlsynth.UUID
		copy(u[:], ev.Body[1:17])
		g := u.String() + ":" + itoa(int(binary.LittleEndian.Uint64(ev.Body[17:])))
		if p.Skip == nil || !p.Skip(ev.Pos, g) {
			out = append(out, strings.Replace(strings.Replace(g, uuidA, "A", 1), uuidB, "B", 1))
		}
	}
}

// TestMySQLStartGTID: --start-gtid SET on a MySQL archive reads every
// transaction not in SET (as a MySQL server does for a replica whose
// executed set is SET), from the first file holding one, chosen by the
// files' PREVIOUS_GTIDS sets: from the manifest, or from the files when
// an older manifest lacks them.
func TestMySQLStartGTID(t *testing.T) {
	for _, old := range []bool{false, true} {
		dir, _ := mysqlArchive(t, old)
		for _, c := range []struct{ set, files, gtids string }{
			{"", "binlog.000001 binlog.000002 binlog.000003", "[A:1 A:2 A:3 A:4 A:5 B:1 A:6 A:7 A:8 A:9]"},
			{uuidA + ":1-3", "binlog.000002 binlog.000003", "[A:4 A:5 B:1 A:6 A:7 A:8 A:9]"},
			{strings.ToUpper(uuidA) + ":1-5", "binlog.000002 binlog.000003", "[B:1 A:6 A:7 A:8 A:9]"},
			{uuidA + ":1-6," + uuidB + ":1", "binlog.000003", "[A:7 A:8 A:9]"},
			{uuidA + ":1-6", "binlog.000002 binlog.000003", "[B:1 A:7 A:8 A:9]"},
			{uuidA + ":1-2:4-6," + uuidB + ":1", "binlog.000001 binlog.000002 binlog.000003", "[A:3 A:7 A:8 A:9]"},
			{uuidA + ":1-9," + uuidB + ":1", "binlog.000003", "[]"},
			// A transaction of another server (a backup taken on a
			// replica with its own writes): not in the archive, no matter.
			{uuidA + ":1-7," + uuidB + ":1,11111111-2222-3333-4444-555555555555:1-50", "binlog.000003", "[A:8 A:9]"},
		} {
			p, err := PlanRead(dir, ReadRange{StartGTID: c.set})
			if err != nil {
				t.Fatalf("old manifest %v, --start-gtid %q: %v", old, c.set, err)
			}
			if got := names(p); got != c.files {
				t.Errorf("old manifest %v, --start-gtid %q: files %s, want %s", old, c.set, got, c.files)
			}
			if got := sprint(mysqlGTIDs(t, p)); got != c.gtids {
				t.Errorf("old manifest %v, --start-gtid %q: read %s, want %s", old, c.set, got, c.gtids)
			}
		}
	}
}

// TestMySQLStartGTIDRefused: a set the archive cannot serve is refused
// before anything is read, with what is missing and why.
func TestMySQLStartGTIDRefused(t *testing.T) {
	dir, m := mysqlArchive(t, false)
	for _, c := range []struct{ set, want string }{
		{uuidA + ":1-2", ""}, // A:3 is in binlog.000001: fine
		{"0-1-5", "takes a MySQL GTID set"},
		{uuidA + ":1-12", "it holds " + uuidA + ":12, past the archive's last transaction of " + uuidA + ", " + uuidA + ":9"},
	} {
		_, err := PlanRead(dir, ReadRange{StartGTID: c.set})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("--start-gtid %s: %v, want %q", c.set, err, c.want)
		}
	}
	// binlog.000001 expired: a start that needs A:3 is refused, one
	// after it reads on.
	m.Files[0].Expired = true
	os.Remove(filepath.Join(dir, "binlog.000001"))
	writeManifest(t, dir, m)
	_, err := PlanRead(dir, ReadRange{StartGTID: uuidA + ":1-2"})
	if want := "the transactions " + uuidA + ":3 are not in the set and were logged in or before binlog.000001, which the archive no longer holds (expired"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("expired: %v, want %q", err, want)
	}
	p, err := PlanRead(dir, ReadRange{StartGTID: uuidA + ":1-3"})
	if err != nil || names(p) != "binlog.000002 binlog.000003" {
		t.Errorf("after the expired file: %v, %v", p, err)
	}
	// An archive begun after the transactions the set lacks.
	m.Files = m.Files[1:]
	writeManifest(t, dir, m)
	_, err = PlanRead(dir, ReadRange{StartGTID: uuidA + ":1"})
	if want := "the transactions " + uuidA + ":2-3 are not in the set and were logged before binlog.000002, the archive's first file: the archive began after them"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("began later: %v, want %q", err, want)
	}
}

// TestMySQLStartGTIDOpenLags: the open file's manifest entry lags behind
// the file (the manifest is not rewritten for each event): a set past
// the entry's last GTID but inside the file is read, not refused.
func TestMySQLStartGTIDOpenLags(t *testing.T) {
	dir, m := mysqlArchive(t, false)
	m.Files[2].LastGTID = uuidA + ":7"
	writeManifest(t, dir, m)
	p, err := PlanRead(dir, ReadRange{StartGTID: uuidA + ":1-8," + uuidB + ":1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sprint(mysqlGTIDs(t, p)); got != "[A:9]" {
		t.Errorf("read %s", got)
	}
}

// TestMySQLSet: lookups in sets with tagged GTIDs (MySQL 9.x), and the
// tagged PREVIOUS_GTIDS of a real MySQL 9.6 file.
func TestMySQLSet(t *testing.T) {
	s, err := parseMySQLSet(uuidA + ":1-3:7, " + uuidA + ":MyTag:2-4")
	if err != nil {
		t.Fatal(err)
	}
	for g, want := range map[string]bool{uuidA + ":1": true, uuidA + ":3": true, uuidA + ":4": false, uuidA + ":7": true, uuidA + ":8": false,
		uuidA + ":mytag:2": true, uuidA + ":mytag:5": false, uuidA + ":other:2": false, uuidB + ":1": false, "": false, "x": false} {
		if s.has(g) != want {
			t.Errorf("has(%q) = %v", g, !want)
		}
	}
	if got := s.String(); got != uuidA+":1-3:7,"+uuidA+":mytag:2-4" {
		t.Errorf("String %s", got)
	}
	d, _ := parseMySQLSet(uuidA + ":2-7")
	if got := s.minus(d).String(); got != uuidA+":1,"+uuidA+":mytag:2-4" {
		t.Errorf("minus %s", got)
	}
	path := fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001")
	set, ok, err := filePreviousGTIDs(path)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if want := "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13,55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:1-2"; set != want {
		t.Errorf("tagged PREVIOUS_GTIDS %s, want %s", set, want)
	}
}

func sprint(v []string) string { return "[" + strings.Join(v, " ") + "]" }

// FuzzMySQLSet: a PREVIOUS_GTIDS body or a --start-gtid set of any bytes
// is decoded or refused, never a panic; what decodes prints as a set that
// parses to the same set.
func FuzzMySQLSet(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, uuidA+":1-5:7,"+uuidB+":tag:1")
	f.Add([]byte{}, "")
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		raw := append(make([]byte, binlog.HeaderSize), body...)
		if s, err := previousGTIDs(raw, false); err == nil {
			if _, err := parseMySQLSet(s); err != nil {
				t.Fatalf("%x decodes to %q, which does not parse: %v", body, s, err)
			}
		}
		previousGTIDs(raw, true)
		if s, err := parseMySQLSet(text); err == nil {
			again, err := parseMySQLSet(s.String())
			if err != nil || again.String() != s.String() {
				t.Fatalf("%q prints as %q, which parses to %v (%v)", text, s.String(), again, err)
			}
			s.has(text)
			s.minus(again)
		}
	})
}

// TestTrackMySQLTagged: the tracker follows a real MySQL 9.6 file's
// tagged transaction: its GTID uuid:tag:n and the set before it (the
// file's tagged PREVIOUS_GTIDS).
func TestTrackMySQLTagged(t *testing.T) {
	path := fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001")
	var txs []*txInfo
	if _, err := trackFile(path, 0, func(tx *txInfo) error { txs = append(txs, tx); return nil }); err != nil {
		t.Fatal(err)
	}
	const u = "55778904-0299-11f1-b1b8-4ef0c4956feb"
	if len(txs) != 1 || txs[0].my != u+":mytag:3" || txs[0].myBefore.String() != u+":1-13,"+u+":mytag:1-2" {
		for _, tx := range txs {
			t.Logf("%s after %s", tx.my, tx.myBefore)
		}
		t.Fatalf("%d transactions, want %s:mytag:3 after %s:1-13,%s:mytag:1-2", len(txs), u, u, u)
	}
}

// TestTrackMySQLDDL: a MySQL DDL transaction is its GTID event and one
// QUERY (no BEGIN): it ends there, and the next transaction's set before
// holds it.
func TestTrackMySQLDDL(t *testing.T) {
	a, _ := mysqlsynth.ParseUUID(uuidA)
	f, err := mysqlsynth.NewFile(1, 1700000000, "8.0.36", uuidA+":1-4")
	if err != nil {
		t.Fatal(err)
	}
	f.Event(mysqlsynth.GTIDEvent, 0, mysqlsynth.GTIDBody(a, 5, 1, 0, 0))
	f.Event(mysqlsynth.QueryEvent, 0, mysqlsynth.QueryBody("shop", "CREATE TABLE orders (id INT, note VARCHAR(20))"))
	f.Tx(a, 6, "shop", "orders", []mysqlsynth.Column{{Name: "id"}, {Name: "note", Varchar: 20}}, [][]mysqlsynth.Value{{int32(1), "x"}})
	path := filepath.Join(t.TempDir(), "binlog.000001")
	if err := os.WriteFile(path, f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	if _, err := trackFile(path, 0, func(tx *txInfo) error {
		got = append(got, strings.ReplaceAll(tx.my+" after "+tx.myBefore.String(), uuidA, "A"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "[A:5 after A:1-4 A:6 after A:1-5]"; sprint(got) != want {
		t.Errorf("got %s, want %s", sprint(got), want)
	}
}

// FuzzTaggedGTID: a GTID_TAGGED_LOG_EVENT of any bytes gives a GTID or
// "", never a panic (go-mysql's decoder reads it).
func FuzzTaggedGTID(f *testing.F) {
	f.Add([]byte{0x02, 0x78, 0, 0, 0, 0x02, 0xaa, 0xee, 0x25, 0x02, 0x08, 0x04, 0x65, 0x02, 0x22, 0xc5, 0x03, 0xc5, 0x02, 0xe1, 0x02, 0x9c, 0xc1, 0x03, 0x11, 0x03, 0x55, 0x02, 0xde, 0xad, 0x03, 0x04, 0x0c, 0x06, 0x0a, 'm', 'y', 't', 'a', 'g'})
	f.Fuzz(func(t *testing.T, body []byte) {
		raw := append(make([]byte, binlog.HeaderSize), body...)
		raw[4] = byte(replication.GTID_TAGGED_LOG_EVENT)
		gtidOf(parseHeader(raw), raw)
	})
}

// BenchmarkMySQLSetHas: the --start-gtid check each transaction of a read
// of a MySQL archive costs.
func BenchmarkMySQLSetHas(b *testing.B) {
	s, err := parseMySQLSet(uuidA + ":1-1000000:1000002-2000000," + uuidB + ":1-50")
	if err != nil {
		b.Fatal(err)
	}
	g := uuidA + ":1000001"
	b.ReportAllocs()
	for b.Loop() {
		if s.has(g) {
			b.Fatal("has")
		}
	}
}
