package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlogcdc/binlogcdc/internal/clock"
	"github.com/binlogcdc/binlogcdc/internal/fixtures"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// The formats' processing times (Debezium's ts_ms, Canal's ts) come from
// this clock in tests, so that their output is reproducible.
func init() {
	clock.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC) }
}

// formatVariants are the option sets the README recommends, each with
// the consumer whose rules its lines must pass.
var formatVariants = []struct {
	name  string
	args  []string
	check func(t *testing.T, line []byte)
}{
	// Kafka Connect's JsonConverter, schemas.enable=false: Debezium's
	// defaults.
	{"debezium", []string{"--format", "debezium"}, checkDebeziumEnvelope},
	// JsonConverter with schemas.enable=true: the payload must match
	// the schema.
	{"debezium-schema", []string{"--format", "debezium", "--with-schema"}, checkConnectSchema},
	{"debezium-connect", []string{"--format", "debezium", "--with-schema", "--debezium-time-precision-mode", "connect",
		"--debezium-decimal-handling-mode", "double", "--debezium-bigint-unsigned-handling-mode", "precise"}, checkConnectSchema},
	// Flink's debezium-json (and RisingWave): DECIMAL as strings.
	{"debezium-flink", []string{"--format", "debezium", "--with-schema", "--debezium-decimal-handling-mode", "string"}, checkFlinkDebezium},
	// JsonConverter with the string modes: ISO-8601 temporal text, hex
	// binary strings.
	{"debezium-iso", []string{"--format", "debezium", "--with-schema", "--debezium-time-precision-mode", "isostring",
		"--debezium-binary-handling-mode", "hex"}, checkConnectSchema},
	// Flink's maxwell-json.
	{"maxwell", []string{"--format", "maxwell"}, checkFlinkMaxwell},
	// Flink's canal-json.
	{"canal", []string{"--format", "canal", "--ddl"}, checkFlinkCanal},
}

// TestGoldenFormats writes every testdata/<case>.binlog in each format
// and compares with testdata/<case>.<variant>.jsonl (-update rewrites
// them), after checking each line against what the format's consumers
// require.
func TestGoldenFormats(t *testing.T) {
	binlogs, _ := filepath.Glob("../../testdata/*.binlog")
	if len(binlogs) == 0 {
		t.Fatal("no testdata/*.binlog")
	}
	for _, bl := range binlogs {
		name := strings.TrimSuffix(filepath.Base(bl), ".binlog")
		for _, v := range formatVariants {
			t.Run(name+"/"+v.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := run(append(append([]string{"read"}, v.args...), bl), &out, &errb)
				if name == "minimal" && strings.HasPrefix(v.name, "debezium") {
					// Debezium writes whole rows: partial images are refused.
					if code == 0 || !strings.Contains(errb.String(), "minimal.binlog:1069 (row 0): table m.t: column a is not in the row image") {
						t.Fatalf("exit %d, stderr %s; want the MINIMAL image refused", code, errb.String())
					}
					return
				}
				if name == "alltypes" && v.name == "debezium-iso" {
					// TIME beyond a day, which Debezium wraps around the clock.
					if code == 0 || !strings.Contains(errb.String(), "table t.times: column t6: TIME -838:59:58.999999 is outside a day") {
						t.Fatalf("exit %d, stderr %s; want TIME -838:59:58 refused", code, errb.String())
					}
					return
				}
				if name == "alltypes" && v.name == "debezium-connect" {
					// TIME beyond a day does not fit Kafka Connect's Time.
					if code == 0 || !strings.Contains(errb.String(), "table t.times: column t6: TIME -838:59:58.999999 is outside Kafka Connect's Time") {
						t.Fatalf("exit %d, stderr %s; want TIME -838:59:58 refused", code, errb.String())
					}
					return
				}
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
				for _, l := range lines {
					v.check(t, l)
				}
				checkGolden(t, strings.TrimSuffix(bl, ".binlog")+"."+v.name+".jsonl", out.Bytes())
			})
		}
	}
}

// TestFormatDDL: --ddl goes with every format (Maxwell's DDL records:
// e2e/maxwell_ddl_test.go; Debezium's schema changes:
// e2e/debezium_ddl_test.go).
func TestFormatDDL(t *testing.T) {
	for _, format := range []string{"maxwell", "debezium"} {
		code, stdout, stderr := runCmd("read", "--format", format, "--ddl", shopBinlog)
		if code != 0 || stdout == "" {
			t.Errorf("--format %s --ddl: exit %d, stderr %q", format, code, stderr)
		}
	}
}

