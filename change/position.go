package change

import (
	"strconv"
	"strings"
)

// Compare orders binlog positions of one server: by file sequence, then
// offset. Files of one series compare by their numeric suffix
// ("binlog.999999" before "binlog.1000000", where the suffix outgrows its
// usual six digits); names that are not of one series compare as text.
// The zero Position comes first. It returns -1, 0 or +1.
//
// An archive that went on after a failover (binlogcdc archive) names the
// files of its later server histories "history-N/NAME" (N = 2, 3, …):
// every position of history N comes after those of the histories before
// it, whatever the names (the first history's files are plain names).
func (p Position) Compare(q Position) int {
	if p.File != q.File {
		hp, fp := History(p.File)
		hq, fq := History(q.File)
		if hp != hq && p.File != "" && q.File != "" {
			if hp < hq {
				return -1
			}
			return 1
		}
		return compareFiles(fp, fq)
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

// History splits an archive's file name "history-N/NAME" into N and NAME;
// any other name is history 1.
func History(file string) (n int, name string) {
	dir, base, ok := strings.Cut(file, "/")
	if !ok || !strings.HasPrefix(dir, "history-") || strings.Contains(base, "/") {
		return 1, file
	}
	n, err := strconv.Atoi(dir[len("history-"):])
	if err != nil || n < 2 {
		return 1, file
	}
	return n, base
}

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
