package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// TestStreamRestartBeforeFirstCommit (issue 27): "the same command after
// every restart" must hold from the first second, for every sink that
// keeps a checkpoint (--checkpoint FILE, --to mysql://, Kafka
// exactly-once) and every start mode (--from now, --from earliest,
// --start-position, --start-gtid, and --snapshot where it applies: a file
// checkpoint or --to), whatever ends the first run before its
// first commit: SIGTERM, kill -9, or (--to) a first transaction the target
// refuses. The source logged transactions before the start, so its GTID
// position there is not empty. A new stream --to used to save its start
// without a GTID, and the restart was refused ("does not belong to this
// server … it has no GTIDs", exit 5); a new exactly-once stream saved no
// start at all, and a restart --from now skipped what the source logged
// meanwhile. Each restart must deliver exactly the transactions after
// the start, once.
func TestStreamRestartBeforeFirstCommit(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	brokers := kafkatest.RealBrokers()
	if brokers == nil {
		brokers = kafkatest.Fake(t).ListenAddrs()
	}
	prefix := kafkatest.Prefix(t)
	dir := t.TempDir()
	sinks := []string{"file", "to", "kafka"}
	modes := []string{"now", "earliest", "start-position", "start-gtid"}
	type tcase struct{ sink, mode, stop, table string }
	var cases []tcase
	for _, sk := range sinks {
		ms := modes
		if sk != "kafka" { // --snapshot does not go with --kafka-exactly-once
			ms = append(ms[:len(ms):len(ms)], "snapshot")
		}
		for _, m := range ms {
			stops := []string{"sigterm", "kill9"}
			if sk == "to" && m != "snapshot" {
				stops = append(stops, "refused")
			}
			for _, st := range stops {
				cases = append(cases, tcase{sk, m, st, fmt.Sprintf("t%d", len(cases))})
			}
		}
	}
	src.Exec(t, "CREATE DATABASE rs")
	dst.Exec(t, "CREATE DATABASE rs")
	for _, c := range cases {
		ddl := "CREATE TABLE rs." + c.table + " (id INT PRIMARY KEY, v VARCHAR(40))"
		src.Exec(t, ddl, "INSERT INTO rs."+c.table+" VALUES (0, 'before the start')")
		dst.Exec(t, ddl, "INSERT INTO rs."+c.table+" VALUES (0, 'before the start')")
	}

	for _, c := range cases {
		t.Run(c.sink+"/"+c.mode+"/"+c.stop, func(t *testing.T) {
			// The newest binlog starts after every earlier transaction
			// (--from earliest starts there, at a non-empty GTID position).
			src.Exec(t, "FLUSH BINARY LOGS")
			file, off := stMasterPos(t, src)
			stPurgeTo(t, src, file)
			replica := "r-" + c.table
			args := []string{"--source", src.DSN(), "--tables", "rs." + c.table}
			switch c.mode {
			case "now", "earliest":
				args = append(args, "--from", c.mode)
			case "start-position":
				args = append(args, "--start-position", fmt.Sprintf("%s:%d", file, off))
			case "start-gtid":
				args = append(args, "--start-gtid", stLastGTID(t, src))
			case "snapshot": // copies row 0, then streams from there
				args = append(args, "--snapshot")
				if c.sink == "to" {
					dst.Exec(t, "DELETE FROM rs."+c.table)
				}
			}
			cpFile := filepath.Join(dir, c.table+".cp")
			// saved reports where the sink's checkpoint stands ("" none).
			var saved func() string
			switch c.sink {
			case "file":
				args = append(args, "--checkpoint", cpFile)
				saved = func() string {
					cp, err := checkpoint.Load(cpFile)
					if err != nil || cp == nil {
						return ""
					}
					// With --snapshot the test stops the first run after
					// its snapshot (which delivered row 0) and before its
					// first commit: a run stopped while it copies (a slow
					// machine) rightly copies row 0 again after the restart.
					var snap struct{ Done bool }
					if len(cp.Snapshot) > 0 && (json.Unmarshal(cp.Snapshot, &snap) != nil || !snap.Done) {
						return ""
					}
					return fmt.Sprintf("%s:%d", cp.File, cp.Offset)
				}
			case "to":
				args = append(args, "--to", dst.DSN()+"/", "--replica-name", replica, "--group-time", "10ms")
				saved = func() string {
					if stVal(t, dst, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'") == "0" {
						return ""
					}
					r := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = '"+replica+"' AND file <> ''")
					if len(r) != 1 {
						return ""
					}
					return *r[0][0]
				}
			case "kafka":
				args = append(args, "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix,
					"--kafka-exactly-once", "--kafka-replica-name", replica)
				saved = func() string {
					if cp := kfLastCheckpoint(t, brokers, prefix, replica); cp != nil {
						return fmt.Sprintf("%s:%d", cp.File, cp.Offset)
					}
					return ""
				}
			}
			insert := func(id int, v string) string {
				src.Exec(t, fmt.Sprintf("INSERT INTO rs.%s VALUES (%d, '%s')", c.table, id, v))
				return stLastGTID(t, src)
			}

			if c.stop == "refused" {
				// Replay refuses a table with triggers on the target.
				dst.Exec(t, "CREATE TRIGGER rs.refuse_"+c.table+" BEFORE INSERT ON rs."+c.table+
					" FOR EACH ROW SET NEW.v = NEW.v")
			}
			r := stStart(t, dir, c.table+"-1", nil, args...)
			stPoll(t, time.Minute, r, "the connection", r.ready)
			if c.mode != "start-gtid" { // a start position is saved before any transaction
				stPoll(t, time.Minute, r, "the start to be saved", func() bool { return saved() != "" })
			}
			switch c.stop {
			case "sigterm":
				r.signal(syscall.SIGTERM)
				if code := r.wait(time.Minute); code != 0 {
					t.Fatalf("first run: exit %d after SIGTERM:\n%s", code, r.errText())
				}
			case "kill9":
				r.kill9()
			case "refused":
				insert(1, "refused first")
				if code := r.wait(time.Minute); code == 0 || !strings.Contains(r.errText(), "has triggers on the target (refuse_"+c.table+")") {
					t.Fatalf("first run: exit %d, want the target's refusal:\n%s", code, r.errText())
				}
				dst.Exec(t, "DROP TRIGGER rs.refuse_"+c.table)
			}
			last := insert(2, "while stopped")
			endFile, end := stTxEnd(t, src, last)
			want := fmt.Sprintf("%s:%d", endFile, end)

			r = stStart(t, dir, c.table+"-2", nil, args...)
			stPoll(t, time.Minute, r, "the restart to deliver the transaction logged while it was stopped", func() bool { return saved() == want })
			r.signal(syscall.SIGTERM)
			if code := r.wait(time.Minute); code != 0 {
				t.Fatalf("restart: exit %d after SIGTERM:\n%s", code, r.errText())
			}

			// Exactly the rows after the start, once.
			wantRows := []string{"while stopped"}
			if c.stop == "refused" {
				wantRows = []string{"refused first", "while stopped"}
			}
			var got []string
			switch c.sink {
			case "file":
				out := string(r.outBytes())
				for _, v := range []string{"before the start", "refused first", "while stopped"} {
					for range strings.Count(out, `"`+v+`"`) {
						got = append(got, v)
					}
				}
			case "to":
				for _, row := range dst.QueryStrings(t, "SELECT v FROM rs."+c.table+" WHERE id > 0 ORDER BY id") {
					got = append(got, *row[0])
				}
			case "kafka":
				var topics []string
				for _, tp := range kafkatest.Topics(t, brokers, prefix+".rs."+c.table) {
					if tp == prefix+".rs."+c.table {
						topics = append(topics, tp)
					}
				}
				for _, rec := range kafkatest.Consume(t, brokers, topics, true) {
					for _, v := range []string{"before the start", "refused first", "while stopped"} {
						if strings.Contains(string(rec.Value), `"`+v+`"`) {
							got = append(got, v)
						}
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(wantRows, "|") {
				t.Errorf("delivered %q, want %q; restart's stderr:\n%s", got, wantRows, r.errText())
			}
		})
	}
}
