package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// checkInputs checks the binlog files given (binlog.ResolveFiles: they
// exist, are binlogs, form one sequence) and that no file the command
// will write (outputs: -o, profiles; "" for none) is one of them, before
// anything is opened for writing. It returns the files in the order to
// read them.
func checkInputs(files []string, outputs map[string]string) ([]string, error) {
	resolved, err := binlog.ResolveFiles(files)
	if err != nil {
		return nil, err
	}
	inputs := append([]string(nil), resolved...)
	if len(files) == 1 && filepath.Ext(files[0]) == ".index" {
		inputs = append(inputs, files[0])
	}
	for flag, out := range outputs {
		if out == "" || out == "-" {
			continue
		}
		if in, ok := sameAsInput(out, inputs); ok {
			return nil, usageError{
				msg:  fmt.Sprintf("%s %s is an input file (%s): writing there would destroy it", flag, out, in),
				hint: fmt.Sprintf("write the output to another file, e.g. %s %s", flag, filepath.Join(os.TempDir(), "binlogcdc.out"))}
		}
	}
	return resolved, nil
}

// sameAsInput reports which input out would overwrite: the same file
// (also through a symlink or a hard link), or a file of an input's series
// in its directory (binlog.000007 beside binlog.000006), which reading
// would follow into through the ROTATE at the end of the input, or the
// series' index file.
func sameAsInput(out string, inputs []string) (string, bool) {
	ofi, oerr := os.Stat(out)
	odir, derr := os.Stat(filepath.Dir(out))
	for _, in := range inputs {
		ifi, err := os.Stat(in)
		if err == nil && oerr == nil && os.SameFile(ofi, ifi) {
			return in, true
		}
		idir, err := os.Stat(filepath.Dir(in))
		if err != nil || derr != nil || !os.SameFile(odir, idir) {
			continue
		}
		stem, _, ok := binlog.Sequence(in)
		if !ok {
			continue
		}
		if ostem, _, ok := binlog.Sequence(out); ok && ostem == stem {
			return in + "'s series, which reading follows", true
		}
		if filepath.Base(out) == stem+".index" {
			return in + "'s index", true
		}
	}
	return "", false
}
