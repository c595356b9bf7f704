package schemahist

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestShapeFromDDL(t *testing.T) {
	sh, err := ShapeFromCreate("CREATE TABLE t (id INT NOT NULL, u UUID, v VARCHAR(10), s INT INVISIBLE, "+
		"e ENUM('a','b') CHARACTER SET latin1, PRIMARY KEY (id)) DEFAULT CHARSET=utf8mb4", nil, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, alter := range []string{
		"ALTER TABLE t ADD COLUMN k INET6 FIRST, MODIFY v VARCHAR(3) NOT NULL AFTER e, DROP COLUMN s",
		"ALTER TABLE t CHANGE u uu UUID NOT NULL, ADD INDEX (v), ENGINE=InnoDB",
		"ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (uu, v(2))",
		"ALTER TABLE t RENAME COLUMN e TO e2, ADD x TEXT INVISIBLE",
		"ALTER TABLE t CONVERT TO CHARACTER SET latin1",
	} {
		if sh, err = sh.ApplyAlter(alter, true); err != nil {
			t.Fatalf("%s: %v", alter, err)
		}
	}
	var got []string
	for i := range sh.T.Columns {
		c := &sh.T.Columns[i]
		def, err := tablemap.ColumnDefinition(c, true)
		if err != nil {
			t.Fatal(err)
		}
		if tn := sh.TypeNames[strings.ToLower(c.Name)]; tn != "" {
			def = tn + " (" + def + ")"
		}
		got = append(got, c.Name+" "+def)
	}
	want := []string{
		"k INET6 (BINARY(16) NULL)",
		"id INT NOT NULL",
		"uu UUID (BINARY(16) NOT NULL)",
		"e2 ENUM('a','b') CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL",
		"v VARCHAR(3) CHARACTER SET latin1 COLLATE latin1_swedish_ci NOT NULL",
		"x TEXT CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL INVISIBLE",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pk := strings.Join(sh.pkNames(), ","); pk != "uu,v" || sh.T.PrimaryKeyPrefix[1] != 2 {
		t.Errorf("primary key %s %v", pk, sh.T.PrimaryKeyPrefix)
	}
	// What it does not read, it refuses.
	for _, alter := range []string{
		"ALTER TABLE t MODIFY v VARCHAR(3) AS (k) VIRTUAL",
		"ALTER TABLE t FROBNICATE v",
		"ALTER TABLE t MODIFY nosuch INT",
	} {
		if _, err := sh.ApplyAlter(alter, true); err == nil {
			t.Errorf("%s: no error", alter)
		}
	}
}

// DDL text comes from the binlog: no statement may panic the derivation.
func FuzzDeriveSchema(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin1 DEFAULT 'x' COMMENT 'c', e ENUM('a','b'), KEY (v))",
		"ALTER TABLE t ADD COLUMN (a INT, b UUID FIRST), MODIFY v VARCHAR(3) AFTER e, DROP PRIMARY KEY, ADD PRIMARY KEY (a, v(2))",
		"ALTER TABLE t CHANGE e e2 SET('x') NOT NULL, ALTER COLUMN a SET DEFAULT (1+2), CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
		"ALTER IGNORE TABLE t RENAME COLUMN a TO b, DROP COLUMN IF EXISTS zz, ENGINE=InnoDB, DEFAULT CHARSET=latin1",
		"DROP INDEX `PRIMARY` ON t",
		"ALTER TABLE t MODIFY v DECIMAL(65,30) UNSIGNED ZEROFILL, MODIFY x DATETIME(6) ON UPDATE CURRENT_TIMESTAMP(6)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		sh, err := ShapeFromCreate(sql, nil, 45, true)
		if err != nil {
			if sh, err = ShapeFromCreate("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), e ENUM('a'))", nil, 45, true); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := sh.ApplyAlter(sql, true); err == nil {
			for _, i := range n.T.PrimaryKey {
				if i < 0 || i >= len(n.T.Columns) {
					t.Fatalf("primary key index %d of %d columns", i, len(n.T.Columns))
				}
			}
		}
	})
}
