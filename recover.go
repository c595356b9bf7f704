package binlogcdc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/outfile"
	"github.com/binlogcdc/binlogcdc/pipeline"
	recovery "github.com/binlogcdc/binlogcdc/recover"
	mysqlsink "github.com/binlogcdc/binlogcdc/sink/mysql"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// RecoverOptions are the flags of 'binlogcdc recover'.
type RecoverOptions struct {
	Table         string
	List          bool
	Incarnation   int
	Before        string
	As            string
	StartPosition string
	StopPosition  string
	StartDatetime string // --start-datetime: skip transactions that started before it (UTC)
	StopDatetime  string // --stop-datetime: stop at the first transaction that started at or after it (UTC)
	Output        string

	To             string
	ToPasswordFile string
	ToSSLMode      string
	ToSSLCA        string
	OnConflict     string
	MemoryBudget   int
	CPUProfile     string // debugging aids (profile.go)
	MemProfile     string

	Remote RemoteOptions // --source mysql://… (remote.go)

	checked bool     // CheckFlags passed
	notes   []string // what CheckFlags chose (an archive's files), told by Recover
}

// AddFlags binds the flags to o.
func (o *RecoverOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Table, "table", "", "the table to recover: `db.table` (required)")
	f.BoolVar(&o.List, "list", false, "list the table's incarnations in the binlogs and exit")
	f.IntVar(&o.Incarnation, "incarnation", 0, "recover incarnation `N` of --list (default: the last one dropped or truncated)")
	f.StringVar(&o.Before, "before", "", "recover the last incarnation dropped or truncated before `TIME` (UTC: '2024-06-15 12:00:00' or RFC 3339)")
	f.StringVar(&o.As, "as", "", "create the table as `db.table` instead of its own name")
	f.StringVar(&o.StartPosition, "start-position", "", "read the binlogs from `FILE:POS`, a transaction boundary (e.g. the binlog position of a backup)")
	f.StringVar(&o.StopPosition, "stop-position", "", "stop before the first transaction that starts at or after `FILE:POS`")
	f.StringVar(&o.StartDatetime, "start-datetime", "", "skip transactions that started before `TIME` (UTC: '2024-06-15 12:00:00' or RFC 3339)")
	f.StringVar(&o.StopDatetime, "stop-datetime", "", "stop at the first transaction that started at or after `TIME` (UTC)")
	f.StringVarP(&o.Output, "output", "o", "", "write the SQL to `FILE` instead of stdout, whole or not at all (renamed into place when complete; on an error FILE keeps what it held)")
	f.StringVar(&o.To, "to", "", "restore into this server instead of printing SQL: `mysql://user@host:port/` (port 3306 when left out; changes are applied exactly once, conflicts are never silent)")
	f.StringVar(&o.ToPasswordFile, "to-password-file", "", "read the --to password from `FILE` (first line); else the DSN's password")
	f.StringVar(&o.ToSSLMode, "to-ssl-mode", "preferred", "TLS to the --to server: disabled, preferred, required, verify-ca or verify-identity")
	f.StringVar(&o.ToSSLCA, "to-ssl-ca", "", "CA certificate `FILE` (PEM) for --to-ssl-mode verify-ca / verify-identity")
	f.StringVar(&o.OnConflict, "on-conflict", "error", "with --to: an UPDATE/DELETE that matches no row or an INSERT that hits a duplicate key: `error` (stop), overwrite, or skip")
	f.IntVar(&o.MemoryBudget, "memory-budget", recovery.DefaultMemoryBudget>>20, "keep up to `MB` of the rebuilt table's rows in memory, then move them to a temporary on-disk store under $TMPDIR (0: on disk from the start); a transaction's changes wait for its commit in memory up to 8 MiB or this, if smaller, then in a spill file there")
	addProfileFlags(f, &o.CPUProfile, &o.MemProfile) // hidden; profile.go
	o.Remote.AddFlags(f, false)                      // remote.go: --source, --from
}

// splitTable parses db.table (either part backquoted: `d.b`.`x“y`).
func splitTable(flag, s string) (db, table string, err error) {
	db, table, err = pipeline.ParseTableName(s)
	if err != nil {
		return "", "", UsageError{Msg: fmt.Sprintf("--%s: %v (not %q)", flag, err, s), Hint: "--" + flag + " shop.orders, or --" + flag + " '`my.db`.`my.table`'"}
	}
	return db, table, nil
}

