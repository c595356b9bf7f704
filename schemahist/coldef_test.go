package schemahist

import "testing"

func TestIsJSONValidCheck(t *testing.T) {
	for _, c := range []struct {
		check, name string
		want        bool
	}{
		{"CHECK (json_valid(`j`))", "j", true},
		{"check(JSON_VALID( j ))", "J", true},
		{"CHECK (json_valid(`k`))", "j", false},
		{"CHECK (json_valid(`j`) and j <> '')", "j", false},
		{"CHECK (j > 0)", "j", false},
	} {
		if got := isJSONValidCheck(c.check, c.name); got != c.want {
			t.Errorf("isJSONValidCheck(%q, %q) = %v", c.check, c.name, got)
		}
	}
}
