package envelope

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// Debezium's order: the snapshot's last row, its first, a table's last,
// a table's first, the rest.
func TestDebeziumSnapshotPlace(t *testing.T) {
	const (
		fi = change.PlaceFirstInTable
		li = change.PlaceLastInTable
		ft = change.PlaceFirstTable
		lt = change.PlaceLastTable
	)
	for place, want := range map[uint8]string{
		0: `"true"`, ft: `"true"`, lt: `"true"`, ft | lt: `"true"`,
		fi | ft: `"first"`, li | lt: `"last"`, fi | li | ft | lt: `"last"`,
		fi | li | ft: `"first"`, fi | li: `"last_in_data_collection"`, li: `"last_in_data_collection"`, li | ft: `"last_in_data_collection"`,
		fi: `"first_in_data_collection"`, fi | lt: `"first_in_data_collection"`,
		change.PlaceIncremental: `"incremental"`,
	} {
		if got := dbzSnapshot(place); got != want {
			t.Errorf("place %05b: %s, want %s", place, got, want)
		}
	}
}