// Recover rebuilds a dropped or truncated table from the binlogs (files,
// as CheckFlags returned them; or o.Remote's server), as 'binlogcdc
// recover' does: SQL to stdout or o.Output, or applied to o.To.
func Recover(ctx context.Context, o RecoverOptions, files []string, stdout, stderr io.Writer) error {
	if !o.checked {
		var cleanup func()
		var err error
		files, cleanup, err = o.CheckFlags(nil, files)
		defer cleanup()
		if err != nil {
			return err
		}
	}
	for _, n := range o.notes {
		fmt.Fprintln(stderr, "binlogcdc: "+n)
	}
	return runRecover(ctx, o, files, stdout, stderr)
}

// archiveRange is the part of an archive recover reads (bad positions
// are reported by runRecover): from the start bounds on, to the end
// (recover's passes do not check they reached a stop bound, so no file
// after one is left out).
func (o *RecoverOptions) archiveRange() archive.ReadRange {
	var r archive.ReadRange
	if p, err := ParsePosition(o.StartPosition); err == nil {
		r.StartFile = p.File
	}
	r.StartTime, _ = ParseTime(o.StartDatetime)
	return r
}

func runRecover(ctx context.Context, o RecoverOptions, files []string, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...) }
	if o.Table == "" {
		return UsageError{Msg: "--table is required", Hint: "--table shop.orders"}
	}
	if o.MemoryBudget < 0 {
		return UsageError{Msg: fmt.Sprintf("--memory-budget is a number of MB, not %d", o.MemoryBudget), Hint: "--memory-budget 64"}
	}
	ro := recovery.Options{Files: files, MemoryBudget: max(1, int64(o.MemoryBudget)<<20)} // 0: on disk from the first row
	var err error
	if ro.DB, ro.Table, err = splitTable("table", o.Table); err != nil {
		return err
	}
	outDB, outName := ro.DB, ro.Table
	if o.As != "" {
		if outDB, outName, err = splitTable("as", o.As); err != nil {
			return err
		}
	}
	if o.StartPosition != "" {
		if ro.Start, err = ParsePosition(o.StartPosition); err != nil {
			return UsageError{Msg: "--start-position: " + err.Error(), Hint: "--start-position binlog.000042:4"}
		}
	}
	if o.StopPosition != "" {
		if ro.Stop, err = ParsePosition(o.StopPosition); err != nil {
			return UsageError{Msg: "--stop-position: " + err.Error(), Hint: "--stop-position binlog.000042:1234"}
		}
	}
	for _, b := range []struct {
		flag, v string
		t       *time.Time
	}{{"start-datetime", o.StartDatetime, &ro.StartTime}, {"stop-datetime", o.StopDatetime, &ro.StopTime}} {
		if b.v != "" {
			if *b.t, err = ParseTime(b.v); err != nil {
				return UsageError{Msg: "--" + b.flag + ": " + err.Error(), Hint: "--" + b.flag + " '2024-06-15 12:00:00' (UTC)"}
			}
		}
	}
	var beforeTime time.Time
	if o.Before != "" {
		if beforeTime, err = ParseTime(o.Before); err != nil {
			return UsageError{Msg: "--before: " + err.Error(), Hint: "--before '2024-06-15 12:00:00' (UTC)"}
		}
	}
	if o.Before != "" && o.Incarnation != 0 {
		return UsageError{Msg: "--before and --incarnation both pick an incarnation", Hint: "use one of them"}
	}
	policy, err := mysqlsink.ParsePolicy(o.OnConflict)
	if err != nil {
		return UsageError{Msg: "--on-conflict: " + err.Error(), Hint: "--on-conflict skip"}
	}

	// --source (remote.go): the server's binlogs up to their end now, read
	// once per pass over the network (nothing is spooled to disk).
	if err := o.Remote.Connect(ctx, logf); err != nil {
		return err
	}
	if o.Remote.IsRemote() {
		ro.Open = func(ctx context.Context, from change.Position) (binlog.Source, error) {
			return o.Remote.Open(ctx, nil, from)
		}
	} else {
		// The files are read more than once: a ROTATE that could not be
		// followed is told once.
		warn := onceWarnf(stderr)
		ro.Open = func(ctx context.Context, from change.Position) (binlog.Source, error) {
			if o.Remote.arch != nil {
				o.Remote.Warnf = warn
				return o.Remote.openArchived(from) // archiveread.go
			}
			src, err := binlog.OpenFiles(files, from)
			if err == nil {
				src.Warnf = warn
			}
			return src, err
		}
		if a := o.Remote.arch; a != nil {
			ro.OpenEnd, ro.SkipGTID = a.Open, a.Skip
		}
	}
	h, err := recovery.Load(ctx, ro)
	if err != nil {
		return err
	}
	if o.List {
		return h.WriteList(stdout)
	}
	var inc *recovery.Incarnation
	switch {
	case o.Incarnation != 0:
		inc, err = h.Number(o.Incarnation)
	case o.Before != "":
		inc, err = h.Before(beforeTime)
	default:
		inc, err = h.Last()
	}
	if err != nil {
		return err
	}
	logf("recovering incarnation #%d of %d of %s.%s: created %s, ended %s; %d inserts, %d updates, %d deletes",
		inc.N, len(h.Incarnations), ro.DB, ro.Table, inc.CreatedText(ro.DB, ro.Table), inc.EndedText(ro.DB, ro.Table), inc.Inserts, inc.Updates, inc.Deletes)
	if !inc.InBinlogs() {
		logf("%s.%s existed before the binlogs (they start at %s:%d): they hold only its changes since, not the rows it had then",
			ro.DB, ro.Table, h.First.File, h.First.Offset)
	}

	if o.As == "" {
		// Names match case-insensitively: rebuild it as the binlogs spell it.
		for _, n := range inc.Names() {
			if strings.EqualFold(n.DB, ro.DB) && strings.EqualFold(n.Table, ro.Table) {
				outDB, outName = n.DB, n.Table
			}
		}
	}
	if o.To != "" {
		return recoverTo(ctx, o, h, inc, outDB, outName, policy, stderr, logf)
	}

	s, err := h.Schema(inc, outDB, outName, h.MariaDB)
	if err != nil {
		return err
	}
	logf("schema: %s", s.From)
	for _, w := range s.Warnings {
		logf("warning: %s", w)
	}
	rows, res, err := h.Rebuild(ctx, inc, s)
	if err != nil {
		return err
	}
	defer rows.Close()
	out := stdout
	var file *outfile.File
	if o.Output != "" {
		// Whole or not at all: an error after the first INSERT leaves
		// the path as it was (internal/outfile).
		if file, err = outfile.Create(o.Output); err != nil {
			return err
		}
		defer file.Abort()
		out = file
	}
	header := []string{
		fmt.Sprintf("binlogcdc recover: %s.%s, incarnation #%d of %d, as %s", ro.DB, ro.Table, inc.N, len(h.Incarnations), tablemap.QuoteIdent(outDB)+"."+tablemap.QuoteIdent(outName)),
		"created: " + inc.CreatedText(ro.DB, ro.Table),
		"ended:   " + inc.EndedText(ro.DB, ro.Table),
		"schema:  " + s.From,
		fmt.Sprintf("rows:    %d (from %d inserts, %d updates, %d deletes)", res.Rows, res.Inserts, res.Updates, res.Deletes),
	}
	for _, w := range append(append([]string(nil), s.Warnings...), res.Notes...) {
		header = append(header, "warning: "+w)
	}
	if err := recovery.WriteSQL(out, header, s, outDB, rows); err != nil {
		return err
	}
	if file != nil {
		if err := file.Commit(); err != nil {
			return err
		}
	}
	logf("wrote %s.%s: %d rows (replayed %d inserts, %d updates, %d deletes)", outDB, outName, res.Rows, res.Inserts, res.Updates, res.Deletes)
	reportResult(logf, h, inc, res, false, false)
	return nil
}

