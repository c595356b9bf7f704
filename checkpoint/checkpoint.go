// Package checkpoint saves and loads the resume point of a stream: where
// the next transaction starts. It is written only at transaction
// boundaries, after the sink made the transaction durable, and saved
// atomically (write, fsync, rename, fsync the directory), so a crash at
// any moment leaves either the old or the new checkpoint, never a torn
// one.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// Checkpoint is a resume point.
type Checkpoint struct {
	// File and Offset: where the next transaction starts.
	File   string `json:"file"`
	Offset uint64 `json:"offset"`
	// LastGTID is the GTID of the last transaction emitted, if any.
	LastGTID string `json:"last_gtid,omitempty"`
	// LastXid is the XID of that transaction when an XID event ending at
	// Offset committed it: a server-side counter, which tells two servers
	// apart where their GTIDs and positions coincide (see Resume).
	LastXid uint64 `json:"last_xid,omitempty"`
	// GTIDSet is the server's GTID position after that transaction, where
	// binlogcdc knows it (MariaDB: one GTID per domain).
	GTIDSet string `json:"gtid_set,omitempty"`
	// Server is the source's address ("host:port") when it was saved,
	// for messages: whether the checkpoint belongs to a server is checked
	// on its GTIDs and binlog (see Resume).
	Server string `json:"server,omitempty"`
	// ServerUUID is a MySQL source's @@server_uuid: a checkpoint without
	// GTIDs is only used on the server that wrote its positions.
	ServerUUID string `json:"server_uuid,omitempty"`
	// ServerID is the source's @@server_id: whether it originated the
	// last transaction or logged it as a replica (see Resume).
	ServerID uint32 `json:"server_id,omitempty"`
	// Output is the absolute path of the -o file and OutputSize its
	// length after the transaction before File:Offset: a restart cuts off
	// what was written after it (see OpenOutput).
	Output     string `json:"output,omitempty"`
	OutputSize int64  `json:"output_size,omitempty"`
	// Incremental is the progress of incremental snapshots
	// (snapshot.Incremental's state) as of File:Offset.
	Incremental json.RawMessage `json:"incremental,omitempty"`
	// Snapshot is the progress of a snapshot (snapshot.ResumeState) while it
	// is not finished, or finished with parts read at positions the
	// stream has not passed yet.
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	// SchemaHistory identifies the schema history saved beside the
	// checkpoint (FILE.schema-history) as of File:Offset: the SHA-256 of
	// its content, in hex. A history file that does not match it is not
	// used (see Saver.SchemaHistory).
	SchemaHistory string    `json:"schema_history,omitempty"`
	Saved         time.Time `json:"saved"`
}

// Position returns the resume position.
func (c *Checkpoint) Position() change.Position {
	return change.Position{File: c.File, Offset: c.Offset}
}

// Load reads a checkpoint file. A missing file returns nil, nil.
func Load(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("checkpoint: %s is damaged (%v); move it away to start over from --from or --start-position", path, err)
	}
	if c.File == "" || c.Offset < 4 {
		return nil, fmt.Errorf("checkpoint: %s holds no position; move it away to start over", path)
	}
	return &c, nil
}

// Save writes c to path atomically.
func Save(path string, c *Checkpoint) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	data = append(data, '\n')
	if err := WriteFile(path, data); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// WriteFile writes data to path atomically: a temporary file beside it,
// fsync, rename over path, fsync the directory. A crash leaves the old
// content or the new, never a mix.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
