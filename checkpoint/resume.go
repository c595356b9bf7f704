package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// Server is what Resume asks the server a checkpoint is to resume on
// (binlog.History).
type Server interface {
	Flavor() string
	// Binlogs lists the binlog files, oldest first.
	Binlogs(ctx context.Context) ([]string, error)
	// GTIDPosAt is MariaDB's BINLOG_GTID_POS(file, pos); ok is false when
	// file:pos is not an event boundary of a file the server has.
	GTIDPosAt(ctx context.Context, file string, pos uint64) (state string, ok bool, err error)
	// GTIDState is MariaDB's @@gtid_binlog_state, MySQL's @@gtid_executed.
	GTIDState(ctx context.Context) (string, error)
	// ServerUUID is MySQL's @@server_uuid ("" on MariaDB).
	ServerUUID(ctx context.Context) (string, error)
	// GTIDSubset is MySQL's GTID_SUBSET(sub, set).
	GTIDSubset(ctx context.Context, sub, set string) (bool, error)
	// XidAt returns the XID of the XID event that ends at file:end; ok is
	// false when no XID event ends there.
	XidAt(ctx context.Context, file string, end uint64) (xid uint64, ok bool, err error)
	// ServerID is the server's @@server_id.
	ServerID(ctx context.Context) (uint32, error)
}

// Plan is where a checkpoint resumes on a server.
type Plan struct {
	// Pos is the binlog position to resume at; when its File is "", the
	// stream resumes by GTID, after the transactions in GTIDSet.
	Pos     change.Position
	GTIDSet string
	// Note says why the plan is not the checkpoint's own position, for
	// the log ("" when it is).
	Note string
}

// Resume checks that the checkpoint cp (read from path) belongs to the
// history of the server it is to resume on, at address addr, and says
// where to resume. A checkpoint belongs to a server when
//
//   - its position is where its last transaction ends in the server's
//     binlog (MariaDB: BINLOG_GTID_POS(file, pos) is the checkpoint's GTID
//     position; MySQL: the server has the same server_uuid and, with
//     GTIDs, has executed the checkpoint's last one), or
//   - (MariaDB) the server logged every GTID of the checkpoint's position:
//     another server of the same replication history, such as a promoted
//     replica after a failover, or the same server after its binlog was
//     reset. The stream then resumes by GTID.
//
// Otherwise it refuses with a *binlog.PreflightError that says why. A
// checkpoint whose binlog is gone gets the "purged" diagnosis only when
// the server's binlogs did move past it: the server once had the file (an
// older file of the same sequence and, with GTIDs, its history holds the
// checkpoint's), and transactions after the checkpoint are gone. When
// none are (the server rotated away from an idle checkpoint and purged
// the file), it resumes at the oldest binlog.
func Resume(ctx context.Context, srv Server, cp *Checkpoint, path, addr string) (Plan, error) {
	return ResumeForget(ctx, srv, cp, path, addr, "move "+path+" away")
}

// ResumeForget is Resume for a checkpoint kept elsewhere than in a file
// (path names it): forget says how to remove it, in the hints that tell
// the user to start over (a checkpoint wins over the start flags, so
// they do nothing while it is there).
func ResumeForget(ctx context.Context, srv Server, cp *Checkpoint, path, addr, forget string) (Plan, error) {
	files, err := srv.Binlogs(ctx)
	if err != nil {
		return Plan{}, err
	}
	if len(files) == 0 {
		return Plan{}, &binlog.PreflightError{Problem: "the server lists no binlogs", Hint: "is log_bin on?"}
	}
	r := resumer{srv: srv, cp: cp, path: path, addr: addr, forget: forget, files: files, has: slices.Contains(files, cp.File)}
	if srv.Flavor() == "mariadb" {
		return r.maria(ctx)
	}
	return r.mysql(ctx)
}

type resumer struct {
	srv        Server
	cp         *Checkpoint
	path, addr string
	forget     string // how to remove the checkpoint (ResumeForget)
	files      []string
	has        bool // the server has cp.File
}

