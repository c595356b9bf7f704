package checkpoint

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp.json")
	c := &Checkpoint{File: "binlog.000042", Offset: 1234, LastGTID: "0-1-99", GTIDSet: "0-1-99,1-1-5",
		Server: "db1:3306", Saved: time.Date(2024, 6, 15, 12, 0, 0, 123, time.UTC)}
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("Load = %+v, want %+v", got, c)
	}
	if p := got.Position(); p != (change.Position{File: "binlog.000042", Offset: 1234}) {
		t.Errorf("Position = %+v", p)
	}

	// Overwrite; no temporary file is left behind.
	c2 := &Checkpoint{File: "binlog.000043", Offset: 4}
	if err := Save(path, c2); err != nil {
		t.Fatal(err)
	}
	if got, _ := Load(path); got == nil || got.File != "binlog.000043" || got.Offset != 4 || got.LastGTID != "" {
		t.Errorf("after overwrite: %+v", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "cp.json" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only cp.json", names)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(data), "}\n") || strings.Contains(string(data), "last_gtid") {
		t.Errorf("file content %q: want indented JSON ending in a newline, empty fields omitted", data)
	}
}

func TestLoadMissing(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "nope.json"))
	if c != nil || err != nil {
		t.Errorf("Load(missing) = %v, %v; want nil, nil", c, err)
	}
}

func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"damaged":  `{"file": "binlog.000001", "offs`,
		"empty":    ``,
		"nofile":   `{"offset": 120}`,
		"offset0":  `{"file": "binlog.000001", "offset": 0}`,
		"offset3":  `{"file": "binlog.000001", "offset": 3}`,
		"notjson":  `binlog.000001:4`,
		"wrongtyp": `{"file": "binlog.000001", "offset": "4"}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err == nil || c != nil {
			t.Errorf("%s: Load = %+v, %v; want an error", name, c, err)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it away") {
			t.Errorf("%s: error %q should name the file and say what to do", name, err)
		}
	}
	// Offset 4, the first event of a file, is a valid resume point.
	path := filepath.Join(dir, "ok")
	os.WriteFile(path, []byte(`{"file": "binlog.000001", "offset": 4}`), 0o644)
	if c, err := Load(path); err != nil || c.Offset != 4 {
		t.Errorf("offset 4: %+v, %v", c, err)
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be: not "missing", an error.
	if c, err := Load(dir); err == nil || c != nil {
		t.Errorf("Load(directory) = %+v, %v; want an error", c, err)
	}
}

func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Save(filepath.Join(dir, "no", "such", "dir", "cp.json"), &Checkpoint{File: "binlog.000001", Offset: 4}); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
	// A failed save leaves the previous checkpoint intact.
	path := filepath.Join(dir, "cp.json")
	if err := Save(path, &Checkpoint{File: "binlog.000001", Offset: 100}); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root ignores directory permissions
		os.Chmod(dir, 0o500)
		err := Save(path, &Checkpoint{File: "binlog.000002", Offset: 200})
		os.Chmod(dir, 0o700)
		if err == nil {
			t.Error("Save into a read-only directory succeeded")
		}
	}
	// A stale temporary file from a crash does not matter.
	os.WriteFile(filepath.Join(dir, "cp.json.tmp-123"), []byte("{garbage"), 0o644)
	if c, err := Load(path); err != nil || c.File != "binlog.000001" || c.Offset != 100 {
		t.Errorf("Load = %+v, %v", c, err)
	}
	if err := Save(path, &Checkpoint{File: "binlog.000002", Offset: 200}); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || c.File != "binlog.000002" || c.Offset != 200 {
		t.Errorf("Load = %+v, %v", c, err)
	}
}
