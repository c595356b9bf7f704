// Command archivelag measures binlogcdc archive's live delay: from a
// transaction's commit on the source to its last byte being in the
// archive's file (written to the file: in the page cache, not fsynced).
//
// The archiver must already follow the source (bench/archive.sh starts
// it). This program commits single-row INSERTs at a steady rate on one
// connection, the only writer; after each commit, SHOW MASTER STATUS
// gives where the transaction ends in the server's binlog, and a watcher
// polls the size of the archive's copy of that file (every 50 µs) until
// it reaches that end. The delay is from the commit returning (so it
// leaves out the commit itself) to the size being seen, which overstates
// it by up to the polling interval.
//
//	archivelag -dir /tmp/arch -port 3307 -rate 200 -duration 20s
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

type commit struct {
	at   time.Time
	file string
	end  int64
}

func main() {
	dir := flag.String("dir", "", "the archive's directory")
	host := flag.String("host", "127.0.0.1", "source server host")
	port := flag.Int("port", 3306, "source server port")
	rate := flag.Int("rate", 200, "transactions per second")
	duration := flag.Duration("duration", 20*time.Second, "how long to write")
	warmup := flag.Duration("warmup", 2*time.Second, "transactions of the first this long are not counted")
	flag.Parse()
	if err := run(*dir, fmt.Sprintf("%s:%d", *host, *port), *rate, *duration, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "archivelag:", err)
		os.Exit(1)
	}
}

func run(dir, addr string, rate int, duration, warmup time.Duration) error {
	c, err := client.Connect(addr, "root", "", "")
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute("CREATE TABLE IF NOT EXISTS b.lag (id BIGINT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(100))"); err != nil {
		return err
	}
	commits := make(chan commit, 1<<16)
	delays := make(chan []time.Duration)
	go watch(dir, commits, delays)
	start := time.Now()
	every := time.Second / time.Duration(rate)
	n := 0
	for next := start; time.Since(start) < duration; next = next.Add(every) {
		time.Sleep(time.Until(next))
		if _, err := c.Execute("INSERT INTO b.lag (v) VALUES (REPEAT('x', 100))"); err != nil {
			return err
		}
		at := time.Now()
		r, err := c.Execute("SHOW MASTER STATUS")
		if err != nil {
			return err
		}
		file, _ := r.GetString(0, 0)
		end, _ := r.GetInt(0, 1)
		if at.Sub(start) >= warmup {
			commits <- commit{at: at, file: file, end: end}
			n++
		}
	}
	close(commits)
	d := <-delays
	if len(d) == 0 {
		return fmt.Errorf("no transaction measured")
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	fmt.Printf("archive live delay at %d tx/s (%d transactions): p50 %v, p99 %v, max %v\n",
		rate, len(d), q(0.50).Round(time.Microsecond), q(0.99).Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond))
	return nil
}

// watch polls the archive file of each commit until it holds it.
func watch(dir string, commits <-chan commit, out chan<- []time.Duration) {
	var d []time.Duration
	for c := range commits {
		path := filepath.Join(dir, c.file)
		for {
			if fi, err := os.Stat(path); err == nil && fi.Size() >= c.end {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		d = append(d, time.Since(c.at))
	}
	out <- d
}