func (r *resumer) maria(ctx context.Context) (Plan, error) {
	cp := r.cp
	want, _ := ParseMariaPos(cp.GTIDSet)
	if len(want) == 0 && cp.LastGTID != "" {
		if g, ok := ParseMariaGTID(cp.LastGTID); ok {
			want = MariaPos{g.Domain: g}
		}
	}
	if r.has {
		at, ok, err := r.srv.GTIDPosAt(ctx, cp.File, cp.Offset)
		if err != nil {
			return Plan{}, err
		}
		atPos, _ := ParseMariaPos(at)
		switch {
		case ok && len(want) > 0 && want.Matches(atPos):
			if err := r.sameXid(ctx); err != nil {
				return Plan{}, err
			}
			return Plan{Pos: cp.Position()}, nil
		case ok && len(want) == 0 && (len(atPos) == 0 || cp.Server == r.addr):
			// No GTIDs to check: no transaction came before the position
			// on this server either, or it is the address it was saved
			// against (a checkpoint of an older binlogcdc).
			if err := r.sameXid(ctx); err != nil {
				return Plan{}, err
			}
			return Plan{Pos: cp.Position()}, nil
		case len(want) == 0:
			return Plan{}, r.foreign(fmt.Sprintf("it has no GTIDs, and %s:%d %s on this server", cp.File, cp.Offset, atDesc(ok, at)))
		}
	} else if len(want) == 0 {
		return Plan{}, r.noFile()
	}
	state, err := r.srv.GTIDState(ctx)
	if err != nil {
		return Plan{}, err
	}
	if !ParseMariaState(state).Contains(want) {
		if err := r.ahead(ctx, want, state); err != nil {
			return Plan{}, err
		}
		why := fmt.Sprintf("this server has not logged its GTID position %s (the server's GTID state is %q)", want, state)
		if r.has {
			why = fmt.Sprintf("%s:%d is not where its last transaction %s ends on this server, and %s", cp.File, cp.Offset, want, why)
		}
		return Plan{}, r.foreign(why)
	}
	// This server's history holds the checkpoint's transactions: does it
	// still have the ones after them?
	oldest := r.files[0]
	start, ok, err := r.srv.GTIDPosAt(ctx, oldest, 4)
	if err != nil {
		return Plan{}, err
	}
	startPos, _ := ParseMariaPos(start)
	if ok && !want.After(startPos) {
		return Plan{}, r.purged(fmt.Sprintf("its oldest binlog %s starts at GTID state %s, after the checkpoint's %s", oldest, start, want))
	}
	if !r.has && sameSequence(cp.File, oldest) && cp.File < oldest && len(startPos) > 0 && want.Matches(startPos) && want.After(startPos) {
		return Plan{Pos: change.Position{File: oldest, Offset: 4},
			Note: fmt.Sprintf("the server no longer has %s, but lost nothing after the checkpoint: its oldest binlog %s starts at GTID state %s, which is the checkpoint's %s",
				cp.File, oldest, start, want)}, nil
	}
	// By GTID, the server starts every domain the position does not name
	// from its beginning: only a position naming them all will do (a
	// checkpoint of an older binlogcdc, or the last GTID kept by a replay
	// target or in Kafka, may name only the domains it saw).
	var missing []string
	for k := range ParseMariaState(state) {
		if _, ok := want[k[0]]; !ok {
			missing = append(missing, fmt.Sprint(k[0]))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Plan{}, &binlog.PreflightError{
			Problem: fmt.Sprintf("the checkpoint in %s (%s:%d, saved against %s) is not a position in this server's (%s) binlog, and its GTID position %s lacks the server's GTID domain(s) %s: it cannot resume by GTID",
				r.path, cp.File, cp.Offset, orUnknown(cp.Server), r.addr, want, strings.Join(slices.Compact(missing), ", ")),
			Hint: r.forget + ", then start with --start-gtid and the full GTID position of the last transaction the output has (one GTID per domain)",
		}
	}
	var note string
	if r.has {
		note = fmt.Sprintf("the checkpoint's %s:%d (saved against %s) is not where its last transaction %s ends in this server's binlog (the binlog was reset, or this is another server of the same replication history)",
			cp.File, cp.Offset, orUnknown(cp.Server), want)
	} else {
		note = fmt.Sprintf("this server has no binlog %s (the checkpoint was saved against %s: a failover?)", cp.File, orUnknown(cp.Server))
	}
	return Plan{GTIDSet: want.String(), Note: note + fmt.Sprintf(", but its history holds the checkpoint's GTID position %s: resuming after it by GTID", want)}, nil
}

// ahead refuses a checkpoint that is ahead of this server: the server
// logged transactions of the checkpoint's origin servers, but not up to
// the checkpoint's last ones. After a failover to a replica that had not
// received them when its primary died, the output holds changes the new
// primary never had. Neither resuming (the output would disagree with
// the server) nor starting over (the changes since would repeat) is
// right: the user must reconcile. nil when the checkpoint is not ahead,
// or when this server originated those GTIDs itself (its server_id is
// theirs): it may be another server with the same server_id, whose
// history is another one (see foreign).
func (r *resumer) ahead(ctx context.Context, want MariaPos, state string) error {
	id, err := r.srv.ServerID(ctx)
	if err != nil {
		return err
	}
	st := ParseMariaState(state)
	var missing []string
	for _, d := range want.domains() {
		g := want[d]
		have, ok := st[[2]uint32{g.Domain, g.Server}]
		if !ok || g.Server == id {
			return nil // no transaction of that origin here, or its own
		}
		if have < g.Seq {
			from := MariaGTID{Domain: g.Domain, Server: g.Server, Seq: have + 1}
			missing = append(missing, fmt.Sprintf("%s … %s", from, g))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &binlog.PreflightError{
		Problem: fmt.Sprintf("the checkpoint in %s (saved against %s) is ahead of this server (%s): it was saved after %s, but this server's GTID state is %q: the transactions %s were delivered, and this server never logged them (lost with a failed primary?)",
			r.path, orUnknown(r.cp.Server), r.addr, want, state, strings.Join(missing, ", ")),
		Hint: "what was delivered holds changes this server does not have: reconcile them first. Then, to follow this server, " + r.forget + " and start with --start-gtid at this server's GTID position (SELECT @@gtid_binlog_pos). If the server that has them comes back, resume there",
	}
}

// sameXid checks, where the checkpoint's GTIDs end at its position, that
// its last transaction is this server's: two servers with one server_id
// and domain (MariaDB's defaults) log the same GTIDs, at the same
// positions for the same statements, but their XIDs count every query the
// server ran.
//
// A replica logs its primary's transactions under their GTIDs with XIDs
// of its own, often at the same positions (a replica that followed its
// primary from the start writes the same binlog): where this server or
// the checkpoint's did not originate the last transaction (its server_id
// is not the GTID's), the XIDs cannot agree, and the GTIDs, which
// replication keeps, identify it.
func (r *resumer) sameXid(ctx context.Context) error {
	if r.cp.LastXid == 0 {
		return nil
	}
	xid, ok, err := r.srv.XidAt(ctx, r.cp.File, r.cp.Offset)
	if err != nil {
		return err
	}
	if !ok {
		return r.foreign(fmt.Sprintf("its last transaction %s ended with an XID event at %s:%d, and no XID event ends there on this server", r.cp.LastGTID, r.cp.File, r.cp.Offset))
	}
	if xid == r.cp.LastXid {
		return nil
	}
	if g, ok := ParseMariaGTID(r.cp.LastGTID); ok {
		id, err := r.srv.ServerID(ctx)
		if err != nil {
			return err
		}
		if id != g.Server || r.cp.ServerID != 0 && r.cp.ServerID != g.Server {
			return nil // replicated: see above
		}
	}
	return r.foreign(fmt.Sprintf("its last transaction %s (xid %d) is another one than this server's %s ending at %s:%d (xid %d): the servers log the same GTIDs (the same server_id and domain)",
		r.cp.LastGTID, r.cp.LastXid, r.cp.LastGTID, r.cp.File, r.cp.Offset, xid))
}

func (r *resumer) mysql(ctx context.Context) (Plan, error) {
	cp := r.cp
	if cp.ServerUUID != "" {
		uuid, err := r.srv.ServerUUID(ctx)
		if err != nil {
			return Plan{}, err
		}
		if uuid != "" && !strings.EqualFold(uuid, cp.ServerUUID) {
			return Plan{}, r.foreign(fmt.Sprintf("it was saved against the server with server_uuid %s, and this one's is %s", cp.ServerUUID, uuid))
		}
	}
	if strings.Contains(cp.LastGTID, ":") {
		state, err := r.srv.GTIDState(ctx)
		if err != nil {
			return Plan{}, err
		}
		ok, err := r.srv.GTIDSubset(ctx, cp.LastGTID, state)
		if err != nil {
			return Plan{}, err
		}
		if !ok {
			return Plan{}, r.foreign(fmt.Sprintf("this server has not executed its last transaction %s", cp.LastGTID))
		}
	}
	if r.has {
		return Plan{Pos: cp.Position()}, nil
	}
	return Plan{}, r.noFile()
}

// noFile diagnoses a checkpoint binlog the server does not have.
func (r *resumer) noFile() error {
	oldest := r.files[0]
	if sameSequence(r.cp.File, oldest) && r.cp.File < oldest {
		return r.purged("")
	}
	return r.foreign(fmt.Sprintf("this server never had %s: its binlogs are %s", r.cp.File, span(r.files)))
}

func (r *resumer) purged(why string) error {
	p := fmt.Sprintf("the checkpoint in %s resumes at %s:%d, but the server no longer has %s", r.path, r.cp.File, r.cp.Offset, r.cp.File)
	if r.has || !sameSequence(r.cp.File, r.files[0]) {
		p = fmt.Sprintf("the checkpoint in %s resumes at %s:%d, but the server no longer has the transactions after it", r.path, r.cp.File, r.cp.Offset)
	}
	if why != "" {
		p += ": " + why
	}
	return &binlog.PreflightError{Problem: p,
		Hint: "it was purged: the changes since the checkpoint are gone from the server. The checkpoint wins over --from, so first " + r.forget +
			"; then either rebuild the output from a fresh snapshot (--snapshot, or start with --from now after one), or run the same command with --from earliest to go on from the oldest binlog the server has, accepting the gap"}
}

func (r *resumer) foreign(why string) error {
	return &binlog.PreflightError{
		Problem: fmt.Sprintf("the checkpoint in %s (%s:%d, saved against %s) does not belong to this server (%s): %s",
			r.path, r.cp.File, r.cp.Offset, orUnknown(r.cp.Server), r.addr, why),
		Hint: "resume it on the server it came from (or, on MariaDB, a server that replicated its GTIDs). To follow this server instead, " + r.forget + " and start with --from now, --from earliest or --start-gtid",
	}
}

// sameSequence reports whether two binlog names share their base name
// (binlog.000041, binlog.000042): one server's numbered files, whose
// fixed-width suffixes sort like numbers.
func sameSequence(a, b string) bool {
	ab, as, ok1 := strings.Cut(a, ".")
	bb, bs, ok2 := strings.Cut(b, ".")
	return ok1 && ok2 && ab == bb && len(as) == len(bs)
}

func span(files []string) string {
	if len(files) == 1 {
		return files[0]
	}
	return files[0] + " … " + files[len(files)-1]
}

func atDesc(ok bool, at string) string {
	switch {
	case !ok:
		return "is not an event boundary"
	case at == "":
		return "comes before any transaction"
	}
	return "comes after GTID position " + at
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown server"
	}
	return s
}
