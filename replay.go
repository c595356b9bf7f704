package binlogcdc

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/sink"
	mysqlsink "github.com/binlogcdc/binlogcdc/sink/mysql"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// ReplayOptions are the flags, shared by read and stream, that apply the
// changes to a server (--to) or write them as SQL (--format sql,
// --flashback) instead of printing JSON.
type ReplayOptions struct {
	To             string            // --to
	Envelope       EnvelopeOptions   // --format debezium|maxwell|canal flags (formats.go)
	ToPasswordFile string            // --to-password-file
	ToSSLMode      string            // --to-ssl-mode
	ToSSLCA        string            // --to-ssl-ca
	ReplicaName    string            // --replica-name
	OnConflict     string            // --on-conflict
	IgnoreMissing  bool              // --ignore-missing-columns
	KeepDropped    bool              // --keep-dropped
	CreateTables   bool              // --create-tables
	GroupRows      int               // --group-rows
	GroupTime      time.Duration     // --group-time
	Parallel       int               // --parallel
	Format         string            // --format
	Flashback      bool              // --flashback
	FireTriggers   bool              // --fire-triggers
	Accounts       bool              // --replay-accounts
	BulkLoad       bool              // --bulk-load
	LoadData       bool              // --load-data
	OmitColumns    []string          // --omit-columns
	Live           LiveVerifyOptions // --verify-every, --verify-on-diff (verifyevery.go)

	ddl    string          // --ddl: "", "apply" or "skip" (set through ddlFlag)
	omit   map[string]bool // --omit-columns, as sqltext.Options.Omit wants it
	policy mysqlsink.Policy
}

// AddFlags binds the replay flags.
func (o *ReplayOptions) AddFlags(f *pflag.FlagSet, stream bool) {
	f.StringVar(&o.To, "to", "", "apply the changes to a MySQL/MariaDB server exactly once (mysql://user@host:port/, port 3306 when left out; see --replica-name), or publish them to Kafka (kafka://broker1:9092,broker2:9092, see --kafka-*): `URL`")
	f.StringVar(&o.ToPasswordFile, "to-password-file", "", "read the --to password from `FILE` (first line); else the DSN's password")
	f.StringVar(&o.ToSSLMode, "to-ssl-mode", "preferred", "TLS to the --to server: disabled, preferred, required, verify-ca or verify-identity")
	f.StringVar(&o.ToSSLCA, "to-ssl-ca", "", "CA certificate `FILE` (PEM) for --to-ssl-mode verify-ca / verify-identity")
	f.StringVar(&o.ReplicaName, "replica-name", "default", "the `NAME` of this replay's row in the target's binlogcdc.checkpoint table")
	f.StringVar(&o.OnConflict, "on-conflict", "error", "an UPDATE/DELETE that matches no row or an INSERT that hits a duplicate key: `error` (stop), overwrite, or skip")
	f.BoolVar(&o.IgnoreMissing, "ignore-missing-columns", false, "leave out columns the target table lacks (default: an error naming the column)")
	f.BoolVar(&o.KeepDropped, "keep-dropped", false, "do not replay DROP TABLE, DROP DATABASE and TRUNCATE: the backup keeps what the source dropped")
	f.BoolVar(&o.CreateTables, "create-tables", false, "create a table missing on the target from its binlog metadata")
	f.IntVar(&o.GroupRows, "group-rows", mysqlsink.DefaultGroupRows, "apply small source transactions together, up to `N` rows per target transaction (one is never split)")
	f.DurationVar(&o.GroupTime, "group-time", time.Second, "… and committed at least this often")
	f.BoolVar(&o.BulkLoad, "bulk-load", true, "--to mysql://: send runs of inserts into one table as prepared INSERTs of up to 1024 rows, their values bound as they are read, runs of whole-row updates as INSERT ... ON DUPLICATE KEY UPDATE, and runs of deletes as DELETE ... WHERE key IN (...) (all checked exactly as INSERTs, UPDATEs and DELETEs are); false: INSERTs of up to 128 rows, one UPDATE or DELETE each")
	f.BoolVar(&o.LoadData, "load-data", false, "--to mysql://: send runs of 128 or more inserts into one table as LOAD DATA LOCAL INFILE streamed from memory instead, when the target allows it (MariaDB 10.11 spends more CPU on it than on the INSERTs; checked as exactly)")
	if !stream {
		f.IntVar(&o.Parallel, "parallel", 1, "--to mysql://: apply independent transactions on `N` target connections (1: one, in commit order; see docs/replay.md)")
	}
	f.BoolVar(&o.FireTriggers, "fire-triggers", false, "--to, --format sql: also write to tables that have triggers on the target (they fire again on every replayed row, on top of what the source's triggers wrote to the binlog), and replay CREATE/DROP TRIGGER; default: such a table is an error, trigger DDL is left out")
	f.BoolVar(&o.Accounts, "replay-accounts", false, "--to, --format sql: also apply account management (CREATE/ALTER/DROP USER, GRANT, REVOKE, SET PASSWORD, roles) as logged, passwords included; default: left out, secrets redacted everywhere")
	f.StringArrayVar(&o.OmitColumns, "omit-columns", nil, "--format sql: leave these columns out of INSERT and UPDATE SET (the target's generated columns, which refuse values; --to finds them itself): `db.table.column[,...]`; repeatable")
	f.StringVar(&o.Format, "format", "json", "output `format`: json; debezium, maxwell or canal (those tools' JSON, also for --to kafka://); or sql (the statements that apply the changes, for the mysql client)")
	o.Envelope.AddFlags(f) // formats.go
	if !stream {
		f.BoolVar(&o.Flashback, "flashback", false, "write the SQL that undoes the selected changes, newest first (needs binlog_row_image=FULL)")
	} else {
		o.Live.AddFlags(f) // verifyevery.go
	}
}

