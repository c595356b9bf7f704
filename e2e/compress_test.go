package e2e

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// workload is run on both servers of TestCompressed: DDL, inserts of
// many types and sizes, multi-statement transactions, updates, deletes.
var compressWorkload = []string{
	"CREATE DATABASE cz", "USE cz", "SET SESSION sql_mode = ''",
	`CREATE TABLE t (id INT PRIMARY KEY, n BIGINT UNSIGNED, d DECIMAL(20,6), f DOUBLE, s VARCHAR(2000),
		tx TEXT CHARACTER SET latin1, b BLOB, dt DATETIME(6), ts TIMESTAMP(3) NULL, e ENUM('a','b'), st SET('x','y'), j JSON)`,
	`INSERT INTO t VALUES (1, 18446744073709551615, -12345.678901, 2.5, REPEAT('abc😀', 300), REPEAT('café ', 100),
		REPEAT(X'00FF', 500), '2024-06-15 12:34:56.123456', '2024-06-15 12:34:56.789', 'b', 'x,y', '{"k": [1, 2, 3]}')`,
	`INSERT INTO t VALUES (2, 0, 0, 0, '', '', '', '0000-00-00 00:00:00', NULL, '', '', NULL), (3, 1, 1, 1, 's', 't', 'b', NULL, NULL, 'a', 'x', '[]')`,
	"BEGIN",
	"INSERT INTO t (id, s) SELECT seq + 100, REPEAT(CHAR(64 + seq MOD 26), seq * 10) FROM seq_1_to_50",
	"UPDATE t SET s = CONCAT(s, '-updated'), n = n DIV 2 WHERE id <= 3",
	"COMMIT",
	"ALTER TABLE t ADD COLUMN extra VARCHAR(100) DEFAULT 'dflt', DROP COLUMN f",
	"UPDATE t SET extra = REPEAT('e', 90) WHERE id MOD 3 = 0",
	"DELETE FROM t WHERE id > 120",
	"CREATE TABLE small (id INT PRIMARY KEY, v TINYINT)",
	"INSERT INTO small VALUES (1, 1)",
	"DELETE FROM small",
	"DROP TABLE small",
}

// stripVolatile drops the ts, pos and gtid fields (the last ones of a line).
func stripVolatile(line string) string {
	if i := strings.LastIndex(line, `,"ts":"`); i >= 0 {
		return line[:i]
	}
	return line
}

// countEventTypes counts the event types of a server's binlogs.
func countEventTypes(t testing.TB, srv *testserver.Server) map[replication.EventType]int {
	t.Helper()
	src, err := binlog.OpenFiles([]string{srv.BinlogIndex()}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := map[replication.EventType]int{}
	for {
		ev, err := src.Next(context.Background())
		if err != nil {
			if err == io.EOF {
				break
			}
			t.Fatal(err)
		}
		n[ev.Type()]++
	}
	return n
}

// TestCompressed: a server with log_bin_compress=ON writes MariaDB's
// compressed query and rows events; decoding its binlog gives the same
// JSON (ts, pos and gtid aside) as an uncompressed server that ran the
// same workload.
func TestCompressed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	out := map[bool][]string{}
	types := map[bool]map[replication.EventType]int{}
	t.Run("servers", func(t *testing.T) {
		for _, compress := range []bool{false, true} {
			t.Run(map[bool]string{false: "plain", true: "compressed"}[compress], func(t *testing.T) {
				t.Parallel()
				srv := testserver.Start(t, testserver.Options{Compress: compress})
				srv.Exec(t, compressWorkload...)
				var lines []string
				for _, r := range DecodeServer(t, srv) {
					lines = append(lines, stripVolatile(r.Line))
				}
				n := countEventTypes(t, srv)
				mu.Lock()
				out[compress], types[compress] = lines, n
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	compressed := []replication.EventType{
		replication.MARIADB_QUERY_COMPRESSED_EVENT, replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1,
	}
	for _, et := range compressed {
		if types[true][et] == 0 {
			t.Errorf("the compressed server wrote no %v", et)
		}
		if types[false][et] != 0 {
			t.Errorf("the uncompressed server wrote %d %v", types[false][et], et)
		}
	}
	plain, comp := out[false], out[true]
	if len(plain) < 60 {
		t.Fatalf("only %d records from the uncompressed server", len(plain))
	}
	if len(plain) != len(comp) {
		t.Errorf("%d records uncompressed, %d compressed", len(plain), len(comp))
	}
	for i := 0; i < min(len(plain), len(comp)); i++ {
		if plain[i] != comp[i] {
			t.Errorf("record %d differs:\nuncompressed: %s\ncompressed:   %s", i, clip(plain[i]), clip(comp[i]))
		}
	}
}
