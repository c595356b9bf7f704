package archive

// Reading an archive: which of its files a read needs, from the manifest
// alone, and checking them before anything is read.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
)

// IsArchive reports whether path is a directory holding an archive
// manifest.
func IsArchive(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, manifestName))
	return err == nil
}

// ReadRange is what a read wants from an archive: its start and stop
// bounds (zero: none).
type ReadRange struct {
	StartFile string // --start-position's file
	// StartGTID is a MariaDB GTID position (domain-server-seq, …) or a
	// MySQL GTID set (uuid:1-100, …): the read starts after it.
	StartGTID           string
	StartTime, StopTime time.Time
	StopFile            string // --stop-position's file
}

// ReadPlan is the part of the archive to read.
type ReadPlan struct {
	// Parts are what to read of each file, oldest first, across the
	// archive's server histories: a history's file is read up to its
	// switch point, a later history's first file from its first
	// transaction after the switch; a later history's files are named
	// "history-N/NAME" in positions (change.History).
	Parts []binlog.Part
	Files []string // the parts' paths (compressed files as they are)
	// Open: the plan's last file is the archive's open file (read up to
	// its last whole event: its part's To).
	Open bool
	// More: files after the plan's last were left out; a read that ends
	// without reaching its stop bound must say so.
	More bool
	// Skip reports the transactions not to deliver: those StartGTID
	// holds, and those a later history repeats of the one before.
	Skip func(pos change.Position, gtid string) bool
	// Empty: nothing follows StartGTID in the archive.
	Empty bool
	// Range says which files, for the note on stderr.
	Range string
}

// PlanRead checks the archive in dir and chooses its files for r: from
// the manifests alone, without opening the files it leaves out (but a
// later server history's first file, to find its first transaction
// after the switch). Every file a manifest lists must be there (plain or
// compressed); the complete files chosen must have the SHA-256 the
// manifest gives; the open file is read up to its last whole event.
// Positions (r.StartFile, r.StopFile) name a later history's files
// "history-N/NAME".
func PlanRead(dir string, r ReadRange) (*ReadPlan, error) {
	return PlanReadStore(context.Background(), DirStore(dir), r)
}

