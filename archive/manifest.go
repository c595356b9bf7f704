package archive

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// Names of the archiver's own files in DIR.
const (
	manifestName = "binlogcdc-archive.json"
	lockName     = "binlogcdc-archive.lock"
	tmpSuffix    = ".tmp"
)

// Manifest describes an archive directory: where its files came from and,
// for each file, what it holds. It is rewritten (atomically: a temporary
// file, fsync, rename, fsync of DIR) when a file is started, when one is
// closed, and when the archiver stops; between those, the open file's
// entry lags behind the file, which a restart measures again.
type Manifest struct {
	Format int `json:"format"`
	// Source is the server the archive was started from (host:port),
	// Flavor "mariadb" or "mysql", ServerID its @@server_id then.
	Source   string `json:"source"`
	Flavor   string `json:"flavor"`
	ServerID uint32 `json:"server_id"`
	// Files are the archived binlog files, oldest first.
	Files []*FileEntry `json:"files"`
	// Next, set once the source was replaced by another server (a
	// failover, history.go), names the subdirectory of the archive's
	// directory holding the history the archive went on with; this
	// manifest's files are then final.
	Next string `json:"next,omitempty"`
	// Switch, in the manifest of a history after a failover, says where
	// it takes over from the one before.
	Switch *Switch `json:"switch,omitempty"`
}

// FileEntry is one archived binlog file.
type FileEntry struct {
	Name string `json:"name"`
	// Size is the file's size in bytes (for the open file: when the
	// manifest was written).
	Size uint64 `json:"size"`
	// Complete: the server closed the file and every byte of it is here.
	Complete bool `json:"complete"`
	// End says how the file ended: "rotate" (a ROTATE event: the server
	// went on to the next file), "stop" (a STOP_EVENT: the server shut
	// down cleanly), "crash" (the server went on to a new file without
	// either: it was killed or crashed while the file was open),
	// "failover" (the server was replaced by another, history.go: the
	// file ends where the archive had it).
	End string `json:"end,omitempty"`
	// LastEvent is where the file's last whole event starts: a restart
	// asks the server for that event again and compares it with this
	// one, byte for byte, before it goes on.
	LastEvent int64 `json:"last_event,omitempty"`
	// The checksum of the whole file, for complete files (sum.go): its
	// SHA-256 (--hash sha256, and every manifest written before there was
	// a choice), or Sum, "ALGO:HEX" ("xxh3-64:…", the default).
	SHA256 string `json:"sha256,omitempty"`
	Sum    string `json:"sum,omitempty"`
	// The file's first and last GTID ("" when none), and the times of its
	// first and last events (RFC 3339, UTC).
	FirstGTID string `json:"first_gtid,omitempty"`
	LastGTID  string `json:"last_gtid,omitempty"`
	FirstTime string `json:"first_time,omitempty"`
	LastTime  string `json:"last_time,omitempty"`
	// PreviousGTIDs, of a MySQL file: the GTID set of its PREVIOUS_GTIDS
	// event, what the server had executed before the file ("": the empty
	// set). Absent when unknown (a MariaDB file; manifests written before
	// it was recorded: a read takes it from the file).
	PreviousGTIDs *string `json:"previous_gtids,omitempty"`
	// Stored names the file in its directory when it is not Name: the
	// zstd-compressed copy (--compress zstd, compress.go), with its own
	// size and checksum (Size and SHA256/Sum stay the binlog's own).
	// Expired: removed by --keep-days/--keep-size (keep.go); Uploaded:
	// sent to --upload and checked there (upload.go).
	Expired  bool `json:"expired,omitempty"`
	Uploaded bool `json:"uploaded,omitempty"`
	// UploadedUpto: of the open file, the bytes uploaded in parts
	// (--upload-open-every: NAME.part-OFFSET objects, upload.go).
	UploadedUpto int64 `json:"uploaded_upto,omitempty"`
	// Parts: parts of the file may be in the store; they are removed
	// once the whole file is uploaded, then Parts is cleared.
	Parts        bool   `json:"parts,omitempty"`
	Stored       string `json:"stored,omitempty"`
	StoredSize   uint64 `json:"stored_size,omitempty"`
	StoredSHA256 string `json:"stored_sha256,omitempty"`
	StoredSum    string `json:"stored_sum,omitempty"`
}

