package binlog

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// History against a real MariaDB: the GTID position at a binlog
// position, the server's GTID state, and the XID of the transaction that
// ends at a position.
func TestHistory(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE h", "CREATE TABLE h.t (id INT PRIMARY KEY)", "INSERT INTO h.t VALUES (1)", "INSERT INTO h.t VALUES (2)")
	ctx := context.Background()
	h, err := OpenHistory(ctx, LiveConfig{Host: "127.0.0.1", Port: uint16(srv.Port), User: "root", ServerID: 99, Flavor: "mariadb"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	files, err := h.Binlogs(ctx)
	if err != nil || len(files) != 1 || files[0] != "binlog.000001" {
		t.Fatalf("Binlogs = %v, %v", files, err)
	}
	if st, err := h.GTIDState(ctx); err != nil || st != "0-1-4" {
		t.Errorf("GTIDState = %q, %v", st, err)
	}
	// The XID events, as SHOW BINLOG EVENTS lists them.
	type xidEv struct {
		end uint64
		xid uint64
	}
	var xids []xidEv
	var other uint64 // the end of an event that is no XID event
	for _, ev := range srv.QueryStrings(t, "SHOW BINLOG EVENTS IN 'binlog.000001'") {
		end, _ := strconv.ParseUint(*ev[4], 10, 64)
		if *ev[2] != "Xid" {
			other = end
			continue
		}
		_, after, _ := strings.Cut(*ev[5], "xid=")
		x, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(after, "*/")), 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", *ev[5], err)
		}
		xids = append(xids, xidEv{end, x})
	}
	if len(xids) != 2 {
		t.Fatalf("%d XID events, want 2", len(xids))
	}
	for i, x := range xids {
		got, ok, err := h.XidAt(ctx, "binlog.000001", x.end)
		if err != nil || !ok || got != x.xid {
			t.Errorf("XidAt(end of XID event %d) = %d, %v, %v; want %d", i, got, ok, err, x.xid)
		}
		if at, ok, err := h.GTIDPosAt(ctx, "binlog.000001", x.end); err != nil || !ok || at != "0-1-"+strconv.Itoa(3+i) {
			t.Errorf("GTIDPosAt(end of transaction 0-1-%d) = %q, %v, %v", 3+i, at, ok, err)
		}
	}
	for _, end := range []uint64{other, xids[0].end - 1, xids[1].end + 1, 1 << 40} {
		if got, ok, err := h.XidAt(ctx, "binlog.000001", end); err != nil || ok {
			t.Errorf("XidAt(%d) = %d, %v, %v; want no XID event", end, got, ok, err)
		}
	}
	for _, f := range []string{"binlog.000009", "x'; DROP TABLE h.t; --"} {
		if _, ok, err := h.XidAt(ctx, f, xids[0].end); err != nil || ok {
			t.Errorf("XidAt(%q) = %v, %v", f, ok, err)
		}
	}
	if _, ok, err := h.GTIDPosAt(ctx, "binlog.000001", xids[0].end-1); err != nil || ok {
		t.Errorf("GTIDPosAt(inside an event) = %v, %v", ok, err)
	}
	// The connection is still usable after the refused statements.
	if _, err := h.Binlogs(ctx); err != nil {
		t.Error(err)
	}
}
