package e2e

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestVerifyCLI replays the random workload of the replay tests with
// --to, proves the copy equal with 'binlogcdc verify', then changes the
// copy and expects verify to name each changed, missing and extra row.
func TestVerifyCLI(t *testing.T) {
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 400, true)
	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	rpCompare(t, src, dst, "read --to")

	out, _ := rpRun(t, 0, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/")
	t.Logf("equal:\n%s", out)
	if !strings.Contains(string(out), "tables are equal") || strings.Contains(string(out), "checkpoint") {
		t.Errorf("verify of an equal copy:\n%s", out)
	}

	// Every table is proven by its rows (--hash-rows is still taken).
	out, _ = rpRun(t, 0, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/", "--hash-rows")
	if strings.Count(string(out), "(SHA-256 of every row") != 6 {
		t.Errorf("verify --hash-rows:\n%s", out)
	}

	id := *one(t, src, "SELECT MIN(id) FROM rp.types")
	// A value vu cannot hold already (a VARCHAR(60) may be full, where
	// appending to it would change nothing).
	dst.Exec(t, "SET SESSION sql_mode = ''",
		"UPDATE rp.types SET vu = IF(vu <=> 'verify-changed', 'verify-changed-2', 'verify-changed') WHERE id = "+id,
		"INSERT INTO rp.comp VALUES (-1, 'verify-extra', 1)",
		"INSERT INTO rp.nopk VALUES ('verify-extra', 1, 0.5, NULL)")
	out, errOut := rpRun(t, 1, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/", "--exclude-tables", "rp.prefix")
	t.Logf("differing:\n%s", out)
	for _, want := range []string{
		"DIFFERS `rp`.`types`", "  changed `id`=" + id + "\n",
		"DIFFERS `rp`.`comp`", "  extra   `b`='verify-extra', `a`=-1\n",
		"DIFFERS `rp`.`nopk`", "  extra   ('verify-extra', 1, 0.5, NULL)\n",
		"3 of ",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verify output lacks %q", want)
		}
	}
	if strings.Contains(string(out), "`rp`.`prefix`") {
		t.Errorf("--exclude-tables rp.prefix was compared")
	}
	if !strings.Contains(errOut, "3 of") || !strings.Contains(errOut, "tables differ") {
		t.Errorf("stderr: %s", errOut)
	}
	// Only the selected tables.
	rpRun(t, 0, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/", "--tables", "rp.prefix", "--tables", "rp.gone")
	_, errOut = rpRun(t, 1, "verify", "--source", src.DSN(), "--to", "mysql://root:secret@127.0.0.1:1/")
	if !strings.Contains(errOut, "--to: 127.0.0.1:1") || strings.Contains(errOut, "secret") {
		t.Errorf("unreachable --to: %s", errOut)
	}
	_, errOut = rpRun(t, 2, "verify", "--source", src.DSN())
	if !strings.Contains(errOut, "--to is required") {
		t.Errorf("no --to: %s", errOut)
	}
}
