// Command readers measures how fast the server produces one table's rows
// through 1, 2, 4 … connections, each reading one primary-key range in its
// own consistent snapshot (START TRANSACTION WITH CONSISTENT SNAPSHOT,
// then SELECT … WHERE id BETWEEN lo AND hi, streamed and discarded): the
// question whether parallel snapshot readers would be faster. Used by
// bench/snapshot.sh (READERS); prints one line per run:
//
//	readers N wall_s rows client_cpu_s server_cpu_s
//
// server_cpu_s is the mariadbd process's user+sys over the run (from
// /proc/PID/stat, -server-pid), client_cpu_s this process's.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3306", "server address")
	table := flag.String("table", "bench.t", "table with an INT key id from 1 to -rows")
	rows := flag.Int("rows", 0, "the table's rows (ids 1..rows)")
	list := flag.String("readers", "1,2,4", "reader counts, run in turn")
	runs := flag.Int("runs", 3, "rounds of the reader counts")
	pid := flag.Int("server-pid", 0, "mariadbd's pid, for its CPU time")
	flag.Parse()
	if *rows <= 0 {
		log.Fatal("readers: -rows is required")
	}
	var counts []int
	for _, s := range strings.Split(*list, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			log.Fatalf("readers: bad -readers %q", *list)
		}
		counts = append(counts, n)
	}
	for r := 0; r < *runs; r++ {
		for _, n := range counts {
			if err := run(*addr, *table, *rows, n, *pid); err != nil {
				log.Fatal(err)
			}
		}
	}
}

func run(addr, table string, rows, n, pid int) error {
	conns := make([]*client.Conn, n)
	for i := range conns {
		c, err := client.Connect(addr, "root", "", "")
		if err != nil {
			return err
		}
		defer c.Close()
		for _, q := range []string{
			"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
			"SET SESSION character_set_results = NULL",
			"SET SESSION net_write_timeout = 86400",
			"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
		} {
			if _, err := c.Execute(q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		conns[i] = c
	}
	srv0 := serverCPU(pid)
	cli0 := selfCPU()
	start := time.Now()
	var wg sync.WaitGroup
	got := make([]int, n)
	errs := make([]error, n)
	for i, c := range conns {
		lo, hi := 1+rows*i/n, rows*(i+1)/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := fmt.Sprintf("SELECT * FROM %s WHERE id BETWEEN %d AND %d ORDER BY id", table, lo, hi)
			var res mysql.Result
			var sink int
			errs[i] = c.ExecuteSelectStreaming(q, &res, func(row []mysql.FieldValue) error {
				for j := range row {
					sink += len(row[j].AsString())
				}
				got[i]++
				return nil
			}, nil)
			_ = sink
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cli := selfCPU() - cli0
	srv := serverCPU(pid) - srv0
	total := 0
	for i := range conns {
		if errs[i] != nil {
			return errs[i]
		}
		total += got[i]
	}
	if total != rows {
		return fmt.Errorf("readers: %d readers read %d rows, want %d", n, total, rows)
	}
	fmt.Printf("readers %d %.2f %d %.2f %.2f\n", n, wall.Seconds(), total, cli.Seconds(), srv.Seconds())
	return nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the process's utime+stime from /proc/PID/stat (0 without
// a pid).
func serverCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is f[0]; utime, stime are stat's 14th, 15th.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}
