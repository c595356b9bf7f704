package change

import (
	"reflect"
	"testing"
)

// TestSetEmptyLabel: a SET member whose label is empty is one of the
// value's labels wherever the server's text leaves it out (first among
// the members the value holds), and only there.
func TestSetEmptyLabel(t *testing.T) {
	for _, c := range []struct {
		v      Value
		labels []string
		text   string
		lost   bool
	}{
		{SetValue(0, nil), nil, "", false},
		{SetValue(5, []byte("x,z")), []string{"x", "z"}, "x,z", false},
		{SetValue(1, nil), []string{""}, "", true},                // SET('', 'x') holding ''
		{SetValue(3, []byte("x")), []string{"", "x"}, ",x", true}, // '' and 'x'
		{SetValue(7, []byte("x,,y")), []string{"x", "", "y"}, "x,,y", false},
		{SetValue(6, []byte("b")), []string{"", "b"}, ",b", true}, // SET('a', '', 'b')
		{TextValue(String, []byte("x")), []string{"x"}, "x", false},
	} {
		if c.v.Kind() != Set {
			if c.v.SetLostEmpty() {
				t.Errorf("%v: SetLostEmpty of a %s", c.v, c.v.Kind())
			}
			continue
		}
		if got := c.v.SetLabels(); !reflect.DeepEqual(got, c.labels) {
			t.Errorf("mask %d %q: SetLabels %q, want %q", c.v.Uint(), c.v.Bytes(), got, c.labels)
		}
		if got := string(c.v.SetText()); got != c.text {
			t.Errorf("mask %d %q: SetText %q, want %q", c.v.Uint(), c.v.Bytes(), got, c.text)
		}
		if got := c.v.SetLostEmpty(); got != c.lost {
			t.Errorf("mask %d %q: SetLostEmpty %v, want %v", c.v.Uint(), c.v.Bytes(), got, c.lost)
		}
		if got := c.v.Interface(); c.labels != nil && !reflect.DeepEqual(got, c.labels) {
			t.Errorf("mask %d: Interface %q, want %q", c.v.Uint(), got, c.labels)
		}
	}
}
