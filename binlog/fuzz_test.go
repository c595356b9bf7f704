// The fuzz test is in package binlog_test, not binlog: it runs the whole
// pipeline, and pipeline imports binlog.
package binlog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// FuzzFileSource writes arbitrary bytes to a binlog file and runs the whole
// pipeline over it (FileSource → decoders → JSON lines sink). It must never
// panic or hang; a failure must be a *binlog.Error (exit code 4: corrupt or
// truncated) or a *tablemap.MetadataError (exit code 3); and whatever was
// committed must be valid JSON lines.
//
// The seeds are testdata/shop.binlog (a real MariaDB binlog with DDL,
// inserts, updates, deletes and many column types), a few cuts of it, and
// the corpus in testdata/fuzz/FuzzFileSource.
func FuzzFileSource(f *testing.F) {
	seed, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, n := range []int{0, 3, 4, 100, len(seed) / 3, len(seed) / 2, len(seed) - 1} {
		f.Add(seed[:n])
	}
	// One directory per fuzzing process, reused: inputs run one at a time.
	dir := f.TempDir()
	path := filepath.Join(dir, "binlog.000001")
	f.Fuzz(func(t *testing.T, data []byte) {
		// As is: mostly checksum mismatches. With every event's CRC32
		// recomputed: the mutations reach the decoders.
		runFile(t, dir, path, data)
		runFile(t, dir, path, fixChecksums(data))
	})
}

// fixChecksums walks the events by their size fields and rewrites each
// one's last 4 bytes as its CRC32 (computed as verifyCRC32 checks it).
func fixChecksums(data []byte) []byte {
	b := bytes.Clone(data)
	for off := 4; off+binlog.HeaderSize <= len(b); {
		size := int(binary.LittleEndian.Uint32(b[off+9:]))
		if size < binlog.HeaderSize+4 || size > len(b)-off {
			break
		}
		ev := b[off : off+size]
		hdr := bytes.Clone(ev[:binlog.HeaderSize])
		if ev[4] == byte(replication.FORMAT_DESCRIPTION_EVENT) {
			flags := binary.LittleEndian.Uint16(hdr[17:]) &^ replication.LOG_EVENT_BINLOG_IN_USE_F
			binary.LittleEndian.PutUint16(hdr[17:], flags)
		}
		crc := crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, ev[binlog.HeaderSize:size-4])
		binary.LittleEndian.PutUint32(ev[size-4:], crc)
		off += size
	}
	return b
}

func runFile(t *testing.T, dir, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := binlog.OpenFiles([]string{path}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out bytes.Buffer
	sk := jsonl.New(&out, jsonl.Options{Memory: 1 << 16, TempDir: dir})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- pipeline.New(src, sk, pipeline.Options{DDL: true}).Run(ctx) }()
	runErr := watch(done, len(data))
	if err := sk.Close(ctx); err != nil {
		t.Fatalf("closing the sink: %v", err)
	}
	if runErr != nil {
		var be *binlog.Error
		var me *tablemap.MetadataError
		if !errors.As(runErr, &be) && !errors.As(runErr, &me) {
			t.Errorf("error %T is neither *binlog.Error nor *tablemap.MetadataError: %v", runErr, runErr)
		}
		if runErr.Error() == "" {
			t.Error("empty error message")
		}
	}
	for i, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' || !json.Valid(line) {
			t.Fatalf("output line %d is not a JSON line: %q", i+1, line)
		}
	}
}

// Limits of one run over an input of a few kilobytes, which takes
// milliseconds: beyond them the pipeline is stuck in a loop.
const (
	runTimeLimit = 3 * time.Second
	runHeapLimit = 512 << 20
)

// watch waits for the run's result. A run that takes too long or too
// much memory is a hang that may not stop by itself (a decoder that
// does not check ctx): panic with every goroutine's stack, which ends the
// process at once instead of letting the loop eat the machine's memory
// (and, when fuzzing, records the input as a crasher).
func watch(done <-chan error, size int) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			metrics.Read(sample)
			heap := sample[0].Value.Uint64()
			if time.Since(start) > runTimeLimit || heap > runHeapLimit {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				panic(fmt.Sprintf("the pipeline hung on an input of %d bytes: still running after %v with %d MiB of heap (limits %v, %d MiB)\n%s",
					size, time.Since(start).Round(time.Millisecond), heap>>20, runTimeLimit, runHeapLimit>>20, buf[:n]))
			}
		}
	}
}
