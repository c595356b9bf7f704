package live

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/snapshot"
	"github.com/binlogcdc/binlogcdc/verify"
)

// result is one pass's outcome.
type result struct {
	tables     int                      // compared
	chunks     int                      // compared, in their own snapshots
	differing  []*verify.Table          // proven different: a table's chunk each
	at         map[*verify.Table]string // the source snapshot's position each differing chunk was compared at
	rng        map[*verify.Table]string // each differing chunk's key range ("" for the whole table)
	unsure     []string                 // tables whose difference a DDL may explain
	unverified []*verify.Table          // not transactional: not compared
	last       string                   // the last source snapshot's position
}

// compare compares every selected table, each in key-range chunks of
// ChunkRows rows (see snapshot.ChunkReader.Bound), each chunk in its own
// pair of snapshots lined up by the gate: no snapshot stays open longer
// than one chunk's comparison (a long one holds back the purge of old
// row versions on both servers).
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
	bounds := &snapshot.ChunkReader{Flavor: "mariadb", Dial: func(ctx context.Context) (*client.Conn, error) { return verify.Dial(ctx, v.cfg.Source) }}
	defer bounds.Close()
	// Stopping ends the queries under way: closing the connections is
	// the only way go-mysql has.
	stop := context.AfterFunc(ctx, func() { src.Close(); dst.Close() })
	defer stop()

	names, err := union(src, dst, v.cfg.Select)
	if err != nil {
		return nil, err
	}
	res := &result{at: map[*verify.Table]string{}, rng: map[*verify.Table]string{}}
	for _, n := range names {
		if err := v.table(ctx, src, dst, bounds, n, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// table compares one table, chunk by chunk: each chunk's key range is
// found on the source just before its snapshots (ranges found one after
// the other cover every key, rows written meanwhile or not). A table
// that cannot be read in key ranges (no primary key, a key whose order
// binlogcdc does not reproduce: see snapshot.keyTypes) is one chunk.
func (v *Verifier) table(ctx context.Context, src, dst *client.Conn, bounds *snapshot.ChunkReader, n verify.TableName, res *result) error {
	name := quote(n.DB) + "." + quote(n.Name)
	var after change.Row
	for first := true; ; first = false {
		where, rng, hi := "", "", change.Row(nil)
		ch, err := bounds.Bound(ctx, snapshot.ChunkRequest{DB: n.DB, Table: n.Name, After: after, Rows: v.cfg.ChunkRows})
		switch {
		case err == nil:
			if where, err = ch.Cond(); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			rng, hi = where, ch.Hi
		case first && defChanged(err):
			// Not on the source (or dropped since listed): compared
			// whole, verify says how the sides differ.
		case defChanged(err) || errors.As(err, new(*snapshot.KeyChangedError)):
			res.unsure = append(res.unsure, name) // altered since the last chunk: the next pass tells
			return nil
		default:
			return fmt.Errorf("%s: the chunk after %v: %w", name, after, err)
		}
		rep, err := v.chunk(ctx, src, dst, n, where)
		if defChanged(err) {
			// Altered on a side since its snapshot began: the next pass
			// tells.
			res.unsure = append(res.unsure, name)
			return nil
		}
		if err != nil {
			return err
		}
		res.chunks++
		v.cfg.Metrics.VerifyChunk()
		res.last = rep.SourcePos
		if len(rep.Tables) == 0 {
			return nil // dropped on both sides since listed
		}
		if first {
			res.tables++
		}
		t := rep.Tables[0]
		if t.Unverified != "" {
			res.unverified = append(res.unverified, t)
			return nil
		}
		if !t.Equal() {
			raced, err := v.ddlRaced(ctx, src, rep.SourcePos)
			if err != nil {
				return err
			}
			if raced {
				res.unsure = append(res.unsure, name)
				return nil
			}
			res.differing = append(res.differing, t)
			res.at[t], res.rng[t] = rep.SourcePos, rng
			if len(t.Schema) > 0 || t.SourceRows < 0 || t.TargetRows < 0 {
				return nil // the definitions differ: said once
			}
		}
		if hi == nil {
			return nil // the last chunk
		}
		after = hi
	}
}

// chunk compares the rows of one table matching where ("": all) in a
// pair of snapshots of the same transactions.
func (v *Verifier) chunk(ctx context.Context, src, dst *client.Conn, n verify.TableName, where string) (*verify.Report, error) {
	one := func(db, table string) bool { return db == n.DB && table == n.Name }
	opts := verify.Options{Select: one, MaxRows: v.cfg.MaxRows, StrictSchema: v.cfg.StrictSchema, Sync: &v.gate, Where: where}
	rep, err := verify.Run(ctx, src, dst, opts)
	for try := 1; errors.Is(err, errPast) && try < pastTries; try++ {
		if _, cerr := src.Execute("ROLLBACK"); cerr != nil {
			return nil, fmt.Errorf("source: ROLLBACK: %w", cerr)
		}
		rep, err = verify.Run(ctx, src, dst, opts)
	}
	return rep, err
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
