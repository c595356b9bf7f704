package main

import (
	"os"
	"runtime"
	"strings"
)

// replayProcs is the GOMAXPROCS a replay sets for itself (0: leave it):
// 1 for read --to mysql:// on one connection on a machine of two CPUs or
// fewer, unless the user set GOMAXPROCS. The replay's own work (decoding,
// copying, encoding, sending) takes about a third of one CPU; the target
// applies the changes on one connection, so it is what sets the pace. On
// two CPUs shared with the target, a second thread of ours running took a
// CPU from the target's connection thread: in bench/compare.sh's replay
// of 1000-row transactions on 2 CPUs, that thread waited for a CPU
// 0.21-0.33 s of a 5 s replay with GOMAXPROCS=2 and 0.02-0.08 s with 1,
// and the replay took 6% less time (six runs each, alternating). With
// one CPU the replay can still decode, encode and send about three times
// as fast as a MariaDB target applies on one connection there.
// --parallel keeps every CPU: the coordinator and the workers' goroutines
// run at once. So does --load-data: the goroutine that streams a LOAD
// DATA LOCAL's rows to the target then waited for the decoding one, and
// the target's connection thread sat idle 2.0 s instead of 0.7 s.
func replayProcs(numCPU int, env string, parallel int, loadData bool, to string) int {
	if env != "" || numCPU > 2 || parallel > 1 || loadData || !strings.HasPrefix(to, "mysql://") {
		return 0
	}
	return 1
}

// setReplayProcs applies replayProcs to this process.
func setReplayProcs(parallel int, loadData bool, to string) {
	if n := replayProcs(runtime.NumCPU(), os.Getenv("GOMAXPROCS"), parallel, loadData, to); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}