// ddlFlag is --ddl[=apply|skip]: a bare --ddl (or true/false, as when it
// was a bool flag) still works. JSON output leaves DDL out by default,
// replay (--to, --format sql) applies it by default.
type ddlFlag struct {
	on   *bool
	mode *string
}

func (d ddlFlag) String() string { return *d.mode }
func (d ddlFlag) Type() string   { return "apply|skip" }
func (d ddlFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "apply", "true", "1", "yes", "on":
		*d.mode, *d.on = "apply", true
	case "skip", "false", "0", "no", "off":
		*d.mode, *d.on = "skip", false
	default:
		return fmt.Errorf("want apply or skip, not %q", v)
	}
	return nil
}

// addDDLFlag defines --ddl[=apply|skip], setting *on and o.ddl.
func (o *ReplayOptions) addDDLFlag(f *pflag.FlagSet, on *bool) {
	f.Var(ddlFlag{on: on, mode: &o.ddl}, "ddl", "schema changes: JSON: also emit DDL records (--ddl); --to/--format sql: apply (default) or skip them (--ddl=skip)")
	f.Lookup("ddl").NoOptDefVal = "apply"
}

// enabled reports whether the output is replay rather than JSON.
func (o *ReplayOptions) enabled() bool {
	return o.To != "" || o.Format == "sql" || o.Flashback
}

