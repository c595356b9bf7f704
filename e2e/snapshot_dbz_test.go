package e2e

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestSnapshotDebeziumPlaces (issue 24): Debezium's source.snapshot of
// each snapshot row, as Debezium marks its snapshot records: "first" for
// the first row of the first table, "last" for the last row of the last
// table, "first_in_data_collection" and "last_in_data_collection" for a
// table's first and last rows (the last wins in a table of one row),
// "true" between. An empty last table leaves no "last", as in Debezium
// (it goes by the tables' order, not their rows).
func TestSnapshotDebeziumPlaces(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE dp",
		"CREATE TABLE dp.a (id INT PRIMARY KEY)", "INSERT INTO dp.a VALUES (1), (2)",
		"CREATE TABLE dp.b (id INT PRIMARY KEY)", "INSERT INTO dp.b VALUES (1)",
		"CREATE TABLE dp.c (id INT PRIMARY KEY)", "INSERT INTO dp.c VALUES (1), (2), (3)")
	places := func(file string, args ...string) []string {
		t.Helper()
		out, errOut, code := runCLI(t, nil, append([]string{"snapshot", "--source", src.DSN(), "--tables", "dp.*", "--format", "debezium"}, args...)...)
		if code != 0 {
			t.Fatalf("snapshot: exit %d: %s", code, errOut)
		}
		if file != "" {
			var err error
			if out, err = os.ReadFile(file); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			var rec struct {
				Payload struct {
					Source struct {
						Table    string `json:"table"`
						Snapshot string `json:"snapshot"`
					} `json:"source"`
				} `json:"payload"`
				Source struct {
					Table    string `json:"table"`
					Snapshot string `json:"snapshot"`
				} `json:"source"`
			}
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("bad line %q: %v", clip(l), err)
			}
			s := rec.Source
			if s.Table == "" {
				s = rec.Payload.Source
			}
			got = append(got, s.Table+" "+s.Snapshot)
		}
		return got
	}
	want := []string{"a first", "a last_in_data_collection", "b last_in_data_collection",
		"c first_in_data_collection", "c true", "c last"}
	if got := places(""); !reflect.DeepEqual(got, want) {
		t.Errorf("source.snapshot:\n got %q\nwant %q", got, want)
	}
	// The same with a checkpoint (the rows are committed in batches of
	// two: a batch ends on a row that waits for the next).
	dir := t.TempDir()
	if got := places(dir+"/out.jsonl", "-o", dir+"/out.jsonl", "--checkpoint", dir+"/cp", "--snapshot-batch", "2"); !reflect.DeepEqual(got, want) {
		t.Errorf("with a checkpoint and batches of 2:\n got %q\nwant %q", got, want)
	}

	src.Exec(t, "CREATE TABLE dp.d (id INT PRIMARY KEY)")
	want[len(want)-1] = "c last_in_data_collection"
	if got := places(""); !reflect.DeepEqual(got, want) {
		t.Errorf("with an empty last table:\n got %q\nwant %q", got, want)
	}
}