// stored is the name of the entry's file in its directory.
func (e *FileEntry) stored() string {
	if e.Stored != "" {
		return e.Stored
	}
	return e.Name
}

// readManifest reads DIR's manifest; ok is false when there is none.
func readManifest(dir string) (m *Manifest, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	m, err = parseManifest(b, filepath.Join(dir, manifestName))
	return m, err == nil, err
}

// parseManifest decodes and checks a manifest (where names it in
// messages): a local one or a bucket's, which the reader trusts no more
// than any input.
func parseManifest(b []byte, where string) (*Manifest, error) {
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the archive's manifest %s is damaged: %v", where, err),
			Hint: "restore it from a copy; binlogcdc archive does not rebuild it, so that a damaged archive is never taken for a good one"}
	}
	if m.Format != 1 {
		return nil, &Error{Msg: fmt.Sprintf("the archive's manifest %s has format %d; this binlogcdc knows format 1", where, m.Format),
			Hint: "use the binlogcdc that wrote it"}
	}
	for i, e := range m.Files {
		if e == nil || !validName(e.Name) {
			name := ""
			if e != nil {
				name = e.Name
			}
			return nil, &Error{Msg: fmt.Sprintf("the archive's manifest %s names file %q, which is no binlog file name", where, name)}
		}
		if i < len(m.Files)-1 && !e.Complete {
			return nil, &Error{Msg: fmt.Sprintf("the archive's manifest %s says %s is not complete, but files follow it", where, e.Name),
				Hint: "restore the manifest from a copy"}
		}
	}
	if m.Next != "" && !validName(m.Next) {
		return nil, &Error{Msg: fmt.Sprintf("the archive's manifest %s names its next history %q, which is no directory name", where, m.Next),
			Hint: "restore the manifest from a copy"}
	}
	return m, nil
}

// writeAtomic replaces dir/name with data: through a temporary file that
// is fsynced and renamed, then dir is fsynced, so that after a crash or a
// power loss the file is the old one or the new one, whole.
func writeAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// save writes the manifest and the index (of a manifest only this
// goroutine uses; the archiver's go through archiver.save, worker.go).
func (m *Manifest) save(dir string) error {
	enc, err := m.encode()
	if err != nil {
		return err
	}
	return enc.write(dir)
}

// encoded is a manifest and its index as they are written.
type encoded struct {
	manifest, index []byte
	indexName       string // "": no index yet
}

// encode is the manifest's and the index's contents.
func (m *Manifest) encode() (encoded, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return encoded{}, err
	}
	var sb strings.Builder
	for _, e := range m.Files {
		if !e.Expired {
			sb.WriteString("./" + e.stored() + "\n")
		}
	}
	return encoded{append(b, '\n'), []byte(sb.String()), indexName(m)}, nil
}

// write writes the manifest and the index into dir.
func (enc encoded) write(dir string) error {
	if err := writeAtomic(dir, manifestName, enc.manifest); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot write the archive's manifest in %s: %v", dir, err), Write: true}
	}
	if enc.indexName != "" {
		if err := writeAtomic(dir, enc.indexName, enc.index); err != nil {
			return &Error{Msg: fmt.Sprintf("cannot write the archive's index in %s: %v", dir, err), Write: true}
		}
	}
	return nil
}

// indexName is the index file of the archive: like the server's, named
// after the files' series (binlog.index for binlog.000001, …), so that
// 'binlogcdc read DIR/binlog.index' reads the archive.
func indexName(m *Manifest) string {
	if len(m.Files) == 0 {
		return ""
	}
	stem, _, ok := binlog.Sequence(m.Files[0].Name)
	if !ok {
		return ""
	}
	return stem + ".index"
}

// last is the newest file's entry, or nil.
func (m *Manifest) last() *FileEntry {
	if len(m.Files) == 0 {
		return nil
	}
	return m.Files[len(m.Files)-1]
}

// Error is an archive error with a hint. Write: writing to DIR failed.
type Error struct {
	Msg   string
	Hint  string
	Write bool
}

func (e *Error) Error() string { return e.Msg }
