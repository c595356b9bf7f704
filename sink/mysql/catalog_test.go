package mysqlsink

import "testing"

func TestGeneratedExtra(t *testing.T) {
	for extra, want := range map[string]bool{
		"VIRTUAL GENERATED": true, "STORED GENERATED": true, "PERSISTENT GENERATED": true,
		"STORED GENERATED, INVISIBLE": true, "DEFAULT_GENERATED": false,
		"DEFAULT_GENERATED on update CURRENT_TIMESTAMP": false, "auto_increment": false, "": false,
	} {
		if got := generatedExtra(extra); got != want {
			t.Errorf("generatedExtra(%q) = %v, want %v", extra, got, want)
		}
	}
}
