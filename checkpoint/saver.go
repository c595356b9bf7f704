package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// Saver keeps a stream's checkpoint: Commit after each transaction the
// sink committed, Flush at the end. It saves at most every Interval, and
// only what is durable: before each save it runs BeforeSave (the Kafka
// sink's flush) and syncs Output. A failed save is a *WriteError, and
// sticks: every later Commit and Flush returns it, so the stream stops.
type Saver struct {
	Path     string        // "" : keep track, save nothing
	Interval time.Duration // 0: save after every transaction
	// Server (host:port), ServerID and, on MySQL, ServerUUID go into
	// every checkpoint.
	Server, ServerUUID string
	ServerID           uint32
	// Output, if set, is the -o file: synced before each save, and its
	// size saved with the position.
	Output *Output
	// BeforeSave, if set, runs before each save.
	BeforeSave func() error
	// State, if set, is saved with each checkpoint (Checkpoint.Incremental):
	// called when a transaction commits, so it is what the sink holds then.
	State func() ([]byte, error)
	// SchemaHistory, if set, returns the schema history as of the
	// transaction that commits, and whether it changed since the last
	// call (nil data when not). It is saved in Path+".schema-history"
	// (HistorySuffix) before the checkpoint that names it (by its hash,
	// Checkpoint.SchemaHistory).
	SchemaHistory func() (data []byte, changed bool)

	mu       sync.Mutex
	hist     []byte // the schema history to save with the next checkpoint (nil: saved)
	histHash string // of the last schema history
	snapshot []byte // saved with each checkpoint (SetSnapshot)
	pending  *Checkpoint
	saved    time.Time
	held     change.Position // what the file holds
	gtids    MariaPos        // MariaDB: the GTID position after lastTx
	lastTx   change.TxEnd
	err      error
}

// Resume starts from a checkpoint: its GTIDs are carried on. The file
// is not saved again until a transaction commits.
func (s *Saver) Resume(cp *Checkpoint, next change.Position) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gtids, _ = ParseMariaPos(cp.GTIDSet)
	s.lastTx = change.TxEnd{Next: next, GTID: cp.LastGTID}
	s.held = cp.Position()
}

// Start starts at next, where the GTID position is gtidPos (MariaDB;
// "" when unknown or none), and saves that as the checkpoint when next is
// a position: a start point resolved once (--from now) must not be
// resolved again after a stop or a crash before the first commit.
func (s *Saver) Start(next change.Position, gtidPos string) error {
	s.mu.Lock()
	s.gtids, _ = ParseMariaPos(gtidPos)
	s.lastTx = change.TxEnd{Next: next}
	if next.File != "" {
		s.pending = s.checkpoint(s.lastTx)
	}
	s.mu.Unlock()
	return s.Flush()
}

// checkpoint builds the checkpoint after tx; s.mu is held.
func (s *Saver) checkpoint(tx change.TxEnd) *Checkpoint {
	c := &Checkpoint{File: tx.Next.File, Offset: tx.Next.Offset, LastGTID: tx.GTID, LastXid: tx.Xid,
		GTIDSet: s.gtids.String(), Server: s.Server, ServerUUID: s.ServerUUID, ServerID: s.ServerID}
	s.Output.record(c)
	if s.State != nil {
		st, err := s.State()
		if err != nil {
			s.err = &WriteError{What: "the checkpoint " + s.Path, Err: err}
		}
		c.Incremental = st
	}
	c.Snapshot = s.snapshot
	if s.SchemaHistory != nil {
		if data, changed := s.SchemaHistory(); changed {
			s.hist, s.histHash = data, HistoryHash(data)
		}
		c.SchemaHistory = s.histHash
	}
	return c
}

// HistorySuffix names the schema history file beside a checkpoint.
const HistorySuffix = ".schema-history"

