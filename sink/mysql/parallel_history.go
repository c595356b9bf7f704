package mysqlsink

// The schema history with --parallel (docs/schema-history.md).
//
// Each worker saves the history in its own row of
// binlogcdc.schema_history ("replica#k", as its checkpoint row), in the
// target transaction of its checkpoint, as of the transaction end that
// checkpoint names: a worker is handed the history with the first
// transaction end (its own transaction's, or one it is moved past) after
// which the history differs from the one it was handed last. Reading
// resumes from the earliest worker checkpoint (Checkpoint); the history
// saved with it is the one as of there, and the DDL read again from
// there on replays into it.

import "fmt"

// parallelHistory is the history the coordinator hands the workers.
type parallelHistory struct {
	next    []byte // as of the transaction being committed (SetSchemaHistory)
	nextGen uint64 // its generation: 0 none yet, then counting up
	last    []byte // as of Parallel.last
	lastGen uint64
}

// committed moves next to last: the transaction was committed and is
// Parallel.last now.
func (h *parallelHistory) committed() { h.last, h.lastGen = h.next, h.nextGen }

// nextFor returns the history as of the transaction being committed when
// w was not handed it yet (else nil), and records that it is.
func (h *parallelHistory) nextFor(w *worker) []byte {
	if h.nextGen == 0 || w.histSent == h.nextGen {
		return nil
	}
	w.histSent = h.nextGen
	return h.next
}

// lastFor is nextFor for the history as of Parallel.last.
func (h *parallelHistory) lastFor(w *worker) []byte {
	if h.lastGen == 0 || w.histSent == h.lastGen {
		return nil
	}
	w.histSent = h.lastGen
	return h.last
}

// SchemaHistory creates binlogcdc.schema_history when missing and returns
// the history saved with the checkpoint reading resumes from (nil: none).
func (p *Parallel) SchemaHistory() ([]byte, error) {
	var data [][]byte
	for _, w := range p.w {
		d, err := w.s.SchemaHistory()
		if err != nil {
			return nil, err
		}
		data = append(data, d)
	}
	best := 0
	for k := range p.w {
		if p.cp[k].File == "" {
			return nil, nil // reading starts at the beginning
		}
		if posLess(p.cp[k], p.cp[best]) {
			best = k
		}
	}
	return data[best], nil
}

// SetSchemaHistory hands the workers the schema history as of the
// transaction the next Commit commits: each saves it with its
// checkpoint when that moves to or past that transaction's end.
func (p *Parallel) SetSchemaHistory(data []byte) {
	p.hist.next = data
	p.hist.nextGen++
}

// copyHistory gives the new worker k, whose checkpoint is worker 0's,
// worker 0's schema history too (none: none, rather than one an older
// run left in its row).
func (p *Parallel) copyHistory(k int) error {
	data, err := p.w[0].s.SchemaHistory()
	if err != nil {
		return err
	}
	name := workerReplica(p.opts.Replica, k)
	if data == nil {
		return dropWorkerHistory(p.cat.Execute, name)
	}
	if _, err := p.cat.Execute("REPLACE INTO "+schemaHistoryTable+" (replica, history, updated) VALUES (?, ?, NOW(6))", name, data); err != nil {
		return fmt.Errorf("target: copying the schema history to %q: %w", name, err)
	}
	return nil
}