// PlanReadStore is PlanRead for the archive in st: a directory, or a
// bucket the archiver uploads to (archive/s3up), whose files are read as
// streams (ReadPlan.Parts' Open) and checked before, each in a read of
// its own.
func PlanReadStore(ctx context.Context, st Store, r ReadRange) (*ReadPlan, error) {
	dir := st.String()
	m, ok, err := readManifestFrom(ctx, st, "")
	if err != nil {
		return nil, err
	}
	if !ok {
		if !st.Local() {
			return nil, &Error{Msg: fmt.Sprintf("%s holds no archive of binlogcdc: it has no %s", dir, manifestName),
				Hint: "give the s3://bucket/prefix that 'binlogcdc archive --upload' sends to (the manifest is uploaded after the first file)"}
		}
		return nil, &Error{Msg: fmt.Sprintf("%s is not an archive of binlogcdc: it has no %s", dir, manifestName),
			Hint: "give the directory 'binlogcdc archive --dir' writes, or binlog files"}
	}
	if len(m.Files) == 0 {
		return nil, &Error{Msg: fmt.Sprintf("the archive %s holds no file yet", dir), Hint: "wait for 'binlogcdc archive' to copy the first one"}
	}
	c, err := readChain(ctx, st, m) // plan.go
	if err != nil {
		return nil, err
	}
	fs := c.files
	plan := &ReadPlan{}
	if len(fs) == 0 {
		plan.Empty = true
		return plan, nil
	}
	first, last := 0, len(fs)-1
	if r.StartFile == "" && r.StartGTID == "" && r.StartTime.IsZero() {
		// No start: the oldest file still in the archive (--keep-days
		// and --keep-size expire the oldest first).
		for first < last && fs[first].e.Expired {
			first++
		}
	}
	if r.StartFile != "" {
		if first = c.index(r.StartFile); first < 0 {
			return nil, &Error{Msg: fmt.Sprintf("the start file %s is not in the archive %s, which holds %s … %s", r.StartFile, dir, fs[0].name, fs[last].name),
				Hint: "start in one of the archive's files (a later server history's as history-N/NAME)"}
		}
	}
	var startSkip func(string) bool
	if r.StartGTID != "" {
		var i int
		if m.Flavor == "mysql" {
			i, err = mysqlGTIDStart(dir, c, r.StartGTID, &startSkip) // mysqlstart.go
		} else {
			i, err = gtidStart(dir, fs, r.StartGTID, plan, &startSkip)
		}
		if err != nil {
			return nil, err
		}
		if plan.Empty {
			return plan, nil
		}
		first = max(first, i)
	}
	plan.Skip = func(pos change.Position, g string) bool {
		return startSkip != nil && startSkip(g) || c.repeated(pos, g)
	}
	if !r.StartTime.IsZero() {
		// Every event of a file was written before the next file began
		// (its first event's time): a file whose successor began before
		// the start holds nothing at or after it (unless the successor's
		// first transactions repeat the history before it).
		for first < last && !fs[first+1].cutStart && timeBefore(fs[first+1].e.FirstTime, r.StartTime) {
			first++
		}
	}
	if r.StopFile != "" {
		if i := c.index(r.StopFile); i >= 0 && i+1 < last {
			// A transaction starting at or after the stop position is in
			// it or, at the latest, the first of the next file.
			last = i + 1
		}
	}
	if !r.StopTime.IsZero() {
		// A file that began after the stop holds no transaction the read
		// needs unless none before it began at or after the stop: one
		// file more, then the read checks it did stop (More).
		for i := first + 1; i < last; i++ {
			if !fs[i].cutStart && !timeBefore(fs[i].e.FirstTime, r.StopTime) {
				last = i
				break
			}
		}
	}
	if last < first {
		last = first
	}
	plan.More = last < len(fs)-1
	var expired []string
	for i := first; i <= last; i++ {
		if fs[i].e.Expired {
			expired = append(expired, fs[i].name)
		}
	}
	if len(expired) > 0 {
		return nil, &Error{Msg: fmt.Sprintf("the read needs %s, which the archive %s no longer holds: expired (--keep-days/--keep-size)", strings.Join(expired, ", "), dir),
			Hint: "restore them from the upload (--upload) or another copy, or start the read later (--start-position " + fs[last].name + " or after)"}
	}
	for i := first; i <= last; i++ {
		f := fs[i]
		part := binlog.Part{Path: f.path, Name: f.name, From: f.from, To: f.to}
		if !st.Local() {
			key := f.key
			part.Open = func() (io.ReadCloser, error) { return st.Open(ctx, key) }
		}
		switch {
		case f.checked:
		case f.e.Complete:
			if err := c.checkSum(&fs[i]); err != nil {
				return nil, err
			}
		default:
			s, err := c.scanOpen(&fs[i])
			if err != nil {
				return nil, err
			}
			if part.To == 0 || s.end < part.To {
				part.To = s.end
			}
			plan.Open = true
		}
		plan.Parts = append(plan.Parts, part)
		plan.Files = append(plan.Files, f.path)
	}
	plan.Range = fs[first].name
	if last > first {
		plan.Range += " … " + fs[last].name
	}
	if c.hists > 1 && (fs[first].hist != fs[last].hist) {
		plan.Range += fmt.Sprintf(" (across %d server histories: a failover)", fs[last].hist-fs[first].hist+1)
	}
	return plan, nil
}

// timeBefore reports whether the manifest time t (RFC 3339; "" unknown) is
// before bound.
func timeBefore(t string, bound time.Time) bool {
	tt, err := time.Parse(time.RFC3339, t)
	return err == nil && tt.Before(bound)
}

// archivedPaths finds every file the manifest m of the history sub
// lists, plain or compressed (.zst, .gz), and returns their names in st;
// the missing ones are an error that names them all. An expired file
// (keep.go) is not looked for: its name is "".
func archivedPaths(ctx context.Context, st Store, sub string, m *Manifest) ([]string, error) {
	have, err := st.List(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("cannot list the archive %s: %w", st.Path(sub), err)
	}
	var keys, missing []string
	for _, e := range m.Files {
		found := ""
		if e.Expired {
			keys = append(keys, found)
			continue
		}
		for _, suffix := range []string{"", ".zst", ".gz"} {
			if have[e.Name+suffix] {
				found = path.Join(sub, e.Name+suffix)
				break
			}
		}
		if found == "" {
			missing = append(missing, e.Name)
		}
		keys = append(keys, found)
	}
	if len(missing) > 0 {
		return nil, &Error{Msg: fmt.Sprintf("the archive %s lacks %s, which its manifest lists", st.Path(sub), strings.Join(missing, ", ")),
			Hint: "restore the missing files into the archive from a copy (plain, .zst or .gz); binlogcdc does not read an archive with a hole"}
	}
	return keys, nil
}

