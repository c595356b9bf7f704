package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/verify"
)

// noSync lines up nothing: the target is not being applied to.
type noSync struct{}

func (noSync) Hold(context.Context) error { return nil }
func (noSync) At(_ context.Context, _ verify.Querier, _ string, open func() error) error {
	return open()
}
func (noSync) Release() {}

// TestVerifyNotTransactional: no consistent snapshot covers a MyISAM or
// Aria table. A live comparison (with Sync) reports it NOT VERIFIED,
// neither equal nor differing; verify compares it and warns that the
// result cannot be trusted if the source changed.
func TestVerifyNotTransactional(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE e", "USE e", "CREATE TABLE my (id INT PRIMARY KEY) ENGINE=MyISAM",
			"CREATE TABLE ar (id INT PRIMARY KEY) ENGINE=Aria", "CREATE TABLE inno (id INT PRIMARY KEY)",
			"INSERT INTO my VALUES (1)", "INSERT INTO ar VALUES (1)", "INSERT INTO inno VALUES (1)")
	}
	dst.Exec(t, "INSERT INTO e.my VALUES (2)")

	rep, out := run(t, src, dst, verify.Options{Sync: noSync{}})
	t.Logf("live:\n%s", out)
	if len(rep.Differing()) != 0 || len(rep.Tables) != 3 {
		t.Errorf("live: want no differing table of 3")
	}
	for _, want := range []string{"NOT VERIFIED `e`.`ar` (engine Aria is not transactional)\n",
		"NOT VERIFIED `e`.`my` (engine MyISAM is not transactional)\n", "ok      `e`.`inno`: 1 rows equal",
		"all 1 verified tables are equal; 2 NOT VERIFIED\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("live: the report lacks %q", want)
		}
	}
	for _, tb := range rep.Tables {
		if tb.Equal() != (tb.Name == "inno") {
			t.Errorf("live: %s.Equal() = %v", tb.Name, tb.Equal())
		}
	}

	rep, out = run(t, src, dst, verify.Options{})
	t.Logf("offline:\n%s", out)
	if len(rep.Differing()) != 1 || !strings.Contains(out, "DIFFERS `e`.`my`") {
		t.Errorf("offline: want e.my compared and differing")
	}
	for _, name := range []string{"`e`.`my` uses the engine MyISAM", "`e`.`ar` uses the engine Aria"} {
		if !strings.Contains(out, "warning: "+name+", which is not transactional: no consistent snapshot covers it, so its result cannot be trusted if the source changed") {
			t.Errorf("offline: no warning for %s", name)
		}
	}
}

// TestVerifyWhere: Options.Where compares only the rows of a key range
// (a live verification's chunk): a difference outside is not seen, one
// inside is named, and the counts are the range's.
func TestVerifyWhere(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE w", "USE w", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t SELECT seq, seq FROM seq_1_to_2000",
			"CREATE TABLE k (id VARCHAR(10) PRIMARY KEY, v INT)", "INSERT INTO k SELECT seq, seq FROM seq_1_to_20")
	}
	dst.Exec(t, "UPDATE w.t SET v = 0 WHERE id IN (3, 1500)", "UPDATE w.k SET v = 0 WHERE id = '3'")
	one := func(db, table string) bool { return table == "t" }
	rep, out := run(t, src, dst, verify.Options{Select: one, Where: "(`id` > 1000) AND (`id` <= 1999)"})
	t.Logf("\n%s", out)
	if len(rep.Tables) != 1 || rep.Tables[0].SourceRows != 999 || !strings.Contains(out, "  changed `id`=1500\n") || strings.Contains(out, "`id`=3\n") {
		t.Errorf("want 999 rows and id 1500 changed, not 3")
	}
	rep, out = run(t, src, dst, verify.Options{Select: one, Where: "`id` > 1500"})
	if len(rep.Differing()) != 0 || rep.Tables[0].SourceRows != 500 {
		t.Errorf("the rows after 1500: want 500 equal:\n%s", out)
	}
	// A key that is not an integer: named through hash buckets.
	rep, out = run(t, src, dst, verify.Options{Select: func(db, table string) bool { return table == "k" }, Where: "`id` < '5'"})
	if rep.Tables[0].SourceRows != 15 || !strings.Contains(out, "  changed `id`='3'\n") {
		t.Errorf("the text key range: want 15 rows, '3' changed:\n%s", out)
	}
}
