package binlogcdc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// CheckInputs checks the binlog files given (binlog.ResolveFiles: they
// exist, are binlogs, form one sequence) and that no file the command
// will write (outputs: -o, profiles; "" for none) is one of them, before
// anything is opened for writing. It returns the files in the order to
// read them, and a cleanup that removes the copies of compressed files
// (and of stdin, with copyStdin: for a command that reads the binlogs
// more than once) to call when done.
func CheckInputs(files []string, outputs map[string]string, copyStdin bool) ([]string, func(), error) {
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
			return UsageError{
				Msg:  fmt.Sprintf("%s %s is an input file (%s): writing there would destroy it", flag, out, in),
				Hint: fmt.Sprintf("write the output to another file, e.g. %s %s", flag, filepath.Join(os.TempDir(), "binlogcdc.out"))}
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

// checkStreamArgs checks stream's arguments that can be checked before
// connecting: the --to DSN, the --start-gtid set (as MySQL's or MariaDB's
// syntax: the flavor is known only once connected), that -o is not
// the checkpoint file, and that no output is a file it reads.
func checkStreamArgs(o *StreamOptions) error {
	if strings.HasPrefix(o.Replay.To, "mysql:") {
		if _, err := o.Replay.TargetConfig(); err != nil { // replay.go
			return err
		}
	}
	if err := CheckStartGTID(o.StartGTID); err != nil {
		return err
	}
	if samePath(o.Output, o.Checkpoint) {
		return UsageError{Msg: "-o " + o.Output + " is the --checkpoint file", Hint: "write the output and the checkpoint to different files"}
	}
	for _, p := range [][2]string{{"--cpuprofile", o.CPUProfile}, {"--memprofile", o.MemProfile}} {
		for _, q := range [][2]string{{"-o", o.Output}, {"--checkpoint", o.Checkpoint}} {
			if samePath(p[1], q[1]) {
				return UsageError{Msg: p[0] + " " + p[1] + " is the " + q[0] + " file", Hint: "write the profile to another file"}
			}
		}
	}
	inputs := ConnFiles(o.Conn)
	inputs["--kafka-sasl-password-file"] = o.Kafka.SASLPasswordFile
	return CheckReadFiles(inputs, map[string]string{"-o": o.Output, "--checkpoint": o.Checkpoint, "--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile})
}

// CheckReadFiles refuses an output (flag to path; "" for none) that is a
// file the command reads: the password, TLS and SASL password files
// (flag to path). Appending change lines to one would destroy it.
func CheckReadFiles(inputs, outputs map[string]string) error {
	for of, out := range outputs {
		for inf, in := range inputs {
			if samePath(out, in) {
				return UsageError{Msg: fmt.Sprintf("%s %s is the %s file: writing there would destroy it", of, out, inf),
					Hint: fmt.Sprintf("write %s to another file", of)}
			}
		}
	}
	return nil
}

// ConnFiles are the files c reads, by flag.
func ConnFiles(c ConnOptions) map[string]string {
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

// CheckStartGTID checks a --start-gtid value ("": none) as MySQL's or
// MariaDB's syntax: the flavor is known only once connected.
func CheckStartGTID(g string) error {
	if g == "" {
		return nil
	}
	_, myErr := mysql.ParseGTIDSet(mysql.MySQLFlavor, g)
	_, mariaErr := mysql.ParseGTIDSet(mysql.MariaDBFlavor, g)
	if myErr != nil && mariaErr != nil {
		return UsageError{Msg: fmt.Sprintf("--start-gtid %q is not a GTID set (MySQL: %v; MariaDB: %v)", g, myErr, mariaErr),
			Hint: "--start-gtid 3E11FA47-71CA-11E1-9E33-C80AA9429562:1-100 (MySQL) or --start-gtid 0-1-100 (MariaDB)"}
	}
	return nil
}
