package snapshot

import (
	"os"
	"strconv"
	"strings"
)

// killHook makes tests' kill -9 points deterministic. With
// BINLOGCDC_TEST_SNAPSHOT_KILL set, the process kills itself (SIGKILL, as
// kill -9):
//
//	N           right after the N-th chunk this run saved;
//	N.5         in the middle of the batch after it (rows written to the
//	            sink, not committed);
//	db.table:N  after the N-th row of that table this run wrote.
//
// Not for users: it is not documented in --help.
type killHook struct {
	after int // saved chunks before the kill; -1: off
	mid   bool
	table string // db.table, lower case
	rows  int
	saves int
}

func (k *killHook) init() {
	k.after = -1
	v := os.Getenv("BINLOGCDC_TEST_SNAPSHOT_KILL")
	if v == "" {
		return
	}
	if i := strings.LastIndexByte(v, ':'); i > 0 {
		if n, err := strconv.Atoi(v[i+1:]); err == nil && n > 0 {
			k.table, k.rows = strings.ToLower(v[:i]), n
		}
		return
	}
	n, half := v, false
	if strings.HasSuffix(v, ".5") {
		n, half = strings.TrimSuffix(v, ".5"), true
	}
	if i, err := strconv.Atoi(n); err == nil && i >= 0 {
		k.after, k.mid = i, half
	}
}

func (k *killHook) saved() {
	k.saves++
	if k.after >= 0 && !k.mid && k.saves >= k.after {
		die()
	}
}

// row is called after each row written: the table's (lower-cased
// db.table) n-th in this run, the batch's inBatch-th.
func (k *killHook) row(table string, n, inBatch, batch int) {
	if k.after >= 0 && k.mid && k.saves >= k.after && inBatch >= (batch+1)/2 {
		die()
	}
	if k.rows > 0 && n >= k.rows && table == k.table {
		die()
	}
}

func die() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill() // SIGKILL
	}
	select {}
}