// reportResult prints the notes and conflicts of a replay.
// applied: into a server; existed: into a table that was there (a backup).
func reportResult(logf func(string, ...any), h *recovery.History, inc *recovery.Incarnation, res *recovery.Result, applied, existed bool) {
	for _, n := range res.Notes {
		logf("warning: %s", n)
	}
	if res.Partial > 0 {
		logf("warning: %d rows lack some columns in the binlog (binlog_row_image MINIMAL or NOBLOB): their INSERTs leave those columns to the table's DEFAULT", res.Partial)
	}
	c := res.Conflicts
	if !inc.InBinlogs() {
		what := "were left out"
		if applied {
			what = "were applied to the rows the target has (from your backup, if you restored one)"
		}
		logf("%d updates and %d deletes refer to rows the binlogs never inserted (rows the table had before the binlogs); they %s", c.UpdateMissing, c.DeleteMissing, what)
		if c.InsertExisting > 0 {
			logf("%d inserts hit a key the binlogs had already inserted", c.InsertExisting)
		}
		if existed {
			return
		}
		logf("to restore the table completely: restore your last backup, then run 'binlogcdc recover --table %s.%s --to mysql://user@that-server/ --start-position FILE:POS', with the backup's binlog position (see docs/recover.md)", h.DB, h.Table)
		return
	}
	if c.Total() > 0 {
		logf("conflicts: %d updates and %d deletes of rows never inserted in the binlogs, %d inserts of a key that already held a row, %d changes whose row could not be identified (no primary key, partial image)",
			c.UpdateMissing, c.DeleteMissing, c.InsertExisting, c.Unidentifiable)
		logf("the binlogs given do not hold the table's whole history (a missing file?); the later change won each conflict")
	}
}

