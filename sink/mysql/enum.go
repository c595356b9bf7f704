package mysqlsink

import (
	"fmt"

	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// The ENUM error value. A non-strict server stores index 0 in an ENUM
// column for a value the ENUM lacks; the binlog carries the index. Only a
// statement run without strict mode stores it again: the number 0, with a
// warning. So a change whose new row holds one runs alone, one by one,
// under sqltext.NonStrictSQLMode, and must raise exactly one warning per
// error value: any other warning means the target adjusted another value
// of the row, which strict mode would have refused, and stops the replay.

// enumErrorAt returns the index of the first op whose new row holds an
// ENUM error value, or -1.
func enumErrorAt(ops []op) int {
	for i := range ops {
		if ops[i].enumErr { // prepareOp
			return i
		}
	}
	return -1
}

// execOpsEnumErrors executes ops in order, the ops holding ENUM error
// values alone and without strict mode.
func (s *Sink) execOpsEnumErrors(ops []op, st *Stats) error {
	for len(ops) > 0 {
		i := enumErrorAt(ops)
		if i < 0 {
			return s.execOps(ops, st)
		}
		if err := s.execOps(ops[:i], st); err != nil {
			return err
		}
		if err := s.execEnumError(&ops[i], st); err != nil {
			return err
		}
		ops = ops[i+1:]
	}
	return nil
}

func (s *Sink) execEnumError(o *op, st *Stats) error {
	if err := s.plain("SET SESSION sql_mode = '" + sqltext.NonStrictSQLMode + "'"); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	s.warnings = 0
	err := s.execOpsOneByOne([]op{*o}, st)
	warnings := s.warnings
	if rerr := s.plain("SET SESSION sql_mode = '" + sqltext.SessionSQLMode + "'"); rerr != nil && err == nil {
		err = fmt.Errorf("target: %w", rerr)
	}
	if err != nil {
		return err
	}
	if want := sqltext.EnumErrors(o.c.After, o.cols); int(warnings) > want {
		return changeError(&o.c, fmt.Errorf("the row holds %d ENUM error value(s), which only a non-strict sql_mode stores, but the target gave %d warnings: it adjusted other values of the row too (does its table differ from the source's?)", want, warnings))
	}
	return nil
}
