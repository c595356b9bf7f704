package recovery

import "testing"

// The expected texts are what MariaDB 10.11 stored when ALTER TABLE made a
// DOUBLE (or FLOAT) column a VARCHAR of the width (e2e/recover_alter_test.go
// checks the same against the server).
func TestGcvt(t *testing.T) {
	for _, c := range []struct {
		x     float64
		float bool
		width int
		want  string
	}{
		{4.5, false, 30, "4.5"},
		{-2.5, false, 30, "-2.5"},
		{1e20, false, 30, "1e20"},
		{1e20, false, 311, "1e20"},
		{0.1, false, 30, "0.1"},
		{2.5e-7, false, 30, "0.00000025"},
		{123456789012345678, false, 30, "1.2345678901234568e17"},
		{float64(float32(3.14159)), true, 69, "3.14159"},
		{float64(float32(1.1)), true, 69, "1.1"},
		{float64(float32(1e20)), true, 69, "1e20"},
		{0, false, 5, "0"},
	} {
		if got, _ := gcvt(c.x, c.float, c.width); got != c.want {
			t.Errorf("gcvt(%v, %v, %d) = %q, want %q", c.x, c.float, c.width, got, c.want)
		}
	}
}
