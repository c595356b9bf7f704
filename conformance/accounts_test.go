package conformance

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// TestAccountPasswordsRedacted: a MariaDB operator's real binlogs hold
// CREATE USER and ALTER USER with plaintext passwords. DDL records keep
// the statements (kind "account") without them.
func TestAccountPasswordsRedacted(t *testing.T) {
	const dir = "mariadb-operator__mariadb-poc/mariadb-binlog__binlogs__"
	for _, rel := range []string{"domain_id_0__mariadb-repl-bin.000009", "domain_id_0__mariadb-repl-bin.000010", "domain_id_1__mariadb-repl-bin.000002"} {
		raw := readFixture(t, dir+rel)
		var buf bytes.Buffer
		sk := jsonl.New(&buf, jsonl.Options{})
		err := pipeline.New(openFile(t, fixture(t, dir+rel)), sk, pipeline.Options{DDL: true}).Run(context.Background())
		if cerr := sk.Close(context.Background()); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		out := buf.String()
		for _, pw := range []string{"MariaDB11!", "zk<9ZL)lpRoe452n"} {
			if bytes.Contains(raw, []byte(pw)) && strings.Contains(out, pw) {
				t.Errorf("%s: the password %q is in the output", rel, pw)
			}
		}
		if n := strings.Count(out, `IDENTIFIED BY <redacted>`); bytes.Contains(raw, []byte("IDENTIFIED BY '")) && n == 0 {
			t.Errorf("%s: no redacted account statement in the output", rel)
		}
	}
}
