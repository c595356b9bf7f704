package verify_test

import (
	"context"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/verify"
)

// TestOneTableNames: a Run that selects one table (as a live
// verification does, table by table) reads the definitions of that one,
// also when its name has a backtick and non-ASCII letters and another
// table's name differs from it only in letter case.
func TestOneTableNames(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE `v€`", "CREATE TABLE `v€`.`a``b` (id INT PRIMARY KEY, v INT)", "INSERT INTO `v€`.`a``b` VALUES (1, 1)")
	}
	// The twin differs in every way; only on the target.
	dst.Exec(t, "CREATE TABLE `v€`.`A``b` (x VARCHAR(5) PRIMARY KEY)", "INSERT INTO `v€`.`A``b` VALUES ('z')")
	ctx := context.Background()
	run := func(name string) *verify.Report {
		t.Helper()
		rep, err := verify.Run(ctx, src.Conn(t), dst.Conn(t), verify.Options{Select: func(db, table string) bool { return db == "v€" && table == name }})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run("a`b"); len(rep.Tables) != 1 || len(rep.Differing()) != 0 {
		t.Errorf("a`b alone: %d tables, %d differ (%v)", len(rep.Tables), len(rep.Differing()), rep.Tables)
	}
	if rep := run("A`b"); len(rep.Tables) != 1 || len(rep.Differing()) != 1 || rep.Tables[0].Name != "A`b" {
		t.Errorf("A`b alone (only on the target): %v", rep.Tables)
	}
	names, err := verify.ListTables(dst.Conn(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Errorf("ListTables on the target: %v, want both tables", names)
	}
}
