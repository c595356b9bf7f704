package envelope

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestLargeSameBytes: an encoder that writes large values in pieces
// (SetSpill) writes the records it builds whole, and the same keys.
func TestLargeSameBytes(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0}, PKNames: []string{"id"}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
		{Name: "b", Type: mysql.MYSQL_TYPE_BLOB, Length: 4, Collation: 63, Nullable: true},
		{Name: "s", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 4000, Collation: 45, Nullable: true},
		{Name: "j", Type: mysql.MYSQL_TYPE_JSON, Length: 4, Nullable: true},
		{Name: "e", Type: mysql.MYSQL_TYPE_ENUM, Collation: 45, EnumValues: []string{strings.Repeat("é", 20)}, Nullable: true},
		{Name: "k", Type: mysql.MYSQL_TYPE_STRING, Length: 400, Collation: 45},
	}}
	text := []byte(strings.Repeat("it's \"☃\" 😀\x01\n\\", 9))
	row := func(id int64, blob []byte) change.Row {
		return change.Row{
			change.IntValue(id),
			change.TextValue(change.Bytes, blob),
			change.TextValue(change.String, text),
			change.TextValue(change.JSON, []byte(`{"a":"`+strings.Repeat("b\\\"c☃", 12)+`"}`)),
			change.EnumValue(1, []byte(strings.Repeat("é", 20))),
			change.TextValue(change.String, []byte(strings.Repeat("k", 30))),
		}
	}
	blob := bytes.Repeat([]byte{0, 0xff, 'x', 0xfe}, 25)
	changes := []change.Change{
		{Op: change.Insert, Table: tbl, After: row(1, blob)},
		{Op: change.Update, Table: tbl, Before: row(1, blob), After: row(1, blob[:50])},
		{Op: change.Update, Table: tbl, Before: row(1, blob[:50]), After: row(2, blob[:49])},
		{Op: change.Delete, Table: tbl, Before: row(2, blob[:49])},
	}
	now := func() time.Time { return time.Unix(1700000000, 5) }
	for _, format := range Formats {
		for _, piece := range []int{3, 6, 300} {
			whole, _ := New(Options{Format: format, Now: now})
			inPieces, _ := New(Options{Format: format, Now: now})
			var spilled bytes.Buffer
			spills := 0
			inPieces.(Spiller).SetSpill(func(b []byte) ([]byte, error) {
				spilled.Write(b)
				spills++
				return b[:0], nil
			})
			for i := range changes {
				c := &changes[i]
				want, err := whole.AppendValue([]byte("line\n"), c)
				if err != nil {
					t.Fatal(err)
				}
				func() {
					v, p := largeValue, largePiece
					largeValue, largePiece = 10, piece
					defer func() { largeValue, largePiece = v, p }()
					spilled.Reset()
					got, err := inPieces.AppendValue([]byte("line\n"), c)
					if err != nil {
						t.Fatal(err)
					}
					if got := append(spilled.Bytes(), got...); !bytes.Equal(got, want) {
						t.Errorf("%s, pieces of %d, %s:\n got %s\nwant %s", format, piece, c.Op, got, want)
					}
					wk, _ := whole.AppendKey(nil, c)
					gk, _ := inPieces.AppendKey(nil, c)
					if !bytes.Equal(wk, gk) {
						t.Errorf("%s: key %s, want %s", format, gk, wk)
					}
				}()
			}
			if spills == 0 {
				t.Errorf("%s: nothing was written in pieces", format)
			}
		}
	}
}

func TestCompactJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a": 1, "b" : [1, 2, {"c": "x y"}]}`, `{"a":1,"b":[1,2,{"c":"x y"}]}`},
		{"{\n\t\"a\\\" b\": \"q\\\\\" ,\r\n\"d\":null }", `{"a\" b":"q\\","d":null}`},
		{` "just a string " `, `"just a string "`},
		{`[ ]`, `[]`},
	} {
		if got := string((&pieces{}).compactJSON(nil, []byte(c.in))); got != c.want {
			t.Errorf("compactJSON(%q) = %q, want %q", c.in, got, c.want)
		}
		// Cut anywhere, the pieces give the same.
		for cut := 0; cut <= len(c.in); cut++ {
			var st compactState
			got := st.append(st.append(nil, []byte(c.in[:cut])), []byte(c.in[cut:]))
			if string(got) != c.want {
				t.Errorf("compactJSON(%q) cut at %d = %q, want %q", c.in, cut, got, c.want)
			}
		}
	}
}
