package s3up

import "testing"

func TestParseURL(t *testing.T) {
	for in, want := range map[string][2]string{
		"s3://b1k/prefix/x": {"b1k", "prefix/x/"}, "s3://bkt": {"bkt", ""}, "s3://bkt/p/": {"bkt", "p/"},
	} {
		b, p, err := ParseURL(in)
		if err != nil || b != want[0] || p != want[1] {
			t.Errorf("ParseURL(%q) = %q, %q, %v", in, b, p, err)
		}
	}
	for _, bad := range []string{"", "http://b/p", "s3:///p", "s3://key:secret@b/p", "s3://b/p?x=1"} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) took it", bad)
		}
	}
	for _, bad := range []string{"ftp://h", "127.0.0.1:9000", "http://h/path", "http://u:p@h"} {
		if _, err := New("s3://bkt/p", bad); err == nil {
			t.Errorf("endpoint %q taken", bad)
		}
	}
	if _, err := New("s3://bkt/p", "http://127.0.0.1:9000"); err != nil {
		t.Error(err)
	}
}
