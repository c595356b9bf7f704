package mysqlsink

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// workerReplica is worker k's checkpoint row.
func workerReplica(replica string, k int) string {
	if k == 0 {
		return replica
	}
	return replica + "#" + strconv.Itoa(k)
}

// OpenParallel opens n workers (n >= 2) on the target and reconciles their
// checkpoints (see above).
func OpenParallel(ctx context.Context, cfg Config, opts Options, n int) (*Parallel, error) {
	if opts.Replica == "" {
		opts.Replica = "default"
	}
	p := &Parallel{cfg: cfg, opts: opts, safe: map[string]bool{}, safeMap: map[*tablemap.Table]bool{}, part: -1}
	p.copier.recycle = true // parallel_recycle.go
	p.bufFree = make(chan []change.Change, bufFree)
	var err error
	if p.cat, err = dial(ctx, cfg); err != nil {
		return nil, err
	}
	// Worker rows left by an earlier run with another N.
	r, err := p.cat.Execute("SELECT replica, file, pos FROM "+checkpointTable+" WHERE replica LIKE ?", escapeLike(opts.Replica)+"#%")
	var stale []string
	existed := map[int]bool{}
	if err == nil {
		for i := range r.RowNumber() {
			name, _ := r.GetString(i, 0)
			k, kerr := strconv.Atoi(strings.TrimPrefix(name, opts.Replica+"#"))
			if kerr == nil && k >= n {
				stale = append(stale, strings.Clone(name))
			}
			if kerr == nil {
				existed[k] = true
			}
		}
	}
	for k := range n {
		o := opts
		o.Replica = workerReplica(opts.Replica, k)
		o.quietBulk = k > 0
		s, err := Open(ctx, cfg, o)
		if err != nil {
			p.closeWorkers(ctx)
			return nil, err
		}
		// The worker queues its next group while the last one is
		// applied (background.go).
		s.Background()
		w := &worker{s: s, id: k, jobs: make(chan job, workerQueue), done: make(chan struct{}), took: make(chan struct{}, 1), sent: change.TxEnd{Next: s.cp.Next}}
		p.w = append(p.w, w)
		p.cp = append(p.cp, s.cp.Next)
		p.inflight = append(p.inflight, keySet{})
		p.flushing = append(p.flushing, pendingFlush{})
	}
	if err := p.reconcile(stale, existed); err != nil {
		for k := 1; k < n; k++ {
			if !existed[k] { // made by this Open: leave no trace
				p.cat.Execute("DELETE FROM "+checkpointTable+" WHERE replica = ?", workerReplica(opts.Replica, k))
			}
		}
		p.closeWorkers(ctx)
		return nil, err
	}
	for _, w := range p.w {
		w.started = true
		go p.run(ctx, w)
	}
	return p, nil
}

// reconcile checks that the checkpoints were left by a clean stop or by
// this N, and gives new worker rows the common checkpoint.
func (p *Parallel) reconcile(stale []string, existed map[int]bool) error {
	base := p.cp[0]
	equal := true
	for k, c := range p.cp {
		if k > 0 && !existed[k] {
			continue // a new worker
		}
		if c != base {
			equal = false
		}
	}
	for _, name := range stale {
		if !equal {
			return fmt.Errorf("target: replica %q was stopped in the middle of a parallel apply with more workers (its row %q exists); run again with the --parallel it had, to catch up", p.opts.Replica, name)
		}
		r, err := p.cat.Execute("SELECT file, pos FROM "+checkpointTable+" WHERE replica = ?", name)
		if err != nil {
			return fmt.Errorf("target: %w", err)
		}
		f, _ := r.GetString(0, 0)
		pos, _ := r.GetUint(0, 1)
		if (change.Position{File: f, Offset: pos}) != base {
			return fmt.Errorf("target: replica %q was stopped in the middle of a parallel apply with more workers (row %q is at %s:%d, %q at %s:%d); run again with the --parallel it had, to catch up",
				p.opts.Replica, name, f, pos, p.opts.Replica, base.File, base.Offset)
		}
		if _, err := p.cat.Execute("DELETE FROM "+checkpointTable+" WHERE replica = ?", name); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		if err := dropWorkerHistory(p.cat.Execute, name); err != nil {
			return err
		}
	}
	for k := range p.cp {
		if existed[k] || k == 0 || base.File == "" {
			continue
		}
		if !equal {
			return fmt.Errorf("target: replica %q was stopped in the middle of a parallel apply with fewer workers; run again with the --parallel it had, to catch up", p.opts.Replica)
		}
		if err := p.w[k].s.SaveStart(base, p.w[0].s.cp.GTID); err != nil {
			return err
		}
		if err := p.copyHistory(k); err != nil {
			return err
		}
		p.cp[k] = base
		p.w[k].sent = change.TxEnd{Next: base}
	}
	return nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DropWorkerRows is for a replay on one connection (a Sink) of a replica
// that a --parallel run may have left: the worker rows "replica#k" are
// dropped when they are at the replica's checkpoint (a clean stop), and
// refused otherwise, since this replay could not tell which transactions
// the workers applied.
func (s *Sink) DropWorkerRows() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	r, err := s.conn.Execute("SELECT replica, file, pos FROM "+checkpointTable+" WHERE replica LIKE ?", escapeLike(s.opts.Replica)+"#%")
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	var names []string
	for i := range r.RowNumber() {
		name, _ := r.GetString(i, 0)
		if _, err := strconv.Atoi(strings.TrimPrefix(name, s.opts.Replica+"#")); err != nil {
			continue // another replica's name
		}
		f, _ := r.GetString(i, 1)
		pos, _ := r.GetUint(i, 2)
		if (change.Position{File: f, Offset: pos}) != s.cp.Next {
			return fmt.Errorf("target: replica %q was stopped in the middle of a parallel apply (row %q is at %s:%d, %q at %s:%d); run again with the --parallel it had, to catch up",
				s.opts.Replica, name, f, pos, s.opts.Replica, s.cp.Next.File, s.cp.Next.Offset)
		}
		names = append(names, strings.Clone(name))
	}
	r.Close()
	for _, name := range names {
		if _, err := s.conn.Execute("DELETE FROM "+checkpointTable+" WHERE replica = ?", name); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		if err := dropWorkerHistory(s.conn.Execute, name); err != nil {
			return err
		}
	}
	return nil
}

// dropWorkerHistory deletes the schema history a worker row (name) kept
// (parallel_history.go), if any.
func dropWorkerHistory(exec func(string, ...any) (*mysql.Result, error), name string) error {
	if _, err := exec("DELETE FROM "+schemaHistoryTable+" WHERE replica = ?", name); err != nil && myErrorCode(err) != mysql.ER_NO_SUCH_TABLE {
		return fmt.Errorf("target: %w", err)
	}
	return nil
}