// recoverTo restores into a server through sink/mysql.
func recoverTo(ctx context.Context, o RecoverOptions, h *recovery.History, inc *recovery.Incarnation, db, name string,
	policy mysqlsink.Policy, stderr io.Writer, logf func(string, ...any)) error {
	ropts := ReplayOptions{To: o.To, ToPasswordFile: o.ToPasswordFile, ToSSLMode: o.ToSSLMode, ToSSLCA: o.ToSSLCA}
	cfg, err := ropts.TargetConfig()
	if err != nil {
		return err
	}
	conn, err := client.ConnectWithContext(ctx, cfg.Addr, cfg.User, cfg.Password, "", 10*time.Second, func(c *client.Conn) error {
		if cfg.TLS != nil {
			c.SetTLSConfig(cfg.TLS)
		}
		return c.SetCollation("utf8mb4_general_ci")
	})
	if err != nil && cfg.TLS != nil && cfg.TLSPreferred && strings.Contains(err.Error(), "TLS") {
		conn, err = client.ConnectWithContext(ctx, cfg.Addr, cfg.User, cfg.Password, "", 10*time.Second)
	}
	if err != nil {
		return fmt.Errorf("target %s: %w", cfg.Addr, err)
	}
	defer conn.Close()
	for _, q := range sqltext.SessionSetup {
		if _, err := conn.Execute(q); err != nil {
			return fmt.Errorf("target: %s: %w", q, err)
		}
	}
	mariadb := strings.Contains(strings.ToLower(conn.GetServerVersion()), "mariadb")
	s, err := h.Schema(inc, db, name, mariadb)
	if err != nil {
		return err
	}
	logf("schema: %s", s.From)
	for _, w := range s.Warnings {
		logf("warning: %s", w)
	}

	replica := "recover " + db + "." + name
	if len(replica) > 191 {
		replica = replica[:191]
	}
	who, err := mysqlsink.Describe(ctx, cfg)
	if err != nil {
		return err
	}
	logf("target: %s, as replica %q", who, replica)
	cp, resuming, err := mysqlsink.ReadCheckpoint(ctx, cfg, replica)
	if err != nil {
		return err
	}
	exists, err := tableExists(conn, db, name)
	if err != nil {
		return err
	}
	target := tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
	switch {
	case resuming:
		logf("resuming an interrupted recover at %s:%d (the target's checkpoint %q)", cp.Next.File, cp.Next.Offset, replica)
	case exists && inc.InBinlogs():
		return fmt.Errorf("%s already exists on the target: recovering into it would mix the recovered rows with its own; "+
			"drop it, or recover under another name with --as db.other_name", target)
	case exists:
		logf("applying the binlogs' changes to the existing %s (restored from a backup taken at the --start-position, presumably)", target)
	default:
		if !inc.InBinlogs() {
			logf("warning: %s does not exist on the target: only the rows the binlogs inserted can be recovered "+
				"(the updates and deletes of its older rows conflict: see --on-conflict; restore a backup first for the whole table)", target)
		}
		if _, err := conn.Execute("CREATE DATABASE IF NOT EXISTS " + tablemap.QuoteIdent(db)); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		if _, err := conn.Execute(s.CreateSQL); err != nil {
			return fmt.Errorf("target: creating %s: %w\n%s", target, err, s.CreateSQL)
		}
		logf("created %s", target)
	}

	sk, err := mysqlsink.Open(ctx, cfg, mysqlsink.Options{
		Replica: replica, OnConflict: policy, Logf: logf,
		CreateTable: func(*tablemap.Table, bool) (string, error) { return s.CreateSQL, nil },
	})
	if err != nil {
		return err
	}
	var from change.Position
	if c, ok := sk.Checkpoint(); ok {
		from = c.Next
	}
	res, err := h.Apply(ctx, inc, s, sk, from)
	st := sk.Stats()
	st.Print(stderr)
	if err != nil {
		return err
	}
	// Done: forget the checkpoint, so that running recover again starts
	// afresh (and reports conflicts) instead of doing nothing.
	if _, err := conn.Execute("DELETE FROM `binlogcdc`.`checkpoint` WHERE replica = ?", replica); err != nil {
		logf("warning: removing the checkpoint %q: %v", replica, err)
	}
	logf("restored %s: replayed %d inserts, %d updates, %d deletes", target, res.Inserts, res.Updates, res.Deletes)
	if from.File != "" {
		logf("(counts since the resume point)")
	}
	reportResult(logf, h, inc, res, true, exists)
	return nil
}

