package e2e

// --start-position not on an event boundary (issue 12 item 8).

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStartInsideEvent: read names the event starts around a position
// inside an event instead of calling the file damaged; stream says the
// position is not an event start instead of "purged, rebuild the target".
func TestStartInsideEvent(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200))",
		"INSERT INTO d.t VALUES (1, REPEAT('x', 150)), (2, 'b')", "UPDATE d.t SET v = 'c' WHERE id = 2")
	file := src.BinlogFiles(t)[0]
	type ev struct{ pos, end uint64 }
	var evs []ev
	for _, r := range src.QueryStrings(t, "SHOW BINLOG EVENTS IN '"+filepath.Base(file)+"'") {
		p, _ := strconv.ParseUint(*r[1], 10, 64)
		e, _ := strconv.ParseUint(*r[4], 10, 64)
		evs = append(evs, ev{p, e})
	}
	tried := 0
	for _, e := range evs[1:] {
		for _, at := range []uint64{e.pos + 1, e.pos + 19, e.end - 1} {
			if at <= e.pos || at >= e.end {
				continue
			}
			tried++
			out, errText, code := runCLI(t, nil, "read", "--start-position", fmt.Sprintf("%s:%d", filepath.Base(file), at), file)
			want := fmt.Sprintf("nearest event starts are %d and %d", e.pos, e.end)
			if code != 1 || len(out) != 0 || !strings.Contains(errText, "is not the start of an event") || !strings.Contains(errText, want) || strings.Contains(errText, "damaged") {
				t.Errorf("read from %d (inside the event at %d): exit %d, %d bytes out, stderr %q; want exit 1 and %q", at, e.pos, code, len(out), errText, want)
			}
		}
	}
	t.Logf("%d positions inside %d events", tried, len(evs)-1)
	if _, errText, code := runCLI(t, nil, "read", "--start-position", filepath.Base(file)+":2", file); code != 1 || !strings.Contains(errText, "the first event starts at 4") {
		t.Errorf("read from 2: exit %d, stderr %q", code, errText)
	}
	// On an event start that is a transaction start it reads.
	rpRun(t, 0, "read", "--start-position", fmt.Sprintf("%s:%d", filepath.Base(file), evs[2].pos), file)

	// stream: the server refuses the position; the message says why.
	mid := evs[len(evs)/2]
	r := stStart(t, t.TempDir(), "inside", nil, "--source", src.DSN(), "--start-position", fmt.Sprintf("%s:%d", filepath.Base(file), mid.pos+3))
	code := r.wait(2 * time.Minute)
	errText := r.errText()
	if code != 5 || !strings.Contains(errText, "not the start of an event") || strings.Contains(errText, "purged") {
		t.Errorf("stream from inside an event: exit %d, stderr:\n%s\nwant exit 5, 'not the start of an event' and no 'purged'", code, errText)
	}
}
