// Command lag measures binlogcdc stream's end-to-end lag: from a row's
// commit on the source to its JSON line coming out of binlogcdc.
//
// It starts `binlogcdc stream --from now` against the source, then inserts
// rows at a steady rate (single-row autocommit INSERTs, paced), each
// carrying its own NOW(6), and reads binlogcdc's stdout. A row's lag is
// the time its line arrived minus the timestamp decoded from its "ts"
// column. NOW(6) is taken when the INSERT starts, a little before it
// commits, so the figures slightly overstate the lag. Source, binlogcdc
// and this program share one machine and one clock; the server runs in
// UTC (--default-time-zone=+00:00).
//
//	lag -binlogcdc ./binlogcdc -port 3307 -rate 5000 -duration 20s
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

func main() {
	bin := flag.String("binlogcdc", "binlogcdc", "the binlogcdc binary")
	host := flag.String("host", "127.0.0.1", "source server host")
	port := flag.Int("port", 3306, "source server port")
	user := flag.String("user", "root", "source server user (no password)")
	rate := flag.Int("rate", 5000, "rows per second")
	duration := flag.Duration("duration", 20*time.Second, "how long to insert")
	warmup := flag.Duration("warmup", 2*time.Second, "rows of the first this long are not counted")
	workers := flag.Int("workers", 4, "inserting connections")
	flag.Parse()
	if err := run(*bin, fmt.Sprintf("%s:%d", *host, *port), *user, *rate, *duration, *warmup, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "lag:", err)
		os.Exit(1)
	}
}

type line struct {
	After struct {
		ID int64  `json:"id"`
		TS string `json:"ts"`
	} `json:"after"`
}

func run(bin, addr, user string, rate int, duration, warmup time.Duration, workers int) error {
	c, err := client.Connect(addr, user, "", "")
	if err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS lag",
		"DROP TABLE IF EXISTS lag.t",
		"CREATE TABLE lag.t (id BIGINT NOT NULL PRIMARY KEY, ts DATETIME(6) NOT NULL, pad VARCHAR(100) NOT NULL) ENGINE=InnoDB",
	} {
		if _, err := c.Execute(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	c.Close()

	cmd := exec.Command(bin, "stream", "--source", "mysql://"+user+"@"+addr, "--from", "now", "--tables", "lag.t")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	// Wait for "connected to …": from then on, every commit is streamed.
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "connected to") {
				once.Do(func() { close(ready) })
			} else if !strings.Contains(sc.Text(), "stopped") {
				fmt.Fprintln(os.Stderr, "binlogcdc:", sc.Text())
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("binlogcdc stream did not connect within 30 s")
	}
	time.Sleep(500 * time.Millisecond)

	total := int64(float64(rate) * duration.Seconds())
	skip := int64(float64(rate) * warmup.Seconds())
	lags := make([]time.Duration, 0, total)
	got := make(chan struct{})
	var readErr error
	go func() {
		defer close(got)
		r := bufio.NewReaderSize(stdout, 1<<20)
		seen := int64(0)
		for seen < total {
			b, err := r.ReadBytes('\n')
			if err != nil {
				if err != io.EOF {
					readErr = err
				} else {
					readErr = fmt.Errorf("binlogcdc ended after %d of %d rows", seen, total)
				}
				return
			}
			now := time.Now()
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				readErr = fmt.Errorf("%v: %s", err, b)
				return
			}
			ts, err := time.ParseInLocation("2006-01-02 15:04:05.999999", l.After.TS, time.UTC)
			if err != nil {
				readErr = err
				return
			}
			seen++
			if l.After.ID >= skip {
				lags = append(lags, now.Sub(ts))
			}
		}
	}()

	// Writers: row i is due at start + i/rate.
	var next atomic.Int64
	var behind atomic.Int64
	start := time.Now().Add(100 * time.Millisecond)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	pad := strings.Repeat("x", 60)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(addr, user, "", "lag")
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			st, err := c.Prepare("INSERT INTO t VALUES (?, NOW(6), ?)")
			if err != nil {
				errs <- err
				return
			}
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				due := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				} else if d < -10*time.Millisecond {
					behind.Add(1)
				}
				if _, err := st.Execute(i, pad); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		return err
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("not every row arrived within 30 s of the last insert")
	}
	if readErr != nil {
		return readErr
	}
	slices.Sort(lags)
	q := func(p float64) float64 {
		return float64(lags[int(p*float64(len(lags)-1))].Microseconds()) / 1000
	}
	fmt.Printf("rows=%d rate=%.0f late_inserts=%d p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
		len(lags), float64(total)/elapsed.Seconds(), behind.Load(), q(0.50), q(0.90), q(0.99), q(1))
	return nil
}
