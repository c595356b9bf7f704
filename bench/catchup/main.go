// Command catchup measures the CPU time (user+sys, from the child's
// rusage) of binlogcdc stream catching up on a server's binlog, side by
// side with binlogcdc read of the same binlog file, into a pipe and into a
// file (-o):
//
//	read      binlogcdc read FILE, stdout read through a pipe
//	stream    binlogcdc stream --from earliest, stdout read through a pipe
//	          until it has printed as many lines as read did, then SIGTERM
//	read-o    binlogcdc read FILE -o OUT
//	stream-o  binlogcdc stream --from earliest -o OUT until OUT is as long
//	          as read's, then SIGTERM
//
// The server must hold FILE as its binlog (bench/compare.sh starts one).
// Each run also checks that stream printed exactly read's bytes. It prints
// one line of key=value pairs: the median CPU seconds of each, and the
// ratios of those medians.
//
//	catchup -binlogcdc ./binlogcdc -port 3307 -binlog workload.binlog -runs 5
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("binlogcdc", "binlogcdc", "the binlogcdc binary")
	port := flag.Int("port", 3306, "source server port (127.0.0.1, user root, no password)")
	file := flag.String("binlog", "", "the server's binlog, as a file")
	runs := flag.Int("runs", 5, "runs of each")
	dir := flag.String("dir", os.TempDir(), "where the -o files go")
	files := flag.Bool("o", true, "also measure -o (into a file)")
	flag.Parse()
	if !*files {
		*dir = ""
	}
	if err := run(*bin, *port, *file, *runs, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "catchup:", err)
		os.Exit(1)
	}
}

func run(bin string, port int, file string, runs int, dir string) error {
	src := fmt.Sprintf("mysql://root@127.0.0.1:%d", port)
	stream := []string{"stream", "--source", src, "--from", "earliest", "--progress=false"}
	outR, outS := filepath.Join(dir, "catchup-read.jsonl"), filepath.Join(dir, "catchup-stream.jsonl")
	if dir != "" {
		defer os.Remove(outR)
		defer os.Remove(outS)
	}
	cpu := map[string][]float64{}
	var lines int
	var sum [32]byte
	for i := 0; i < runs; i++ {
		t, n, h, err := piped(bin, []string{"read", file}, 0)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		lines, sum = n, h
		cpu["read"] = append(cpu["read"], t)

		t, _, h, err = piped(bin, stream, lines)
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		if h != sum {
			return errors.New("stream printed other bytes than read")
		}
		cpu["stream"] = append(cpu["stream"], t)
		if dir == "" {
			continue
		}

		os.Remove(outR)
		t, err = toFile(bin, []string{"read", file, "-o", outR}, "", 0)
		if err != nil {
			return fmt.Errorf("read -o: %w", err)
		}
		cpu["read-o"] = append(cpu["read-o"], t)
		st, err := os.Stat(outR)
		if err != nil {
			return err
		}

		os.Remove(outS)
		t, err = toFile(bin, append(slices.Clone(stream), "-o", outS), outS, st.Size())
		if err != nil {
			return fmt.Errorf("stream -o: %w", err)
		}
		cpu["stream-o"] = append(cpu["stream-o"], t)
		a, _ := os.ReadFile(outR)
		b, _ := os.ReadFile(outS)
		if !bytes.Equal(a, b) {
			return errors.New("stream -o wrote other bytes than read -o")
		}
	}
	m := func(k string) float64 { return median(cpu[k]) }
	if dir == "" {
		fmt.Printf("rows=%d read=%.3f stream=%.3f ratio=%.2f\n", lines, m("read"), m("stream"), m("stream")/m("read"))
		return nil
	}
	fmt.Printf("rows=%d read=%.3f stream=%.3f ratio=%.2f read_o=%.3f stream_o=%.3f ratio_o=%.2f\n",
		lines, m("read"), m("stream"), m("stream")/m("read"), m("read-o"), m("stream-o"), m("stream-o")/m("read-o"))
	return nil
}

// piped runs bin args with stdout into a pipe and returns its CPU
// seconds, the lines it printed and their SHA-256. With stop > 0 it sends
// SIGTERM once stop lines came (a stream does not end by itself).
func piped(bin string, args []string, stop int) (float64, int, [32]byte, error) {
	var sum [32]byte
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, sum, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, sum, err
	}
	h := sha256.New()
	r := bufio.NewReaderSize(out, 1<<20)
	n := 0
	for stop == 0 || n < stop {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			n++
		}
		h.Write(line)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			break
		}
	}
	if stop > 0 {
		cmd.Process.Signal(syscall.SIGTERM)
		io.Copy(io.Discard, r)
	}
	err = cmd.Wait()
	copy(sum[:], h.Sum(nil))
	if err != nil {
		return 0, n, sum, fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	if stop > 0 && n < stop {
		return 0, n, sum, fmt.Errorf("ended after %d of %d lines: %s", n, stop, stderr.Bytes())
	}
	return cpuSeconds(cmd), n, sum, nil
}

// toFile runs bin args (which write a file) and returns its CPU seconds;
// with size > 0 it sends SIGTERM once the file watch has that size.
func toFile(bin string, args []string, watch string, size int64) (float64, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	if size > 0 {
		deadline := time.Now().Add(10 * time.Minute)
		for {
			if st, err := os.Stat(watch); err == nil && st.Size() >= size {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				return 0, fmt.Errorf("%s did not reach %d bytes: %s", watch, size, stderr.Bytes())
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGTERM)
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	return cpuSeconds(cmd), nil
}

func cpuSeconds(cmd *exec.Cmd) float64 {
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
