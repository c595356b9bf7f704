package archive

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"10GB": 10e9, "500MB": 500e6, "1TiB": 1 << 40, "1.5KiB": 1536, "123": 123, "2 gib": 2 << 30, "7b": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GB", "-1GB", "10XB", "0", "1e30TB", "0.1"} {
		if n, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, n)
		}
	}
}
