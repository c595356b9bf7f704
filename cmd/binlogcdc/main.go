// Command binlogcdc reads MySQL and MariaDB binary logs and turns every row
// change into a named, typed record, using only what the binlog carries.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc"
	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Exit codes, documented in the top-level help.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitMetadata    = 3
	exitCorrupt     = 4
	exitSetup       = 5
	exitInterrupted = 130
)

const topUsage = `binlogcdc reads MySQL and MariaDB binary logs and turns every row change
into a named, typed JSON record, with the columns as they were when the
change was made: names come from the binlog's own TABLE_MAP metadata
(binlog_row_metadata=FULL), never from the current schema.

Usage:
  binlogcdc <command> [flags] [args]

Commands:
  read      decode binlog files into JSON lines
  stream    follow a live server as a replica, with checkpoints
  archive   keep a server's binlog files, byte for byte, as they are written
  snapshot  copy tables as of one binlog position, to start a stream from
  recover   rebuild a dropped or truncated table from the binlogs
  verify    compare a replayed copy with its source, table by table
  version   print the version

Run 'binlogcdc <command> --help' for a command's flags.

Exit codes:
  0    success
  1    error (I/O, bad input; the message says what to do)
  2    usage error
  3    the binlog lacks FULL row metadata for a selected table
  4    the binlog is truncated or corrupt (everything before it was written)
  5    the server's settings or the user's privileges stop streaming (the message says what to change)
  130  interrupted
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, sig, stop := watchSignals(context.Background())
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "read":
		err = runReadArgs(ctx, args[1:], stdout, stderr)
	case "stream":
		err = runStreamArgs(ctx, args[1:], stdout, stderr, sig)
	case "archive": // binlogcdc archive: cmd/binlogcdc/archive.go
		err = runArchiveArgs(ctx, args[1:], stdout, stderr, sig)
	case "snapshot": // binlogcdc snapshot: cmd/binlogcdc/snapshot.go
		err = runSnapshotArgs(ctx, args[1:], stdout, stderr, sig)
	case "recover": // binlogcdc recover: cmd/binlogcdc/recover.go
		err = runRecoverArgs(ctx, args[1:], stdout, stderr)
	case "verify": // binlogcdc verify: cmd/binlogcdc/verify.go
		err = runVerifyArgs(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "binlogcdc", version()) // version.go
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
	default:
		err = usageError{Msg: fmt.Sprintf("unknown command %q", args[0]), Hint: "run 'binlogcdc --help' for the list of commands"}
	}
	return report(err, stderr)
}

// flagSyntax ends a command's --help: how its flags that take no value
// (or an optional one) are given a value, with its own flags as the
// examples; "" when it has none.
func flagSyntax(f *pflag.FlagSet) string {
	var noValue, optional []string
	f.VisitAll(func(fl *pflag.Flag) {
		switch {
		case fl.Hidden || fl.NoOptDefVal == "":
		case fl.Name == "progress": // the usual example, first
			noValue = append([]string{fl.Name}, noValue...)
		case fl.Value.Type() == "bool":
			noValue = append(noValue, fl.Name)
		default:
			optional = append(optional, fl.Name)
		}
	})
	if len(noValue) == 0 && len(optional) == 0 {
		return ""
	}
	var what, eg []string
	if len(noValue) > 0 {
		what = append(what, "takes no value (--"+noValue[0]+")")
		eg = append(eg, "--"+noValue[0]+"=false")
	}
	if len(optional) > 0 {
		fl := f.Lookup(optional[0])
		what = append(what, "an optional one (--"+fl.Name+")")
		alt := "skip"
		if fl.Name != "ddl" {
			alt = fl.NoOptDefVal
		}
		eg = append(eg, "--"+fl.Name+"="+alt)
	}
	return "\nA flag that " + strings.Join(what, " or ") + " takes it only after '=':\n" +
		strings.Join(eg, ", ") + ". A separate word is an argument.\n"
}

// parseFlags parses a subcommand's flags; --help prints usage and the
// flags, and a bad flag is a usageError pointing at --help.
func parseFlags(name, usage string, args []string, stderr io.Writer, add func(*pflag.FlagSet)) (*pflag.FlagSet, error) {
	f := pflag.NewFlagSet(name, pflag.ContinueOnError)
	f.SetOutput(stderr)
	add(f)
	f.Usage = func() {
		fmt.Fprint(stderr, usage)
		fmt.Fprint(stderr, flagUsages(f)) // args.go
		fmt.Fprint(stderr, flagSyntax(f))
	}
	if err := checkAttachedValues(f, args); err != nil { // args.go
		return nil, err
	}
	if err := f.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return nil, err
		}
		return nil, usageError{Msg: err.Error(), Hint: "run 'binlogcdc " + name + " --help'"}
	}
	return f, nil
}

// warnf returns a printer of warnings to w.
func warnf(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "binlogcdc: warning: "+format+"\n", args...)
	}
}

// warnUnmatched warns, at the end of a run, about table patterns that
// matched no table the input mentioned.
func warnUnmatched(w io.Writer, f *pipeline.Filter) {
	warnUnmatchedIn(w, f, "in the input")
}

// warnUnmatchedIn is warnUnmatched where in says where tables were
// looked for.
func warnUnmatchedIn(w io.Writer, f *pipeline.Filter, in string) {
	for _, m := range f.Unmatched(in) {
		warnf(w)("%s", m)
	}
}

// usageError is a mistake on the command line.
type usageError = binlogcdc.UsageError

// report prints err as one line with a hint, and maps it to an exit code.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	var ue usageError
	var me *tablemap.MetadataError
	var be *binlog.Error
	var pe *binlog.PreflightError
	var fe *binlog.FileError
	var ae *archive.Error
	switch {
	case errors.As(err, &ae): // binlogcdc archive
		return archiveError(ae, stderr)
	case errors.As(err, &fe): // a file given on the command line (args.go)
		fmt.Fprintf(stderr, "binlogcdc: %v\n", fe)
		if fe.Hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", fe.Hint)
		}
		if fe.Usage { // which files were named: a mistake on the command line
			return exitUsage
		}
		return exitError
	case errors.As(err, &pe):
		fmt.Fprintf(stderr, "binlogcdc: %v\n", pe)
		if pe.Hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", pe.Hint)
		}
		return exitSetup
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "binlogcdc: %s\nhint: %s\n", ue.Msg, ue.Hint)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "binlogcdc: interrupted")
		return exitInterrupted
	case errors.As(err, &me):
		fmt.Fprintf(stderr, "binlogcdc: %v\n", me)
		return exitMetadata
	case errors.As(err, &be):
		fmt.Fprintf(stderr, "binlogcdc: %s: %v\n", be.Where(), be.Err)
		if be.Hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", be.Hint)
		}
		return exitCorrupt
	}
	fmt.Fprintf(stderr, "binlogcdc: %v\n", err)
	if h := connectHint(err); h != "" { // args.go
		fmt.Fprintf(stderr, "hint: %s\n", h)
	}
	return exitError
}

// cmdInfof returns a printer of notes to w.
func cmdInfof(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, "binlogcdc: "+format+"\n", args...) }
}
