package binlogcdc

import (
	"fmt"
	"io"
	"sync"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/pipeline"
)

// flagChanged reports whether the flag n was set on the command line;
// f is nil when the options were set in code (no flag was).
func flagChanged(f *pflag.FlagSet, n string) bool {
	if f == nil {
		return false
	}
	fl := f.Lookup(n)
	return fl != nil && fl.Changed
}

// visitChanged calls fn for each flag set on the command line (none when
// f is nil).
func visitChanged(f *pflag.FlagSet, fn func(*pflag.Flag)) {
	if f != nil {
		f.Visit(fn)
	}
}

// addProfileFlags defines --cpuprofile and --memprofile, hidden from the
// flag list (the command's help describes them).
func addProfileFlags(f *pflag.FlagSet, cpu, mem *string) {
	f.StringVar(cpu, "cpuprofile", "", "write a CPU profile to `FILE`")
	f.StringVar(mem, "memprofile", "", "write a heap profile to `FILE` at the end")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
}

// warnf returns a printer of warnings to w.
func warnf(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "binlogcdc: warning: "+format+"\n", args...)
	}
}

// onceWarnf is warnf, saying each warning once: for what a command that
// reads its input more than once (recover) finds each time.
func onceWarnf(w io.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	said := map[string]bool{}
	return func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		mu.Lock()
		defer mu.Unlock()
		if !said[msg] {
			said[msg] = true
			warnf(w)("%s", msg)
		}
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

// DefaultStreamOptions returns the options 'binlogcdc stream' has with
// no flag given: the defaults of every flag (--heartbeat 10s, --ssl-mode
// preferred, …). Start from them: a zero StreamOptions lacks them.
func DefaultStreamOptions() StreamOptions {
	var o StreamOptions
	o.AddFlags(pflag.NewFlagSet("stream", pflag.ContinueOnError)) // binding sets each default
	return o
}

// DefaultReadOptions returns the options 'binlogcdc read' has with no
// flag given. Start from them: a zero ReadOptions lacks them.
func DefaultReadOptions() ReadOptions {
	var o ReadOptions
	o.AddFlags(pflag.NewFlagSet("read", pflag.ContinueOnError))
	return o
}
