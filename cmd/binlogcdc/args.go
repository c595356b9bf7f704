package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// checkInputs checks the binlog files given (binlog.ResolveFiles: they
// exist, are binlogs, form one sequence) and that no file the command
// will write (outputs: -o, profiles; "" for none) is one of them, before
// anything is opened for writing. It returns the files in the order to
// read them, and a cleanup that removes the copies of compressed files
// (and of stdin, with copyStdin: for a command that reads the binlogs
// more than once) to call when done.
func checkInputs(files []string, outputs map[string]string, copyStdin bool) ([]string, func(), error) {
	// Outputs first: naming an input is a mistake whatever the files hold.
	given := append([]string(nil), files...)
	if len(files) == 1 && strings.HasSuffix(files[0], ".index") {
		if listed, err := binlog.ReadIndex(files[0]); err == nil {
			given = append(given, listed...)
		}
	}
	if err := checkOutputs(outputs, given); err != nil {
		return nil, func() {}, err
	}
	resolved, cleanup, err := binlog.ResolveFiles(files, copyStdin)
	if err != nil {
		return nil, cleanup, err
	}
	if err := checkOutputs(outputs, resolved); err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return resolved, cleanup, nil
}

// checkOutputs refuses an output that is one of inputs or of their series
// (sameAsInput).
func checkOutputs(outputs map[string]string, inputs []string) error {
	for flag, out := range outputs {
		if out == "" || out == "-" {
			continue
		}
		if in, ok := sameAsInput(out, inputs); ok {
			return usageError{
				msg:  fmt.Sprintf("%s %s is an input file (%s): writing there would destroy it", flag, out, in),
				hint: fmt.Sprintf("write the output to another file, e.g. %s %s", flag, filepath.Join(os.TempDir(), "binlogcdc.out"))}
		}
	}
	return nil
}

// sameAsInput reports which input out would overwrite: the same file
// (also through a symlink or a hard link), or a file of an input's series
// in its directory whatever its form or suffix (binlog.000007,
// binlog.000007.gz or .zst beside binlog.000006.gz), which reading would
// follow into through the ROTATE at the end of the input, or the series'
// index file. inputs are paths as given (a compressed file, not its
// decompressed copy: binlog.Origin).
func sameAsInput(out string, inputs []string) (string, bool) {
	ofi, oerr := os.Stat(out)
	odir, derr := os.Stat(filepath.Dir(out))
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		in = binlog.Origin(in)
		ifi, err := os.Stat(in)
		if err == nil && oerr == nil && os.SameFile(ofi, ifi) {
			return in, true
		}
		idir, err := os.Stat(filepath.Dir(in))
		if err != nil || derr != nil || !os.SameFile(odir, idir) {
			continue
		}
		stem, _, ok := binlog.Sequence(binlog.PlainName(filepath.Base(in)))
		if !ok {
			continue
		}
		if inSeries(filepath.Base(out), stem) {
			return in + "'s series, which reading follows", true
		}
		if b := filepath.Base(out); b == stem+".index" || strings.HasPrefix(b, stem+".index.") {
			return in + "'s index", true
		}
	}
	return "", false
}

// inSeries reports whether the file name base is one of the series stem,
// whatever follows its sequence number: stem.000042, stem.000042.gz,
// stem.000042.anything.
func inSeries(base, stem string) bool {
	rest, ok := strings.CutPrefix(base, stem+".")
	if !ok {
		return false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return n > 0 && (n == len(rest) || rest[n] == '.')
}

// checkAttachedValues refuses a flag that takes no value, or an optional
// one, followed by a word that reads as its value: "--ddl skip" would
// apply DDL and read a file named "skip", "--progress false" would turn
// progress on. Such flags take their value only after '='.
func checkAttachedValues(f *pflag.FlagSet, args []string) error {
	for i := 0; i+1 < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		var fl *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			fl = f.Lookup(a[2:])
		case len(a) == 2 && a[0] == '-' && a[1] != '-':
			fl = f.ShorthandLookup(a[1:])
		}
		if fl == nil || fl.NoOptDefVal == "" || !readsAsValue(fl, args[i+1]) {
			continue
		}
		next := args[i+1]
		return usageError{
			msg:  fmt.Sprintf("%s %s: --%s takes a value only after '=' (%s %s would read %q as a file name)", a, next, fl.Name, a, next, next),
			hint: fmt.Sprintf("write --%s=%s (or, for a file named %s, ./%s)", fl.Name, next, next, next)}
	}
	return nil
}

// readsAsValue reports whether word reads as a value for fl (one-letter
// forms such as "f" do not: they are more likely file names).
func readsAsValue(fl *pflag.Flag, word string) bool {
	switch strings.ToLower(word) {
	case "true", "false", "yes", "no", "on", "off", "0", "1":
		return true
	case "apply", "skip":
		return fl.Value.Type() != "bool"
	}
	return false
}