// check validates the flags after parsing and sets replay's DDL default.
func (o *ReplayOptions) check(f *pflag.FlagSet, ddlOn *bool) error {
	bad := func(msg, hint string) error { return UsageError{Msg: msg, Hint: hint} }
	switch o.Format {
	case "json", "sql", "debezium", "maxwell", "canal":
	default:
		return bad("--format: want json, debezium, maxwell, canal or sql, not "+o.Format, "--format sql")
	}
	if err := o.Envelope.check(f, o.Format); err != nil { // formats.go
		return err
	}
	if o.Flashback {
		if flagChanged(f, "format") && o.Format != "sql" {
			return bad("--flashback writes SQL", "drop --format json")
		}
		if o.To != "" {
			return bad("--flashback writes SQL; it does not apply it", "binlogcdc read --flashback FILE... | mysql")
		}
		o.Format = "sql"
	}
	if o.To != "" && flagChanged(f, "format") {
		return bad("--to applies the changes; --format chooses what to print instead", "use one of them")
	}
	if o.To != "" && flagChanged(f, "checkpoint") {
		return bad("--to keeps its checkpoint in the target's binlogcdc.checkpoint table; --checkpoint FILE is for JSON output", "drop --checkpoint")
	}
	if o.To != "" && flagChanged(f, "output") {
		return bad("--to applies the changes; there is nothing to write to --output", "drop --output")
	}
	if o.To == "" {
		for _, n := range []string{"to-password-file", "to-ssl-mode", "to-ssl-ca", "replica-name", "on-conflict", "ignore-missing-columns", "create-tables", "group-rows", "group-time", "bulk-load", "load-data"} {
			if flagChanged(f, n) {
				return bad("--"+n+" needs --to", "--to mysql://user@backup-host:3306/")
			}
		}
	}
	if (o.Format != "sql" || o.Flashback) && flagChanged(f, "omit-columns") {
		return bad("--omit-columns is for --format sql (--to learns the target's generated columns itself)", "--format sql")
	}
	if !o.enabled() && flagChanged(f, "fire-triggers") {
		return bad("--fire-triggers needs --to or --format sql", "--to mysql://user@backup-host:3306/")
	}
	if (!o.enabled() || o.Flashback) && flagChanged(f, "replay-accounts") {
		return bad("--replay-accounts needs --to or --format sql (JSON and Kafka never carry passwords)", "--to mysql://user@backup-host:3306/")
	}
	if !o.enabled() && flagChanged(f, "keep-dropped") {
		return bad("--keep-dropped needs --to or --format sql", "--to mysql://user@backup-host:3306/")
	}
	for _, list := range o.OmitColumns {
		names, err := pipeline.ParseColumnNames(list)
		if err != nil {
			return bad("--omit-columns "+err.Error(), "--omit-columns shop.orders.total_gen,'`my.db`.`t`.c'")
		}
		for _, n := range names {
			if o.omit == nil {
				o.omit = map[string]bool{}
			}
			o.omit[strings.ToLower(n[0]+"."+n[1]+"."+n[2])] = true
		}
	}
	var err error
	if o.policy, err = mysqlsink.ParsePolicy(o.OnConflict); err != nil {
		return bad("--on-conflict: "+err.Error(), "--on-conflict skip")
	}
	if flagChanged(f, "parallel") && (o.Parallel < 1 || o.Parallel > 64) {
		return bad(fmt.Sprintf("--parallel %d: want 1 to 64 target connections", o.Parallel), "--parallel 4")
	}
	if o.Parallel > 1 && !strings.HasPrefix(o.To, "mysql://") {
		return bad("--parallel needs --to mysql:// (it applies on several target connections)", "--to mysql://user@backup-host:3306/ --parallel 4")
	}
	if err := o.Live.check(f, o.To); err != nil { // verifyevery.go
		return err
	}
	if o.enabled() && !flagChanged(f, "ddl") {
		*ddlOn, o.ddl = true, "apply" // replay applies DDL unless --ddl=skip
	}
	return nil
}

