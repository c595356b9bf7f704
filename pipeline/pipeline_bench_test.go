package pipeline

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// BenchmarkPipeline runs the whole read path (framing, CRC, decoding, JSON
// lines) over testdata/shop.binlog, or over the file named by
// $BINLOGCDC_BENCH_BINLOG (e.g. bench/gen.sh's workload.binlog), writing
// to io.Discard.
//
// Sub-benchmark metrics counts with Options.Metrics (--metrics-addr).
func BenchmarkPipeline(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchPipeline(b, nil) })
	b.Run("metrics", func(b *testing.B) { benchPipeline(b, metrics.New()) })
}

func benchPipeline(b *testing.B, m *metrics.Stream) {
	file := os.Getenv("BINLOGCDC_BENCH_BINLOG")
	if file == "" {
		file = "../testdata/shop.binlog"
	}
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var rows uint64
	b.ReportAllocs()
	b.SetBytes(st.Size())
	for b.Loop() {
		src, err := binlog.OpenFiles([]string{file}, change.Position{})
		if err != nil {
			b.Fatal(err)
		}
		sk := jsonl.New(io.Discard, jsonl.Options{})
		p := New(src, sk, Options{DDL: true, Metrics: m})
		if err := p.Run(ctx); err != nil {
			b.Fatal(err)
		}
		if err := sk.Close(ctx); err != nil {
			b.Fatal(err)
		}
		src.Close()
		rows = p.Stats.Rows
	}
	b.ReportMetric(float64(rows), "rows/op")
}
