package e2e

// Errors that say what to do (issue 12 item 11): a refused connection, a
// host that does not resolve, a row larger than max_allowed_packet.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestConnectErrors: a refused connection and an unknown host get a hint,
// for the source and the target alike.
func TestConnectErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "--source", "mysql://root@127.0.0.1:1"}, "nothing accepts connections at 127.0.0.1:1"},
		{[]string{"read", "--to", "mysql://root@127.0.0.1:1/", "../testdata/shop.binlog"}, "nothing accepts connections at 127.0.0.1:1"},
		{[]string{"stream", "--source", "mysql://root@no-such-host.invalid:3306"}, `host name "no-such-host.invalid" does not resolve`},
	} {
		out, errText, code := runCLI(t, nil, c.args...)
		if code != 1 || len(out) != 0 || !strings.Contains(errText, "hint: ") || !strings.Contains(errText, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and a hint %q", c.args, code, errText, c.want)
		}
	}
}

// TestRowOverMaxAllowedPacket: against a target with a small
// max_allowed_packet, many rows that each fit are applied (in INSERTs that
// fit), and a row whose statement cannot fit stops the replay with a
// message naming the setting, not "connection reset by peer".
func TestRowOverMaxAllowedPacket(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--max-allowed-packet=65536"}})
	src.Exec(t, "CREATE DATABASE m", "CREATE TABLE m.t (id INT PRIMARY KEY, b LONGBLOB)", "BEGIN")
	for i := 0; i < 40; i++ {
		src.Exec(t, fmt.Sprintf("INSERT INTO m.t VALUES (%d, REPEAT('%c', 5000))", i, 'a'+i%26))
	}
	src.Exec(t, "COMMIT")
	src.FlushLogs(t)
	files := src.BinlogFiles(t)
	rpRun(t, 0, "read", "--to", dst.DSN()+"/", files[0])
	rpSame(t, "rows that fit", rpSnapshot(t, dst), rpSnapshot(t, src))

	src.Exec(t, "INSERT INTO m.t VALUES (100, REPEAT('x', 300000))")
	src.FlushLogs(t)
	files = src.BinlogFiles(t)
	_, errText, code := runCLI(t, nil, "read", "--to", dst.DSN()+"/", files[0], files[1])
	if code != 1 || !strings.Contains(errText, "max_allowed_packet (65536 bytes)") || !strings.Contains(errText, "SET GLOBAL max_allowed_packet") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and an error naming the target's max_allowed_packet", code, errText)
	}
}