func tableExists(c *client.Conn, db, name string) (bool, error) {
	r, err := c.Execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, name)
	if err != nil {
		return false, fmt.Errorf("target: information_schema: %w", err)
	}
	defer r.Close()
	n, err := r.GetInt(0, 0)
	if err != nil {
		return false, errors.New("target: information_schema: no result")
	}
	return n > 0, nil
}

// CheckFlags checks the options as 'binlogcdc recover' does after
// parsing its flags (f: nil when set in code) and the files to read
// (args), before anything is read, connected to or written. It returns
// the files in the order to read them, and a cleanup to call when done.
func (o *RecoverOptions) CheckFlags(f *pflag.FlagSet, args []string) (files []string, cleanup func(), err error) {
	cleanup = func() {}
	if err := o.Remote.Check(f, args, o.StartPosition != ""); err != nil { // remote.go
		return nil, cleanup, err
	}
	if len(args) == 0 && o.Remote.Conn.Source == "" {
		return nil, cleanup, UsageError{Msg: "no binlog files given", Hint: "binlogcdc recover --table shop.orders /var/lib/mysql/binlog.index (or --source mysql://user@host:port --from earliest)"}
	}
	if o.To == "" {
		for _, n := range []string{"to-password-file", "to-ssl-mode", "to-ssl-ca", "on-conflict"} {
			if flagChanged(f, n) {
				return nil, cleanup, UsageError{Msg: "--" + n + " needs --to", Hint: "--to mysql://user@host:3306/"}
			}
		}
	} else if flagChanged(f, "output") {
		return nil, cleanup, UsageError{Msg: "--to restores into a server; there is nothing to write to --output", Hint: "drop --output"}
	}
	if o.To != "" { // the DSN parses before the binlogs are read
		ropts := ReplayOptions{To: o.To, ToPasswordFile: o.ToPasswordFile, ToSSLMode: o.ToSSLMode, ToSSLCA: o.ToSSLCA}
		if _, err := ropts.TargetConfig(); err != nil {
			return nil, cleanup, err
		}
	}
	outputs := map[string]string{"-o": o.Output, "--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile}
	if err := CheckReadFiles(ConnFiles(o.Remote.Conn), outputs); err != nil {
		return nil, cleanup, err
	}
	if o.Remote.Conn.Source == "" {
		if dir := archiveDir(args); dir != "" { // archiveread.go: an archive DIR
			plan, err := planArchive(dir, o.archiveRange(), &o.Remote, outputs, func(format string, a ...any) {
				o.notes = append(o.notes, fmt.Sprintf(format, a...))
			})
			if err != nil {
				return nil, cleanup, err
			}
			// Read as the plan says (openArchived), each file in place.
			o.checked = true
			return plan.Files, cleanup, nil
		}
		files, cleanup, err = CheckInputs(args, outputs, true)
		if err != nil {
			return nil, cleanup, err
		}
	}
	o.checked = true
	return files, cleanup, nil
}

// DefaultRecoverOptions returns the options 'binlogcdc recover' has with
// no flag given. Start from them: a zero RecoverOptions lacks them.
func DefaultRecoverOptions() RecoverOptions {
	var o RecoverOptions
	o.AddFlags(pflag.NewFlagSet("recover", pflag.ContinueOnError))
	return o
}
