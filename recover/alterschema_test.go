package recovery

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestShapeFromDDL(t *testing.T) {
	sh, err := shapeFromCreate("CREATE TABLE t (id INT NOT NULL, u UUID, v VARCHAR(10), s INT INVISIBLE, "+
		"e ENUM('a','b') CHARACTER SET latin1, PRIMARY KEY (id)) DEFAULT CHARSET=utf8mb4", nil, true)
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
		if sh, err = sh.applyAlter(alter, true); err != nil {
			t.Fatalf("%s: %v", alter, err)
		}
	}
	var got []string
	for i := range sh.t.Columns {
		c := &sh.t.Columns[i]
		def, err := tablemap.ColumnDefinition(c, true)
		if err != nil {
			t.Fatal(err)
		}
		if tn := sh.typeNames[strings.ToLower(c.Name)]; tn != "" {
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
	if pk := strings.Join(sh.pkNames(), ","); pk != "uu,v" || sh.t.PrimaryKeyPrefix[1] != 2 {
		t.Errorf("primary key %s %v", pk, sh.t.PrimaryKeyPrefix)
	}
	// What it does not read, it refuses.
	for _, alter := range []string{
		"ALTER TABLE t MODIFY v VARCHAR(3) AS (k) VIRTUAL",
		"ALTER TABLE t FROBNICATE v",
		"ALTER TABLE t MODIFY nosuch INT",
	} {
		if _, err := sh.applyAlter(alter, true); err == nil {
			t.Errorf("%s: no error", alter)
		}
	}
}
