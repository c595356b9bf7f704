package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The formats' processing times (Debezium's ts_ms, Canal's ts) come from
// this clock in tests, so that their output is reproducible.
func init() {
	envelopeNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC) }
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
				golden := strings.TrimSuffix(bl, ".binlog") + "." + v.name + ".jsonl"
				if *update {
					if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(out.Bytes(), want) {
					t.Errorf("output differs from %s (run with -update after checking the diff):\n got: %s\nwant: %s", golden, out.String(), want)
				}
			})
		}
	}
}

func TestFormatUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--format", "debezium", "--ddl", shopBinlog}, "--format debezium has no DDL records"},
		{[]string{"read", "--format", "maxwell", "--ddl", shopBinlog}, "--format maxwell has no DDL records"},
		{[]string{"read", "--format", "maxwell", "--with-schema", shopBinlog}, "--with-schema needs --format debezium"},
		{[]string{"read", "--debezium-decimal-handling-mode", "string", shopBinlog}, "needs --format debezium"},
		{[]string{"read", "--format", "debezium", "--debezium-decimal-handling-mode", "exact", shopBinlog}, `want precise or string or double, not "exact"`},
		{[]string{"read", "--format", "debezium", "--debezium-time-precision-mode", "adaptive", shopBinlog}, "want adaptive_time_microseconds or connect"},
		{[]string{"read", "--format", "avro", shopBinlog}, "want json, debezium, maxwell, canal or sql"},
		{[]string{"read", "--format", "debezium", "--to", "mysql://u@h:1/", shopBinlog}, "use one of them"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
