// Command goparse parses a binlog file with go-mysql's replication.BinlogParser
// and discards the events: the baseline that binlogcdc's full decoding to
// JSON is measured against (bench/compare.sh).
package main

import (
	"fmt"
	"os"

	"github.com/go-mysql-org/go-mysql/replication"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goparse FILE")
		os.Exit(2)
	}
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	n := 0
	err := p.ParseFile(os.Args[1], 0, func(e *replication.BinlogEvent) error {
		n++
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "goparse:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, n, "events")
}