// flagUsages is f.FlagUsages() written so that no flag invites a value
// after a space: bool flags show no "[=true|false]", and --ddl shows
// "--ddl[=apply|skip]".
func flagUsages(f *pflag.FlagSet) string {
	u := f.FlagUsages()
	u = strings.ReplaceAll(u, "[=true|false]", strings.Repeat(" ", len("[=true|false]")))
	old, repl := "--ddl apply|skip[=apply]", "--ddl[=apply|skip]"
	return strings.ReplaceAll(u, old, repl+strings.Repeat(" ", len(old)-len(repl)))
}

// checkStreamArgs checks stream's arguments that can be checked before
// connecting: the --to DSN, the --start-gtid set (as MySQL's or MariaDB's
// syntax: the flavor is known only once connected), that -o is not
// the checkpoint file, and that no output is a file it reads.
func checkStreamArgs(o *StreamOptions) error {
	if strings.HasPrefix(o.Replay.To, "mysql:") {
		if _, err := o.Replay.targetConfig(); err != nil { // replay.go
			return err
		}
	}
	if err := checkStartGTID(o.StartGTID); err != nil {
		return err
	}
	if samePath(o.Output, o.Checkpoint) {
		return usageError{msg: "-o " + o.Output + " is the --checkpoint file", hint: "write the output and the checkpoint to different files"}
	}
	for _, p := range [][2]string{{"--cpuprofile", o.CPUProfile}, {"--memprofile", o.MemProfile}} {
		for _, q := range [][2]string{{"-o", o.Output}, {"--checkpoint", o.Checkpoint}} {
			if samePath(p[1], q[1]) {
				return usageError{msg: p[0] + " " + p[1] + " is the " + q[0] + " file", hint: "write the profile to another file"}
			}
		}
	}
	inputs := connFiles(o.Conn)
	inputs["--kafka-sasl-password-file"] = o.Kafka.SASLPasswordFile
	return checkReadFiles(inputs, map[string]string{"-o": o.Output, "--checkpoint": o.Checkpoint, "--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile})
}

// checkReadFiles refuses an output (flag to path; "" for none) that is a
// file the command reads: the password, TLS and SASL password files
// (flag to path). Appending change lines to one would destroy it.
func checkReadFiles(inputs, outputs map[string]string) error {
	for of, out := range outputs {
		for inf, in := range inputs {
			if samePath(out, in) {
				return usageError{msg: fmt.Sprintf("%s %s is the %s file: writing there would destroy it", of, out, inf),
					hint: fmt.Sprintf("write %s to another file", of)}
			}
		}
	}
	return nil
}

// connFiles are the files c reads, by flag.
func connFiles(c ConnOptions) map[string]string {
	return map[string]string{"--password-file": c.PasswordFile, "--ssl-ca": c.SSLCA, "--ssl-cert": c.SSLCert, "--ssl-key": c.SSLKey}
}

// samePath reports whether a and b (neither "") name the same file.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, aerr := filepath.Abs(a)
	ba, berr := filepath.Abs(b)
	ai, aserr := os.Stat(a)
	bi, bserr := os.Stat(b)
	return aerr == nil && berr == nil && aa == ba || aserr == nil && bserr == nil && os.SameFile(ai, bi)
}

// checkStartGTID checks a --start-gtid value ("": none) as MySQL's or
// MariaDB's syntax: the flavor is known only once connected.
func checkStartGTID(g string) error {
	if g == "" {
		return nil
	}
	_, myErr := mysql.ParseGTIDSet(mysql.MySQLFlavor, g)
	_, mariaErr := mysql.ParseGTIDSet(mysql.MariaDBFlavor, g)
	if myErr != nil && mariaErr != nil {
		return usageError{msg: fmt.Sprintf("--start-gtid %q is not a GTID set (MySQL: %v; MariaDB: %v)", g, myErr, mariaErr),
			hint: "--start-gtid 3E11FA47-71CA-11E1-9E33-C80AA9429562:1-100 (MySQL) or --start-gtid 0-1-100 (MariaDB)"}
	}
	return nil
}

// connectHint says what to check when err is a failure to reach a server
// (nothing listens, the name does not resolve, no answer), or "".
func connectHint(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		return fmt.Sprintf("the host name %q does not resolve: check the host in the DSN (--source, --to)", de.Name)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		return ""
	}
	addr := ""
	if oe.Addr != nil {
		addr = oe.Addr.String()
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing accepts connections at %s: is the server running, and is the port right (3306 by default; see its 'port' setting)? Try: mariadb -h HOST -P PORT -u USER", addr)
	case oe.Timeout():
		return fmt.Sprintf("%s does not answer: a firewall, or the wrong host", addr)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Sprintf("%s cannot be reached from this machine: check the host and the network", addr)
	}
	return ""
}
