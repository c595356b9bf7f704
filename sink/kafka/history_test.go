package kafka

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readBack replays records into a historyReader, as Resume reads the topic.
func readBack(t testing.TB, replica string, recs []*kgo.Record) *historyReader {
	t.Helper()
	h := &historyReader{replica: replica}
	for _, r := range recs {
		if err := h.add(r.Key, r.Value, r.Headers); err != nil {
			t.Fatalf("record %q: %v", r.Key, err)
		}
	}
	return h
}

func TestHistorySplit(t *testing.T) {
	data := bytes.Repeat([]byte(`{"db":"shop","name":"t"},`), 1000) // 25000 bytes
	for _, part := range []int{64, 1000, 24999, 25000, 1 << 20} {
		recs := historyRecords("p.schema-history", "r/1", data, part, 0)
		want := (len(data) + part - 1) / part
		if len(recs) != want {
			t.Fatalf("part %d: %d records, want %d", part, len(recs), want)
		}
		for _, r := range recs {
			if len(r.Value) > part {
				t.Fatalf("part %d: record %q holds %d bytes", part, r.Key, len(r.Value))
			}
		}
		got, err := readBack(t, "r/1", recs).assemble(historyHash(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("part %d: assemble: %d bytes, %v", part, len(got), err)
		}
	}
}

// TestHistoryShrink: a shorter history after a longer one tombstones the
// parts it no longer uses, and the latest is what is read back.
func TestHistoryShrink(t *testing.T) {
	long := bytes.Repeat([]byte("a"), 1000)
	short := bytes.Repeat([]byte("b"), 150)
	recs := historyRecords("h", "r", long, 100, 0)
	recs2 := historyRecords("h", "r", short, 100, 10)
	if len(recs2) != 10 || recs2[2].Value != nil || recs2[9].Value != nil || string(recs2[9].Key) != "r/9" {
		t.Fatalf("the shorter history writes %d records; want 2 parts and 8 tombstones", len(recs2))
	}
	h := readBack(t, "r", append(recs, recs2...))
	if len(h.parts) != 2 {
		t.Fatalf("%d parts left after the tombstones, want 2", len(h.parts))
	}
	if got, err := h.assemble(historyHash(short)); err != nil || !bytes.Equal(got, short) {
		t.Fatalf("assemble: %q, %v", got, err)
	}
	if _, err := h.assemble(historyHash(long)); !errors.Is(err, errHistoryMismatch) {
		t.Fatalf("the older history: %v, want a mismatch", err)
	}
}

// TestHistoryMismatch: what the resume point does not name is never used.
func TestHistoryMismatch(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 300)
	recs := historyRecords("h", "r", data, 100, 0)
	other := historyRecords("h", "r2", bytes.Repeat([]byte("y"), 300), 100, 0)
	for _, c := range []struct {
		name string
		recs []*kgo.Record
		want string
	}{
		{"another replica's", other, "holds none"},
		{"a part missing", []*kgo.Record{recs[0], recs[2]}, "part 1 of 3 is missing"},
		{"a part of another history", append(append([]*kgo.Record{}, recs...), historyRecords("h", "r", bytes.Repeat([]byte("z"), 300), 100, 0)[1]), "part 1 of 3 is missing"},
		{"a damaged part", []*kgo.Record{recs[0], {Key: recs[1].Key, Value: []byte(strings.Repeat("X", 100)), Headers: recs[1].Headers}, recs[2]}, "another SHA-256"},
	} {
		_, err := readBack(t, "r", c.recs).assemble(historyHash(data))
		if !errors.Is(err, errHistoryMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a mismatch saying %q", c.name, err, c.want)
		}
	}
	// Ours but damaged: an error naming the key.
	h := &historyReader{replica: "r"}
	bad := []struct {
		key     string
		headers []kgo.RecordHeader
		want    string
	}{
		{"r/x", nil, "not a number"},
		{"r/01", nil, "not a number"},
		{"r/0", []kgo.RecordHeader{{Key: HeaderHistoryParts, Value: []byte("1")}}, "not a SHA-256"},
		{"r/3", []kgo.RecordHeader{{Key: HeaderHistorySHA256, Value: []byte(historyHash(nil))}, {Key: HeaderHistoryParts, Value: []byte("3")}}, "not a count of parts above 3"},
	}
	for _, b := range bad {
		if err := h.add([]byte(b.key), []byte("v"), b.headers); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.key, err, b.want)
		}
	}
	if err := h.add([]byte("other/x"), []byte("v"), nil); err != nil {
		t.Errorf("another replica's damaged record: %v", err)
	}
}

func TestHistoryPartBytes(t *testing.T) {
	for _, c := range []struct{ max, want int }{{0, 1000012 - historyOverhead - 1}, {20000, 20000 - historyOverhead - 1}, {512, 64}} {
		if got := (Options{MaxMessageBytes: c.max, Replica: "r"}).historyPartBytes(); got != c.want {
			t.Errorf("MaxMessageBytes %d: parts of %d bytes, want %d", c.max, got, c.want)
		}
	}
}

// FuzzHistoryRecord feeds the history decoder records as they may come
// back from the topic: it must never panic, and what it puts together
// has the SHA-256 asked for.
func FuzzHistoryRecord(f *testing.F) {
	data := []byte(`{"version":1,"mariadb":true,"tables":[]}`)
	for _, r := range historyRecords("h", "r", data, 16, 5) {
		var hash, parts []byte
		if len(r.Headers) == 2 {
			hash, parts = r.Headers[0].Value, r.Headers[1].Value
		}
		f.Add(r.Key, r.Value, hash, parts, r.Value == nil)
	}
	f.Add([]byte("r/"), []byte{}, []byte("zz"), []byte("-1"), false)
	f.Add([]byte("r/999999999999999999999"), []byte("x"), []byte(historyHash(nil)), []byte("1"), false)
	f.Fuzz(func(t *testing.T, key, value, hash, parts []byte, tomb bool) {
		if tomb {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		h := &historyReader{replica: "r"}
		for _, r := range historyRecords("h", "r", data, 16, 0) {
			if err := h.add(r.Key, r.Value, r.Headers); err != nil {
				t.Fatal(err)
			}
		}
		headers := []kgo.RecordHeader{{Key: HeaderHistorySHA256, Value: hash}, {Key: HeaderHistoryParts, Value: parts}}
		_ = h.add(key, value, headers)
		for _, want := range []string{historyHash(data), string(hash)} {
			if got, err := h.assemble(want); err == nil && historyHash(got) != want {
				t.Fatalf("assembled %d bytes whose SHA-256 is not %s", len(got), want)
			} else if err != nil && !errors.Is(err, errHistoryMismatch) {
				t.Fatalf("assemble: %v, not a mismatch", err)
			}
		}
		if len(h.parts) > 0 && h.keys > maxHistoryParts {
			t.Fatalf("%d parts", h.keys)
		}
	})
}

// TestHistoryRecordError: a part the brokers refuse as too large (their
// limit below --kafka-max-message-bytes) names the part and the fix.
func TestHistoryRecordError(t *testing.T) {
	r := historyRecords("p.schema-history", "r", bytes.Repeat([]byte("x"), 300), 100, 0)[2]
	got := recordError(r, kerr.MessageTooLarge).Error()
	want := "kafka: topic p.schema-history: writing part r/2 of the schema history: MESSAGE_TOO_LARGE"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "set it at most the topic's max.message.bytes") {
		t.Errorf("%s\nwant %s… naming the fix", got, want)
	}
}
