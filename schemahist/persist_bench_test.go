package schemahist

import (
	"fmt"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// BenchmarkMarshal1000 is a save after one ALTER in a 1,000-table history.
func BenchmarkMarshal1000(b *testing.B) {
	h := New(false)
	for i := 0; i < 1000; i++ {
		h.Apply(Statement{SQL: fmt.Sprintf("CREATE TABLE d.t%d (id INT PRIMARY KEY, a VARCHAR(20) DEFAULT 'x', b BIGINT, c DATETIME, d DECIMAL(10,2)) CHARSET=utf8mb4", i), Pos: change.Position{File: "b.1", Offset: uint64(4 + i)}})
	}
	data, err := h.MarshalJSON()
	if err != nil || h.Len() != 1000 || h.Table("d", "t999") == nil {
		b.Fatal(h.Len(), err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Apply(Statement{SQL: fmt.Sprintf("ALTER TABLE d.t%d ADD COLUMN x%d INT", i%1000, i), Pos: change.Position{File: "b.2", Offset: uint64(4 + i)}})
		if _, err := h.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
