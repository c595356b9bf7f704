package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profileUsage documents the hidden profiling flags in 'read --help' and 'recover --help'.
const profileUsage = `
Debugging aids (hidden flags, for 'go tool pprof'):
  --cpuprofile FILE   write a CPU profile of the run to FILE
  --memprofile FILE   write an allocation profile to FILE at the end of the run
`

// addProfileFlags defines --cpuprofile and --memprofile, hidden from the
// flag list (profileUsage describes them).
func addProfileFlags(f *pflag.FlagSet, cpu, mem *string) {
	f.StringVar(cpu, "cpuprofile", "", "write a CPU profile to `FILE`")
	f.StringVar(mem, "memprofile", "", "write a heap profile to `FILE` at the end")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
}

// profiled runs run with the profiles asked for (startProfile); an error
// writing them is returned when run succeeded.
func profiled(cpu, mem string, run func() error) error {
	stop, err := startProfile(cpu, mem)
	if err != nil {
		return err
	}
	err = run()
	if perr := stop(); perr != nil && err == nil {
		err = perr
	}
	return err
}

// startProfile starts CPU profiling into cpu (if set); the returned stop
// ends it and writes the heap profile into mem (if set).
func startProfile(cpu, mem string) (stop func() error, err error) {
	var cf *os.File
	if cpu != "" {
		if cf, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cf); err != nil {
			cf.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	return func() error {
		var first error
		if cf != nil {
			pprof.StopCPUProfile()
			if err := cf.Close(); err != nil {
				first = fmt.Errorf("--cpuprofile: %w", err)
			}
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err != nil {
				return fmt.Errorf("--memprofile: %w", err)
			}
			// The profile is as of the last completed GC: without this
			// one, what was allocated since (a large row's buffers, when
			// no GC ran after them) is missing from it.
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil && first == nil {
				first = fmt.Errorf("--memprofile: %w", err)
			}
			if err := f.Close(); err != nil && first == nil {
				first = fmt.Errorf("--memprofile: %w", err)
			}
		}
		return first
	}, nil
}
