package kafka

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestHeldSpills: records held for the transaction's end come back in
// order, with last on the last one that has a value, whether they stayed
// in memory or went to the spill file; the holder is reusable.
func TestHeldSpills(t *testing.T) {
	for _, max := range []int{1 << 20, 300, 0} {
		h := held{max: max, tempDir: t.TempDir()}
		for round := 0; round < 3; round++ {
			var want []string
			for i := 0; i < 50; i++ {
				r := &kgo.Record{Topic: "t", Key: []byte(fmt.Sprint(i)), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}
				if i%7 != 6 { // every 7th is a tombstone
					r.Value = []byte(fmt.Sprintf("value %d of round %d", i, round))
				}
				if err := h.add(r); err != nil {
					t.Fatal(err)
				}
				want = append(want, fmt.Sprintf("%s=%s", r.Key, r.Value))
			}
			var got []string
			lasts := 0
			err := h.each(func(r *kgo.Record, last bool) {
				got = append(got, fmt.Sprintf("%s=%s", r.Key, r.Value))
				if last {
					lasts++
					if string(r.Key) != "49" {
						t.Errorf("max %d: last on key %s, want 49", max, r.Key)
					}
				}
				if len(r.Headers) != 1 || string(r.Headers[0].Value) != "v" || r.Topic != "t" {
					t.Errorf("max %d: record %+v", max, r)
				}
				if string(r.Key) == "6" && r.Value != nil {
					t.Errorf("max %d: a tombstone came back with a value", max)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || lasts != 1 {
				t.Fatalf("max %d round %d: %d lasts, got %v", max, round, lasts, got)
			}
			if (h.file != nil) != (max < 1<<20) {
				t.Errorf("max %d: spill file %v", max, h.file != nil)
			}
		}
		h.close()
	}
}
