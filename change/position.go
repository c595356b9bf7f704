package change

import "strings"

// Compare orders binlog positions of one server: by file sequence, then
// offset. Files of one series compare by their numeric suffix
// ("binlog.999999" before "binlog.1000000", where the suffix outgrows its
// usual six digits); names that are not of one series compare as text.
// The zero Position comes first. It returns -1, 0 or +1.
func (p Position) Compare(q Position) int {
	if p.File != q.File {
		return compareFiles(p.File, q.File)
	}
	switch {
	case p.Offset < q.Offset:
		return -1
	case p.Offset > q.Offset:
		return 1
	}
	return 0
}

// Before reports whether p comes before q (see Compare).
func (p Position) Before(q Position) bool { return p.Compare(q) < 0 }

func compareFiles(a, b string) int {
	if a == "" || b == "" { // the zero Position first
		if a == "" {
			return -1
		}
		return 1
	}
	sa, na, oka := splitSeq(a)
	sb, nb, okb := splitSeq(b)
	if oka && okb && sa == sb && na != nb {
		// Same series: the longer number is the larger (no leading
		// zeros beyond the fixed width), then the digits as text.
		if len(na) != len(nb) {
			// Leading zeros: compare without them.
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(ta) != len(tb) {
				if len(ta) < len(tb) {
					return -1
				}
				return 1
			}
			na, nb = ta, tb
		}
		if na < nb {
			return -1
		}
		if na > nb {
			return 1
		}
	}
	if a < b {
		return -1
	}
	return 1
}

// splitSeq splits "binlog.000042" into "binlog" and "000042".
func splitSeq(f string) (stem, digits string, ok bool) {
	i := strings.LastIndexByte(f, '.')
	if i <= 0 || i == len(f)-1 {
		return "", "", false
	}
	for _, c := range []byte(f[i+1:]) {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return f[:i], f[i+1:], true
}