// checkSum checks a complete file's checksum (of the binlog: a compressed
// file is hashed as it decompresses, binlog.Decompress; whichever
// algorithm the manifest records, sum.go) against the manifest. r is
// the file as stored, path names it.
func checkSum(r io.Reader, path string, e *FileEntry) error {
	want := e.plainSum()
	if want == "" {
		return &Error{Msg: fmt.Sprintf("the archive's manifest gives no checksum for %s, which it lists as complete", e.Name), Hint: "restore the manifest from a copy"}
	}
	z, _, err := binlog.Decompress(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return damagedSum(path, e, err.Error())
	}
	defer z.Close()
	got, _, err := sumReader(z, want)
	if err != nil {
		return damagedSum(path, e, "it cannot be read: "+err.Error())
	}
	if !sameSum(got, want) {
		return damagedSum(path, e, sumMismatch(got, want))
	}
	return nil
}

func damagedSum(path string, e *FileEntry, what string) error {
	return &Error{Msg: fmt.Sprintf("the archive's %s is damaged: %s; nothing was read", path, what),
		Hint: "restore " + e.Name + " from a copy (its checksum is in " + manifestName + ")"}
}

// gtidStart chooses the first file for a start after the MariaDB GTID
// position pos: the first file whose last GTID is not in it. The start
// must be in the archive: each domain the archive logs must be in pos,
// at or after the GTID just before the archive's first, and not past the
// archive's last.
func gtidStart(dir string, fs []planFile, s string, plan *ReadPlan, skip *func(string) bool) (int, error) {
	pos, ok := checkpoint.ParseMariaPos(s)
	if !ok || len(pos) == 0 {
		return 0, &Error{Msg: fmt.Sprintf("--start-gtid %q: reading an archive takes a MariaDB GTID position (domain-server-seq, …)", s),
			Hint: "--start-gtid 0-1-100 (the GTID in the backup's mariadb_backup_binlog_info)"}
	}
	in := func(g string) bool {
		x, ok := checkpoint.ParseMariaGTID(g)
		if !ok {
			return false
		}
		p, ok := pos[x.Domain]
		return ok && x.Seq <= p.Seq
	}
	*skip = in
	firstSeen := map[uint32]checkpoint.MariaGTID{}
	lastSeen := map[uint32]checkpoint.MariaGTID{}
	for _, f := range fs {
		for _, g := range []string{f.e.FirstGTID, f.e.LastGTID} {
			x, ok := checkpoint.ParseMariaGTID(g)
			if !ok {
				continue
			}
			if _, seen := firstSeen[x.Domain]; !seen {
				firstSeen[x.Domain] = x
			}
			lastSeen[x.Domain] = x
		}
	}
	notIn := func(why string) error {
		return &Error{Msg: fmt.Sprintf("--start-gtid %s is not in the archive %s (%s … %s): %s", s, dir, fs[0].name, fs[len(fs)-1].name, why),
			Hint: "start at a GTID the archive holds (or the one just before its first); an archive started later than the backup misses the changes in between"}
	}
	for d, f := range firstSeen {
		p, ok := pos[d]
		switch {
		case !ok:
			return 0, notIn(fmt.Sprintf("it says nothing of domain %d, which the archive logs from %s on", d, f))
		case p.Seq+1 < f.Seq:
			return 0, notIn(fmt.Sprintf("the archive's first transaction of domain %d is %s: those between are missing", d, f))
		case p.Seq > lastSeen[d].Seq:
			return 0, notIn(fmt.Sprintf("the archive's last transaction of domain %d is %s", d, lastSeen[d]))
		}
	}
	for i, f := range fs {
		if f.e.LastGTID != "" && !in(f.e.LastGTID) {
			if len(firstSeen) > 1 {
				// Several domains: a file's first and last GTIDs do not
				// say what else it holds; read from the start.
				return 0, nil
			}
			return i, nil
		}
	}
	plan.Empty = true // every transaction of the archive is in pos
	return len(fs) - 1, nil
}