// TestDebeziumDDLWithSchema: --format debezium --ddl --with-schema
// wraps each schema change record in {"schema":…,"payload":…} as
// JsonConverter's schemas.enable=true does; the payload matches its
// schema (JsonConverter's rules) and is the record without the schema.
// The schema itself: sink/envelope TestDebeziumSchemaChangeSchema.
func TestDebeziumDDLWithSchema(t *testing.T) {
	code, out, stderr := runCmd("read", "--format", "debezium", "--with-schema", "--ddl", shopBinlog)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, plain, _ := runCmd("read", "--format", "debezium", "--ddl", shopBinlog)
	lines, want := strings.Split(strings.TrimSpace(out), "\n"), strings.Split(strings.TrimSpace(plain), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records, %d without --with-schema", len(lines), len(want))
	}
	ts := regexp.MustCompile(`"ts_ms":\d+,"databaseName"`)
	n := 0
	for i, l := range lines {
		if !strings.Contains(l, `"databaseName":`) {
			continue
		}
		n++
		m := decodeLine(t, []byte(l))
		schema, _ := m["schema"].(map[string]any)
		if schema["name"] != "io.debezium.connector.mysql.SchemaChangeValue" || len(m) != 2 {
			t.Fatalf("record %d: %.200s", i, l)
		}
		if err := connectValue(schema, m["payload"]); err != "" {
			t.Errorf("record %d: payload does not match its schema: %s", i, err)
		}
		payload := l[strings.Index(l, `,"payload":`)+len(`,"payload":`) : len(l)-1]
		if got, w := ts.ReplaceAllString(payload, "TS"), ts.ReplaceAllString(want[i], "TS"); got != w {
			t.Errorf("record %d payload:\n got  %s\n want %s", i, got, w)
		}
	}
	if n == 0 {
		t.Fatal("no schema change records in the sample")
	}
}

func TestFormatUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--format", "maxwell", "--with-schema", shopBinlog}, "--with-schema needs --format debezium"},
		{[]string{"read", "--debezium-decimal-handling-mode", "string", shopBinlog}, "needs --format debezium"},
		{[]string{"read", "--format", "debezium", "--debezium-decimal-handling-mode", "exact", shopBinlog}, `want precise or string or double, not "exact"`},
		{[]string{"read", "--format", "debezium", "--debezium-time-precision-mode", "adaptive", shopBinlog}, "want adaptive_time_microseconds or connect"},
		{[]string{"read", "--format", "avro", shopBinlog}, "want json, debezium, maxwell, canal or sql"},
		{[]string{"read", "--format", "maxwell", "--debezium-binary-handling-mode", "hex", shopBinlog}, "--debezium-binary-handling-mode needs --format debezium"},
		{[]string{"read", "--format", "debezium", "--debezium-binary-handling-mode", "raw", shopBinlog}, `want bytes or base64 or base64-url-safe or hex, not "raw"`},
		{[]string{"read", "--format", "canal", "--debezium-enable-time-adjuster=false", shopBinlog}, "--debezium-enable-time-adjuster needs --format debezium"},
		{[]string{"read", "--format", "debezium", "--debezium-float-double-columns", "t.f", shopBinlog}, `FLOAT(M,D) column "t.f": want db.table.column`},
		{[]string{"read", "--format", "debezium", "--maxwell-output-row-query", shopBinlog}, "--maxwell-output-row-query needs --format maxwell"},
		{[]string{"read", "--format", "debezium", "--to", "mysql://u@h:1/", shopBinlog}, "use one of them"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestKafkaFormats: --to kafka:// publishes the lines of --format X as
// record values, with each format's key; Debezium's tombstones follow
// deletes; Maxwell's xid and commit are the same as in the file output
// (its records wait for the transaction's end).
func TestKafkaFormats(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	const bl = "../../testdata/alltypes.binlog"
	for _, tc := range []struct {
		args      []string
		key, val  string // the key of ints row 1's insert, and a value fragment
		tombstone bool
	}{
		{[]string{"--format", "debezium", "--kafka-tombstones"}, `{"id":1}`, `"op":"c"`, true},
		{[]string{"--format", "debezium", "--with-schema", "--debezium-decimal-handling-mode", "string"},
			`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"PREFIX.t.ints.Key"},"payload":{"id":1}}`, `"op":"c"`, false},
		{[]string{"--format", "maxwell", "--kafka-exactly-once"}, `{"database":"t","table":"ints","pk.id":1}`, `"commit":true`, false},
		{[]string{"--format", "canal", "--ddl"}, `[1]`, `"type":"INSERT"`, false},
	} {
		prefix := kafkatest.Prefix(t)
		args := append([]string{"read", "--to", "kafka://" + strings.Join(brokers, ","), "--kafka-topic-prefix", prefix}, tc.args...)
		if code, _, stderr := runCmd(append(args, bl)...); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, stderr)
		}
		fileArgs := []string{"read"}
		for i := 0; i < len(tc.args); i++ {
			if strings.HasPrefix(tc.args[i], "--kafka-") {
				continue
			}
			fileArgs = append(fileArgs, tc.args[i])
		}
		_, lines, stderr := runCmd(append(fileArgs, bl)...)
		if tc.args[1] == "debezium" && tc.args[2] == "--with-schema" {
			lines = strings.ReplaceAll(lines, `"binlogcdc.t.`, `"`+prefix+`.t.`) // Debezium's schema names start with the topic prefix
			lines = strings.ReplaceAll(lines, `"name":"binlogcdc"`, `"name":"`+prefix+`"`)
			tc.key = strings.ReplaceAll(tc.key, "PREFIX", prefix)
		} else if tc.args[1] == "debezium" {
			lines = strings.ReplaceAll(lines, `"name":"binlogcdc"`, `"name":"`+prefix+`"`)
		}
		topics := kafkatest.Topics(t, brokers, prefix+".")
		var data []string
		for _, tp := range topics {
			if !strings.HasSuffix(tp, ".checkpoints") {
				data = append(data, tp)
			}
		}
		recs := kafkatest.Consume(t, brokers, data, tc.args[1] == "maxwell")
		var values []*kgo.Record
		tombstones := 0
		foundKey := false
		for _, r := range recs {
			if r.Value == nil {
				tombstones++
				continue
			}
			values = append(values, r)
			if r.Topic == prefix+".t.ints" && strings.Contains(string(r.Value), tc.val) && string(r.Key) == tc.key {
				foundKey = true
			}
		}
		if stderr != "" && lines == "" {
			t.Fatalf("%q: %s", fileArgs, stderr)
		}
		checkValues(t, values, lines)
		if tc.tombstone {
			// The primary-key update of t.compound: a delete naming the new
			// key and a create naming the old one, as Debezium's headers do.
			hdrs := map[string]string{}
			for _, r := range values {
				if r.Topic == prefix+".t.compound" {
					for _, h := range []string{"__debezium.newkey", "__debezium.oldkey"} {
						if v, ok := kafkatest.Header(r, h); ok {
							hdrs[h] = string(r.Key) + " " + v
						}
					}
				}
			}
			if hdrs["__debezium.newkey"] != `{"b":"k","a":1} {"b":"k","a":2}` || hdrs["__debezium.oldkey"] != `{"b":"k","a":2} {"b":"k","a":1}` {
				t.Errorf("key-change headers: %q", hdrs)
			}
		}
		if !foundKey {
			t.Errorf("%q: no record on %s.t.ints with key %s and %s", tc.args, prefix, tc.key, tc.val)
		}
		if want := strings.Count(lines, `"op":"d"`); tc.tombstone && tombstones != want || !tc.tombstone && tombstones != 0 {
			t.Errorf("%q: %d tombstones, want %d", tc.args, tombstones, btoi(tc.tombstone)*want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFormatsMySQL: MySQL 8 binlogs (upstream fixtures: binary JSON,
// VECTOR) in each format pass their consumers' checks; MySQL's JSON is a
// string for Debezium and the value itself for Maxwell, VECTOR an array.
func TestFormatsMySQL(t *testing.T) {
	jsonBinlog := fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__json-opaque.binlog")
	vectorBinlog := fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__vector.binlog")
	for _, bl := range []string{jsonBinlog, vectorBinlog} {
		for _, v := range formatVariants {
			code, out, stderr := runCmd(append(append([]string{"read"}, v.args...), bl)...)
			if code != 0 {
				t.Fatalf("%s %q: exit %d: %s", filepath.Base(bl), v.args, code, stderr)
			}
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				v.check(t, []byte(l))
			}
		}
	}
	_, dbz, _ := runCmd("read", "--format", "debezium", jsonBinlog)
	_, mxw, _ := runCmd("read", "--format", "maxwell", jsonBinlog)
	if !strings.Contains(dbz, `"after":{"a":"{\"b\":\"2012-03-18\"}"}`) || !strings.Contains(mxw, `"data":{"a":{"b":"2012-03-18"}}`) {
		t.Errorf("JSON column: debezium %s\nmaxwell %s", dbz, mxw)
	}
	_, dbz, _ = runCmd("read", "--format", "debezium", "--with-schema", vectorBinlog)
	if !strings.Contains(dbz, `"vector_column":[1.1,2.2,3.3]`) || !strings.Contains(dbz, `"items":{"type":"float","optional":false},"optional":false,"name":"io.debezium.data.FloatVector"`) {
		t.Errorf("VECTOR column: %s", dbz)
	}
}

// TestKafkaDebeziumDDL: with --format debezium --ddl the schema change
// records go to the topic <prefix>, Debezium's schema change topic,
// keyed {"databaseName":…}, the same values as 'read' writes; with
// --with-schema the key carries its schema (SchemaChangeKey) too.
func TestKafkaDebeziumDDL(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{nil, {"--with-schema"}} {
		brokers := kafkatest.Cluster(t)
		prefix := kafkatest.Prefix(t)
		args := append(append([]string{"read", "--format", "debezium", "--ddl"}, extra...), "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix, shopBinlog)
		if code, _, stderr := runCmd(args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", extra, code, stderr)
		}
		_, lines, _ := runCmd(append(append([]string{"read", "--format", "debezium", "--ddl"}, extra...), shopBinlog)...)
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
			if strings.Contains(l, `"databaseName":`) {
				want = append(want, strings.ReplaceAll(l, `"name":"binlogcdc"`, `"name":"`+prefix+`"`))
			}
		}
		if len(want) == 0 {
			t.Fatal("no schema change records in the sample")
		}
		wantKey := `{"databaseName":"shop"}`
		if extra != nil {
			wantKey = `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"databaseName"}],"optional":false,` +
				`"name":"io.debezium.connector.mysql.SchemaChangeKey","version":1},"payload":{"databaseName":"shop"}}`
		}
		recs := kafkatest.Consume(t, brokers, []string{prefix}, false)
		if len(recs) != len(want) {
			t.Fatalf("%q: %d records on %s, want %d", extra, len(recs), prefix, len(want))
		}
		ts := regexp.MustCompile(`"ts_ms":\d+,"databaseName"`)
		for i, r := range recs {
			if string(r.Key) != wantKey {
				t.Errorf("%q record %d: key %s", extra, i, r.Key)
			}
			got, w := ts.ReplaceAllString(string(r.Value), "TS"), ts.ReplaceAllString(want[i], "TS")
			if got != w {
				t.Errorf("%q record %d:\n got  %s\n want %s", extra, i, got, w)
			}
		}
	}
}

// TestKafkaMaxwellDDL: Maxwell's DDL records on <prefix>.schema-changes,
// closed without "xid" and "commit" (they are held for the transaction's
// end as every Maxwell record), keyed by a UUID as Maxwell keys them.
func TestKafkaMaxwellDDL(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	args := []string{"read", "--format", "maxwell", "--ddl", "--to", "kafka://" + strings.Join(brokers, ","), "--kafka-topic-prefix", prefix, shopBinlog}
	if code, _, stderr := runCmd(args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, lines, _ := runCmd("read", "--format", "maxwell", "--ddl", shopBinlog)
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if strings.Contains(l, `"type":"table-`) || strings.Contains(l, `"type":"database-`) {
			want = append(want, l)
		}
	}
	recs := kafkatest.Consume(t, brokers, []string{prefix + ".schema-changes"}, false)
	if len(recs) != len(want) || len(want) == 0 {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if string(r.Value) != want[i] || len(r.Key) != 36 {
			t.Errorf("record %d: key %s\n got  %s\n want %s", i, r.Key, r.Value, want[i])
		}
	}
}
