package archive

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/mysqlsynth"
)

func TestParseState(t *testing.T) {
	st, err := parseState("1-2-5, 0-1-100,0-3-7")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.String(); got != "0-1-100,1-2-5" {
		t.Errorf("state %s", got)
	}
	for g, want := range map[gtid]bool{{0, 9, 100}: true, {0, 1, 101}: false, {1, 2, 4}: true, {2, 1, 1}: false} {
		if st.covers(g) != want {
			t.Errorf("covers(%s) = %v", g, !want)
		}
	}
	for _, bad := range []string{"0-1", "a-b-c", "0-1-2-3", "-1-1-1"} {
		if _, err := parseState(bad); err == nil {
			t.Errorf("parseState(%q) took it", bad)
		}
	}
}

// TestTrackFile follows the transactions of the test binlogs: each ends
// after its start, the positions grow, the fingerprints differ.
func TestTrackFile(t *testing.T) {
	for _, name := range []string{"shop.binlog", "alltypes.binlog", "minimal.binlog"} {
		path := filepath.Join("..", "testdata", name)
		var txs []*txInfo
		tr, err := trackFile(path, 0, func(tx *txInfo) error { txs = append(txs, tx); return nil })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(txs) == 0 || tr.last != txs[len(txs)-1] {
			t.Fatalf("%s: %d transactions", name, len(txs))
		}
		seen := map[[32]byte]bool{}
		for i, tx := range txs {
			if tx.end <= tx.start || tx.before.covers(tx.gtid) || (i > 0 && tx.start < txs[i-1].end) {
				t.Errorf("%s: transaction %d: %+v", name, i, tx)
			}
			if seen[tx.sum] {
				t.Errorf("%s: transaction %d (%s) has another's fingerprint", name, i, tx.gtid)
			}
			seen[tx.sum] = true
		}
		// Cut short: the last whole transaction is an earlier one.
		data, _ := os.ReadFile(path)
		cut := filepath.Join(t.TempDir(), name)
		os.WriteFile(cut, data[:txs[len(txs)-1].end-1], 0o644)
		tr, err = trackFile(cut, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(txs) > 1 && (tr.last == nil || tr.last.gtid != txs[len(txs)-2].gtid) {
			t.Errorf("%s cut: last %+v", name, tr.last)
		}
	}
}

// FuzzTrackFile: any bytes give transactions or an error, never a panic.
func FuzzTrackFile(f *testing.F) {
	for _, name := range []string{"shop.binlog", "minimal.binlog"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Add([]byte{0xfe, 'b', 'i', 'n'})
	f.Add([]byte("0-1-100,1-2-5"))
	// A MySQL 8.0 file (PREVIOUS_GTIDS, GTID, DDL, a row transaction).
	a, _ := mysqlsynth.ParseUUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
	my, _ := mysqlsynth.NewFile(1, 1700000000, "8.0.36", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4")
	my.Event(mysqlsynth.GTIDEvent, 0, mysqlsynth.GTIDBody(a, 5, 1, 0, 0))
	my.Event(mysqlsynth.QueryEvent, 0, mysqlsynth.QueryBody("shop", "CREATE TABLE t (id INT)"))
	my.Tx(a, 6, "shop", "t", []mysqlsynth.Column{{Name: "id"}}, [][]mysqlsynth.Value{{int32(1)}})
	f.Add(my.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := newTxTracker()
		_ = eachEvent("fuzz", bytes.NewReader(data), func(h header, raw []byte, off int64) error {
			return tr.event(h, raw, off)
		})
		gtidListState(data)
		queryText(data)
		if st, err := parseState(string(data)); err == nil {
			if again, err := parseState(st.String()); err != nil || again.String() != st.String() {
				t.Errorf("parseState(%q) = %s, again %v %v", data, st, again, err)
			}
		}
	})
}