// HistoryHash identifies a schema history's content (Checkpoint.SchemaHistory).
func HistoryHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// LoadHistory reads the schema history saved beside the checkpoint cp
// at path: nil when there is none, or when it is not the one cp names
// (a crash between the two writes), which warn then says.
func LoadHistory(path string, cp *Checkpoint) (data []byte, warn string, err error) {
	if cp == nil || cp.SchemaHistory == "" {
		return nil, "", nil
	}
	data, err = os.ReadFile(path + HistorySuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Sprintf("the schema history %s%s named by the checkpoint is missing: the history starts over (tables follow their TABLE_MAPs until created again)", path, HistorySuffix), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint: %w", err)
	}
	if HistoryHash(data) != cp.SchemaHistory {
		return nil, fmt.Sprintf("the schema history %s%s is not the one the checkpoint names: the history starts over (tables follow their TABLE_MAPs until created again)", path, HistorySuffix), nil
	}
	return data, "", nil
}

// SetSnapshot sets the snapshot progress (snapshot.ResumeState as JSON) that
// goes with every checkpoint from the next Commit or Start on; nil: none.
func (s *Saver) SetSnapshot(state []byte) {
	s.mu.Lock()
	s.snapshot = state
	s.mu.Unlock()
}

// Commit records that the transactions up to tx are durable in the sink,
// and saves the checkpoint when it is due.
func (s *Saver) Commit(tx change.TxEnd) error {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	if tx.GTID == "" && tx.Time.IsZero() {
		// A ROTATE moved the resume point before this run committed a
		// transaction (the artificial one at connect): the pipeline does
		// not know the last transaction, the checkpoint it resumed from does.
		tx.GTID = s.lastTx.GTID
	}
	s.lastTx = tx
	if g, ok := ParseMariaGTID(tx.GTID); ok {
		if s.gtids == nil {
			s.gtids = MariaPos{}
		}
		s.gtids.Add(g)
	}
	if s.Path == "" || tx.HeldXA {
		// Nothing to save (with prepared XA transactions held, a
		// checkpoint after their XA PREPARE would lose them: the one
		// before stays, and a restart reads them again): building the checkpoint (its GTID set as text)
		// would cost a catching-up stream more than its output.
		s.mu.Unlock()
		return nil
	}
	s.pending = s.checkpoint(tx)
	due := s.Interval == 0 || time.Since(s.saved) >= s.Interval
	s.mu.Unlock()
	if !due {
		return nil
	}
	return s.Flush()
}

// Flush saves the latest checkpoint, if it is not saved yet.
func (s *Saver) Flush() error {
	if s.BeforeSave != nil && s.Path != "" {
		if err := s.BeforeSave(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.Path == "" || s.pending == nil {
		return nil
	}
	if s.Output != nil {
		if err := s.Output.Sync(); err != nil {
			s.err = err
			return err
		}
	}
	if s.hist != nil {
		// Before the checkpoint that names it: a crash between the two
		// leaves the old checkpoint, which names the old history, and
		// LoadHistory tells.
		if err := WriteFile(s.Path+HistorySuffix, s.hist); err != nil {
			s.err = &WriteError{What: "the schema history " + s.Path + HistorySuffix, Err: err}
			return s.err
		}
		s.hist = nil
	}
	s.pending.Saved = time.Now().UTC()
	if err := Save(s.Path, s.pending); err != nil {
		s.err = &WriteError{What: "the checkpoint " + s.Path, Err: err}
		return s.err
	}
	s.held = s.pending.Position()
	s.pending = nil
	s.saved = time.Now()
	return nil
}

// Last returns where the transaction after the last committed one starts.
func (s *Saver) Last() change.Position {
	if s == nil {
		return change.Position{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTx.Next
}

// Held returns the position the checkpoint file holds (zero when nothing
// was saved or read).
func (s *Saver) Held() change.Position {
	if s == nil {
		return change.Position{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// LastTime returns the commit time of the last transaction.
func (s *Saver) LastTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTx.Time
}

// String describes where the checkpoint stands, for messages.
func (s *Saver) String() string {
	h := s.Held()
	if h.File == "" {
		return "no checkpoint saved"
	}
	return fmt.Sprintf("the checkpoint holds %s:%d", h.File, h.Offset)
}
