package live

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/verify"
)

// result is one pass's outcome.
type result struct {
	tables    int                      // compared
	differing []*verify.Table          // proven different
	at        map[*verify.Table]string // the source snapshot's position each differing table was compared at
	unsure    []string                 // tables whose difference a DDL may explain
	last      string                   // the last source snapshot's position
}

// compare compares every selected table, each in its own pair of
// snapshots lined up by the gate: no snapshot stays open longer than one
// table's comparison (a long one holds back the purge of old row
// versions on both servers).
func (v *Verifier) compare(ctx context.Context) (*result, error) {
	src, err := verify.Dial(ctx, v.cfg.Source)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	dst, err := verify.Dial(ctx, v.cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	defer dst.Close()
	// Stopping ends the queries under way: closing the connections is
	// the only way go-mysql has.
	stop := context.AfterFunc(ctx, func() { src.Close(); dst.Close() })
	defer stop()

	names, err := union(src, dst, v.cfg.Select)
	if err != nil {
		return nil, err
	}
	res := &result{at: map[*verify.Table]string{}}
	for _, n := range names {
		one := func(db, table string) bool { return db == n.DB && table == n.Name }
		opts := verify.Options{Select: one, MaxRows: v.cfg.MaxRows, StrictSchema: v.cfg.StrictSchema, Sync: &v.gate}
		rep, err := verify.Run(ctx, src, dst, opts)
		for try := 1; errors.Is(err, errPast) && try < pastTries; try++ {
			if _, cerr := src.Execute("ROLLBACK"); cerr != nil {
				return nil, fmt.Errorf("source: ROLLBACK: %w", cerr)
			}
			rep, err = verify.Run(ctx, src, dst, opts)
		}
		if defChanged(err) {
			// Altered on a side since its snapshot began: the next pass
			// tells.
			res.unsure = append(res.unsure, quote(n.DB)+"."+quote(n.Name))
			continue
		}
		if err != nil {
			return nil, err
		}
		res.last = rep.SourcePos
		res.tables += len(rep.Tables) // 0: dropped on both sides since listed
		diff := rep.Differing()
		if len(diff) == 0 {
			continue
		}
		raced, err := v.ddlRaced(ctx, src, rep.SourcePos)
		if err != nil {
			return nil, err
		}
		for _, t := range diff {
			if raced {
				res.unsure = append(res.unsure, quote(t.DB)+"."+quote(t.Name))
				continue
			}
			res.differing = append(res.differing, t)
			res.at[t] = rep.SourcePos
		}
	}
	return res, nil
}

// defChanged reports whether err says that a DDL changed the table
// since it was listed or its snapshot began: ER_TABLE_DEF_CHANGED
// (altered), ER_NO_SUCH_TABLE (dropped).
func defChanged(err error) bool {
	var me *mysql.MyError
	return errors.As(err, &me) && (me.Code == mysql.ER_TABLE_DEF_CHANGED || me.Code == mysql.ER_NO_SUCH_TABLE)
}

// pastTries is how many times a table's snapshots are taken when the
// applier is found past the source's (errPast).
const pastTries = 5

// ddlRaced reports whether a DDL was applied after the snapshot at pos
// and before the source's position now: verify reads definitions from
// information_schema, which is no snapshot, so a table may have been
// read before it on one side and after it on the other.
func (v *Verifier) ddlRaced(ctx context.Context, src verify.Querier, pos string) (bool, error) {
	p, err := parsePos(pos)
	if err != nil {
		return false, err
	}
	end, err := masterPos(src)
	if err != nil {
		return false, err
	}
	return v.gate.ddlAfter(ctx, src, p, end)
}

// union lists the selected tables of both servers, in name order.
func union(src, dst verify.Querier, sel func(db, table string) bool) ([]verify.TableName, error) {
	a, err := verify.ListTables(src, sel)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	b, err := verify.ListTables(dst, sel)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	seen := map[verify.TableName]bool{}
	var out []verify.TableName
	for _, n := range append(a, b...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DB != out[j].DB {
			return out[i].DB < out[j].DB
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// masterPos is the source's binlog position now.
func masterPos(q verify.Querier) (change.Position, error) {
	r, err := q.Execute("SHOW MASTER STATUS")
	if err != nil {
		return change.Position{}, fmt.Errorf("source: SHOW MASTER STATUS: %w", err)
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return change.Position{}, errors.New("source: SHOW MASTER STATUS: no binlog")
	}
	f, _ := r.GetString(0, 0)
	off, _ := r.GetUint(0, 1)
	return change.Position{File: f, Offset: off}, nil
}