// TargetConfig parses --to: the replay target server.
func (o *ReplayOptions) TargetConfig() (mysqlsink.Config, error) {
	var cfg mysqlsink.Config
	hint := "--to mysql://user@backup-host:3306/"
	u, err := url.Parse(o.To)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		return cfg, UsageError{Msg: "--to: not a DSN of the form mysql://user@host:port/", Hint: hint}
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return cfg, UsageError{Msg: "--to: the DSN names a database (" + p + "); replay uses the source's database names", Hint: hint}
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return cfg, UsageError{Msg: "--to: bad port " + port, Hint: hint}
	}
	cfg.Addr = u.Hostname() + ":" + port
	if strings.Contains(u.Hostname(), ":") {
		cfg.Addr = "[" + u.Hostname() + "]:" + port
	}
	if cfg.User = u.User.Username(); cfg.User == "" {
		return cfg, UsageError{Msg: "--to: no user", Hint: hint}
	}
	if o.ToPasswordFile != "" {
		data, err := os.ReadFile(o.ToPasswordFile)
		if err != nil {
			return cfg, fmt.Errorf("--to-password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		cfg.Password = strings.TrimRight(line, "\r")
	} else if p, ok := u.User.Password(); ok {
		cfg.Password = p
	}
	co := ConnOptions{SSLMode: o.ToSSLMode, SSLCA: o.ToSSLCA}
	if cfg.TLS, err = co.tlsConfig(u.Hostname()); err != nil {
		return cfg, err
	}
	cfg.TLSPreferred = strings.EqualFold(o.ToSSLMode, "preferred")
	return cfg, nil
}

// replayRun is one replay: the sink and what to say at the end.
type replayRun struct {
	o       *ReplayOptions
	logf    func(format string, args ...any)
	target  *mysqlsink.Sink // serial apply (nil with --parallel > 1)
	applier replayTarget    // target, or the parallel one
	text    *sqltext.Sink
	flash   *sqltext.Flashback
	resume  change.Position // the target's checkpoint, if any
	xaFrom  change.Position // where its held XA transactions start (Checkpoint.XAFrom)
	gtid    string          // the GTID of its last transaction
	started time.Time
}

// replayTarget is a --to mysql:// sink: *mysqlsink.Sink or, with
// --parallel, *mysqlsink.Parallel.
type replayTarget interface {
	sink.Sink
	Checkpoint() (mysqlsink.Checkpoint, bool)
	SaveStart(start change.Position, gtidPos string) error
	Advance(change.Position)
	Stats() mysqlsink.Stats
}

// openReplay connects to the --to target (reading its checkpoint); it
// returns nil when the output is JSON.
func (o *ReplayOptions) openReplay(ctx context.Context, logf func(string, ...any)) (*replayRun, error) {
	if !o.enabled() {
		return nil, nil
	}
	r := &replayRun{o: o, logf: logf, started: time.Now()}
	if o.To == "" {
		return r, nil
	}
	cfg, err := o.TargetConfig()
	if err != nil {
		return nil, err
	}
	who, err := mysqlsink.Describe(ctx, cfg)
	if err != nil {
		return nil, err
	}
	logf("target: %s, as replica %q", who, o.ReplicaName)
	opts := mysqlsink.Options{
		Replica: o.ReplicaName, OnConflict: o.policy, IgnoreMissingColumns: o.IgnoreMissing,
		KeepDropped: o.KeepDropped, GroupRows: o.GroupRows, GroupTime: o.GroupTime, Logf: logf,
		FireTriggers: o.FireTriggers, ForeignKeys: true, Accounts: o.Accounts, NoBulkLoad: !o.BulkLoad, LoadData: o.LoadData,
	}
	if o.CreateTables {
		opts.CreateTable = createTableSQL
	}
	if o.Parallel > 1 {
		if r.applier, err = mysqlsink.OpenParallel(ctx, cfg, opts, o.Parallel); err != nil {
			return nil, err
		}
	} else {
		if r.target, err = mysqlsink.Open(ctx, cfg, opts); err != nil {
			return nil, err
		}
		if err := r.target.DropWorkerRows(); err != nil { // left by --parallel
			r.target.Close(ctx)
			return nil, err
		}
		r.applier = r.target
	}
	if cp, ok := r.applier.Checkpoint(); ok {
		r.resume, r.gtid, r.xaFrom = cp.Next, cp.GTID, cp.XAFrom
	}
	return r, nil
}

// sink returns the sink writing to out (SQL) or applying to the target.
func (r *replayRun) sink(out io.Writer, stream bool) (sink.Sink, error) {
	opts := sqltext.Options{KeepDropped: r.o.KeepDropped, FlushEachCommit: stream, Logf: r.logf,
		FireTriggers: r.o.FireTriggers, ForeignKeys: true, Accounts: r.o.Accounts}
	opts.Omit = r.o.omit
	switch {
	case r.applier != nil:
		return r.applier, nil
	case r.o.Flashback:
		var err error
		r.flash, err = sqltext.NewFlashback(out, "", opts)
		return r.flash, err
	}
	r.text = sqltext.New(out, opts)
	return r.text, nil
}

// summary prints what the run did; failed: it stopped with an error,
// and SQL it formatted may not have reached the output.
func (r *replayRun) summary(w io.Writer, failed bool) {
	d := time.Since(r.started)
	wrote := "wrote"
	if failed {
		wrote = "stopped with an error; it had formatted"
	}
	switch {
	case r.applier != nil:
		st := r.applier.Stats()
		st.Print(w)
	case r.text != nil:
		fmt.Fprintf(w, "binlogcdc: %s SQL for %d rows of %d transactions in %v (%.0f rows/s)\n",
			wrote, r.text.Rows, r.text.Transactions, d.Round(time.Millisecond), float64(r.text.Rows)/d.Seconds())
	case r.flash != nil:
		fmt.Fprintf(w, "binlogcdc: %s flashback SQL undoing %d rows of %d transactions\n", wrote, r.flash.Rows, r.flash.Transactions)
	}
}

// streamResume returns the target's checkpoint, for stream to check
// against the source and resume from (nil: none), and what to call it.
func (r *replayRun) streamResume() (*checkpoint.Checkpoint, string) {
	if r == nil || r.resume.File == "" {
		return nil, ""
	}
	cp := &checkpoint.Checkpoint{File: r.resume.File, Offset: r.resume.Offset, LastGTID: r.gtid}
	if strings.Contains(r.gtid, ",") { // a snapshot's GTID position, one GTID per domain
		cp.LastGTID, cp.GTIDSet = "", r.gtid
	}
	return cp,
		fmt.Sprintf("the target's binlogcdc.checkpoint (replica %q)", r.o.ReplicaName)
}

// forget says how to remove the target's checkpoint, for hints that
// start over.
func (r *replayRun) forget() string {
	return fmt.Sprintf("delete it on the target (DELETE FROM binlogcdc.checkpoint WHERE replica = '%s'), or use another --replica-name", strings.ReplaceAll(r.o.ReplicaName, "'", "''"))
}

// xaResume moves a resume at the target's checkpoint (start, or by gtid)
// back to where the prepared XA transactions held at the checkpoint start
// (Checkpoint.XAFrom): reading there collects them again, and applyFrom
// (the checkpoint) is where applying starts again (pipeline.Options).
func (r *replayRun) xaResume(start change.Position, gtid string) (from, applyFrom change.Position, err error) {
	if r == nil || r.xaFrom.File == "" {
		return start, change.Position{}, nil
	}
	if gtid != "" || start != r.resume {
		return start, applyFrom, fmt.Errorf("the target's checkpoint (replica %q) is at %s:%d with prepared XA transactions held since %s:%d, "+
			"but this server resumes elsewhere (by GTID, or its binlog was purged): their changes, logged at their XA PREPARE, would be lost at their XA COMMIT; "+
			"resume against the server the checkpoint was saved on, with its binlogs from %s", r.o.ReplicaName, r.resume.File, r.resume.Offset, r.xaFrom.File, r.xaFrom.Offset, r.xaFrom.File)
	}
	r.logf("reading from %s:%d to collect the prepared XA transactions held at the checkpoint; applying from %s:%d on", r.xaFrom.File, r.xaFrom.Offset, r.resume.File, r.resume.Offset)
	return r.xaFrom, r.resume, nil
}

// streamSink returns stream's sink. A target without a checkpoint gets
// start saved as one first, with gtidPos, the source's GTID position
// there: --from now is resolved once, and a stop, a crash or a refused
// first transaction before the first commit must not resolve it again
// later, nor leave a checkpoint that a restart cannot tell belongs to
// the source. The target
// applies full groups in the background, as read --to does, so that a
// catch-up decodes the next group while the target applies the last;
// failed is told of a failure that no call returns (a group failing once
// the source has gone quiet), to end the stream.
func (r *replayRun) streamSink(out io.Writer, start change.Position, gtidPos string, failed func(error)) (sink.Sink, error) {
	if r.applier != nil && r.resume.File == "" && start.File != "" {
		if err := r.applier.SaveStart(start, gtidPos); err != nil {
			return nil, err
		}
	}
	if r.target != nil {
		r.target.OnFailure(failed)
		r.target.Background()
	}
	return r.sink(out, true)
}

// onCommit wraps stream's OnCommit: the positions the pipeline reports
// also advance the target's checkpoint (a ROTATE between transactions).
func (r *replayRun) onCommit(next func(change.TxEnd) error) func(change.TxEnd) error {
	if r == nil || r.applier == nil {
		return next
	}
	return func(tx change.TxEnd) error {
		r.applier.Advance(tx.Next)
		return next(tx)
	}
}

// historyTarget is what keeps the schema history on the --to target
// (nil: none; schemahistory.go).
func (r *replayRun) historyTarget() historyTarget {
	if r == nil || r.applier == nil {
		return nil
	}
	h, _ := r.applier.(historyTarget)
	return h
}

// targetSink is the --to target (nil: none), for --metrics-addr.
func (r *replayRun) targetSink() *mysqlsink.Sink {
	if r == nil {
		return nil
	}
	return r.target
}

// createTableSQL is --create-tables: the table from its TABLE_MAP,
// collations named for the target's flavor (assumed the source's).
func createTableSQL(t *tablemap.Table, mariadb bool) (string, error) {
	return tablemap.CreateTable(t, tablemap.CreateOptions{MariaDB: mariadb})
}

// resumeFiles decides where read starts given the target's checkpoint:
// at it, when its file is among the files; nowhere (done) when it is past
// them all. A checkpoint before the files would leave a gap: an error.
func resumeFiles(files []string, cp change.Position) (start change.Position, done bool, err error) {
	if len(files) == 1 && strings.HasSuffix(files[0], ".index") {
		if files, err = binlog.ReadIndex(files[0]); err != nil {
			return start, false, err
		}
	}
	later := true
	for _, f := range files {
		b := filepath.Base(f)
		if f == "-" {
			b = binlog.StdinName // read as it arrives: positions name it so
		}
		if b == cp.File {
			return cp, false, nil
		}
		if cp.File < b {
			later = false
		}
	}
	if later {
		return start, true, nil
	}
	return start, false, fmt.Errorf("the target's checkpoint is at %s:%d, which is not among the files given; give the binlogs from %s on (or another --replica-name)", cp.File, cp.Offset, cp.File)
}

// runReadReplay is 'binlogcdc read' with --to, --format sql or --flashback.
func runReadReplay(ctx context.Context, o ReadOptions, files []string, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...) }
	popts, start, err := o.pipelineOptions()
	if err != nil {
		return err
	}
	o.Remote.archiveOptions(&popts) // archiveread.go
	// --stop-before: searched from the start given, before the target is
	// touched (archiveread.go); a target already past it is refused below.
	if err := o.findStop(ctx, files, start, &popts, logf); err != nil {
		return err
	}
	r, err := o.Replay.openReplay(ctx, logf)
	if err != nil {
		return err
	}
	if err := o.Find.checkResume(r); err != nil { // archiveread.go
		r.applier.Close(ctx)
		return err
	}
	if r.applier != nil && r.resume.File != "" {
		from := r.resume
		if r.xaFrom.File != "" {
			// Collect the held XA transactions again; apply after resume.
			from, popts.ApplyFrom = r.xaFrom, r.resume
		}
		s, done, err := o.Remote.resume(files, from) // remote.go: resumeFiles, or --source
		if err != nil {
			r.applier.Close(ctx)
			return err
		}
		if done {
			logf("the target (replica %q) is at %s:%d, past the binlogs to read: nothing to apply", o.Replay.ReplicaName, r.resume.File, r.resume.Offset)
			return r.applier.Close(ctx)
		}
		if o.StartPosition != "" {
			logf("--start-position ignored: the target's checkpoint wins")
		}
		start = s
		logf("resuming at %s:%d (the target's checkpoint for replica %q)", r.resume.File, r.resume.Offset, o.Replay.ReplicaName)
		if popts.ApplyFrom.File != "" {
			logf("reading from %s:%d to collect the prepared XA transactions held at the checkpoint", start.File, start.Offset)
		}
	}
	if h := r.historyTarget(); h != nil {
		// The schema history, kept on the target with the checkpoint as
		// stream keeps it (schemahistory.go): a restart goes on from the
		// tables as the checkpoint left them.
		if popts.Schema == nil {
			popts.Schema = schemahist.New(false) // the flavor follows the binlog
		}
		if popts.BeforeCommit, err = targetHistory(&popts.Schema, h); err != nil {
			r.applier.Close(ctx)
			return err
		}
	}
	out, closeOut := stdout, func() error { return nil }
	if o.Output != "" {
		f, err := os.Create(o.Output)
		if err != nil {
			return err
		}
		defer f.Close() // a no-op after closeOut
		out = f
		closeOut = f.Close
	}
	sk, err := r.sink(out, false)
	if err != nil {
		return err
	}
	if r.target != nil {
		// Decode the next group while the target applies the last one.
		r.target.Background()
	}
	src, err := o.Remote.Open(ctx, files, start) // remote.go: the files, or --source
	if err != nil {
		sk.Close(ctx)
		return err
	}
	defer src.Close()
	popts.Logf, popts.Accounts, popts.Replaying = warnf(stderr), o.Replay.Accounts, !o.Replay.Flashback
	popts.Metrics, popts.OnCommit = o.mx, metricsOnCommit(o.mx, popts.OnCommit, nil, r.targetSink()) // metrics.go
	runErr := o.runPipeline(ctx, pipeline.New(src, sk, popts), popts.Filter, stderr)
	if err := sk.Close(context.WithoutCancel(ctx)); err != nil && runErr == nil {
		runErr = err
	}
	// -o: a write the kernel reports only at close is an error too.
	if err := closeOut(); err != nil && runErr == nil {
		runErr = fmt.Errorf("-o %s: %w", o.Output, err)
	}
	r.summary(stderr, runErr != nil)
	return runErr
}
