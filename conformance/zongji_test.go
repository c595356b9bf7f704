package conformance

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

const zongjiFull = zongji + "binlog-mysql84-fullmeta.json.stream.bin"

// zongjiFirstInsert is the JSON line for the first row change of the
// MySQL 8.4.8 FULL capture. Every value is the one zongji's test/parser.js
// asserts for the INSERT of id=1 (see MANIFEST.md); the envelope (ts,
// pos, gtid) comes from the GTID event and the event headers.
const zongjiFirstInsert = `{"op":"insert","db":"zongji_fixture_capture","table":"capture_types","pk":["id"],"after":{` +
	`"id":1,"i_big":9223372036854775807,"u_big":18446744073709551615,"dec_col":"-12345678901234567.0123456789",` +
	`"vc":"héllo wörld","ch":"abc","bin_col":"3q2+7w==","vb":"AQI=","txt":"text value","blb":"yv4=",` +
	`"flt":1.25,"dbl":-2.5,"dt":"2024-06-15 12:34:56.789","ts":"2024-06-15 12:34:56","d":"2024-06-15",` +
	`"t":"-01:02:03.500","y":2024,"e":"b","e2":"c'd","s":["x","z"],"bt":513,` +
	`"js":{"a":1,"d":1.5,"arr":["x",true,null],"big":9223372036854775807},` +
	`"geo":{"srid":0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA"},` +
	`"txt_latin1":"café ñ","vc_latin1":"Ÿ€ señor","vc_ucs2":"héllo"},` +
	`"ts":"2026-07-05T14:34:34.200489Z","pos":{"file":"mysql-bin.000009","offset":2244,"row":0},` +
	`"gtid":"75029619-787e-11f1-88ef-6acb2cd49b0e:12"}`

// TestZongjiMySQL84Full decodes zongji's MySQL 8.4.8 replication stream
// capture (binlog_row_metadata=FULL, no external schema) and checks every
// value zongji asserts.
func TestZongjiMySQL84Full(t *testing.T) {
	rows := mustRun(t, zongjiFull)
	wantOps(t, rows, change.Insert, change.Update, change.Delete, change.Insert)

	tbl := rows[0].Table
	if tbl.DB != "zongji_fixture_capture" || tbl.Name != "capture_types" {
		t.Fatalf("table %s.%s", tbl.DB, tbl.Name)
	}
	wantNames(t, tbl, "id", "i_big", "u_big", "dec_col", "vc", "ch", "bin_col", "vb", "txt", "blb", "flt", "dbl",
		"dt", "ts", "d", "t", "y", "e", "e2", "s", "bt", "js", "geo", "txt_latin1", "vc_latin1", "vc_ucs2")
	if !reflect.DeepEqual(tbl.PrimaryKey, []int{0}) || !reflect.DeepEqual(tbl.PKNames, []string{"id"}) {
		t.Errorf("pk %v %q, want [0] [id]", tbl.PrimaryKey, tbl.PKNames)
	}
	col := map[string]int{}
	for i, c := range tbl.Columns {
		col[c.Name] = i
		if !c.Visible {
			t.Errorf("%s invisible", c.Name)
		}
	}
	get := func(name string) int { return col[name] }
	if !tbl.Columns[get("u_big")].Unsigned || tbl.Columns[get("i_big")].Unsigned || tbl.Columns[get("id")].Unsigned {
		t.Error("signedness: want only u_big (of id, i_big, u_big) unsigned")
	}
	for name, want := range map[string][]string{"e": {"a", "b", "c"}, "e2": {"a,b", "c'd", "plain"}} {
		if got := tbl.Columns[get(name)].EnumValues; !reflect.DeepEqual(got, want) {
			t.Errorf("%s labels %q, want %q", name, got, want)
		}
	}
	if got := tbl.Columns[get("s")].SetValues; !reflect.DeepEqual(got, []string{"x", "y", "z"}) {
		t.Errorf("s labels %q", got)
	}
	// Recovered types (zongji asserts varchar(20) utf8mb4, char(5),
	// binary(4), varbinary(8), text, blob, latin1, ucs2, bit(10),
	// datetime(3), json, geometry). Lengths are in bytes.
	for _, w := range []struct {
		name      string
		typ       byte
		length    int
		collation uint32
	}{
		{"vc", mysql.MYSQL_TYPE_VARCHAR, 80, 255},
		{"ch", mysql.MYSQL_TYPE_STRING, 20, 255},
		{"bin_col", mysql.MYSQL_TYPE_STRING, 4, 63},
		{"vb", mysql.MYSQL_TYPE_VARCHAR, 8, 63},
		{"txt", mysql.MYSQL_TYPE_BLOB, 2, 255},
		{"blb", mysql.MYSQL_TYPE_BLOB, 2, 63},
		{"txt_latin1", mysql.MYSQL_TYPE_BLOB, 2, 8},    // latin1_swedish_ci
		{"vc_latin1", mysql.MYSQL_TYPE_VARCHAR, 20, 8}, // latin1_swedish_ci
		{"vc_ucs2", mysql.MYSQL_TYPE_VARCHAR, 20, 35},  // ucs2_general_ci
		{"js", mysql.MYSQL_TYPE_JSON, 4, 0},
		{"geo", mysql.MYSQL_TYPE_GEOMETRY, 4, 0},
	} {
		got := tbl.Columns[get(w.name)]
		if got.Type != w.typ || got.Length != w.length || got.Collation != w.collation {
			t.Errorf("%s: type %d length %d collation %d, want %d %d %d", w.name, got.Type, got.Length, got.Collation, w.typ, w.length, w.collation)
		}
	}
	if got := tbl.Columns[get("bt")].Bits; got != 10 {
		t.Errorf("bt BIT(%d), want 10", got)
	}
	if dt, tt := tbl.Columns[get("dt")], tbl.Columns[get("t")]; dt.FSP != 3 || tt.FSP != 3 {
		t.Errorf("fsp dt %d t %d, want 3 3", dt.FSP, tt.FSP)
	}

	// Row 1, as zongji asserts it.
	full := func(r rec, img change.Row, id int64, vc string) {
		t.Helper()
		v := func(name string) change.Value { t.Helper(); return r.col(t, img, name) }
		wantInt(t, "id", v("id"), id)
		wantInt(t, "i_big", v("i_big"), 9223372036854775807)
		wantUint(t, "u_big", v("u_big"), 18446744073709551615)
		wantText(t, "dec_col", v("dec_col"), change.Decimal, "-12345678901234567.0123456789")
		wantText(t, "vc", v("vc"), change.String, vc)
		wantText(t, "ch", v("ch"), change.String, "abc")
		wantBytes(t, "bin_col", v("bin_col"), []byte{0xde, 0xad, 0xbe, 0xef})
		wantBytes(t, "vb", v("vb"), []byte{1, 2})
		wantText(t, "txt", v("txt"), change.String, "text value")
		wantBytes(t, "blb", v("blb"), []byte{0xca, 0xfe})
		if f := v("flt"); f.Kind() != change.Float32 || f.Float32() != 1.25 {
			t.Errorf("flt = %v %v, want float32 1.25", f.Kind(), f.Interface())
		}
		if f := v("dbl"); f.Kind() != change.Float64 || f.Float() != -2.5 {
			t.Errorf("dbl = %v %v, want float64 -2.5", f.Kind(), f.Interface())
		}
		wantText(t, "dt", v("dt"), change.Datetime, "2024-06-15 12:34:56.789")
		ts := v("ts")
		wantText(t, "ts", ts, change.Timestamp, "2024-06-15 12:34:56")
		if ts.Uint() != 1718454896 {
			t.Errorf("ts unix %d, want 1718454896", ts.Uint())
		}
		wantText(t, "d", v("d"), change.Date, "2024-06-15")
		wantText(t, "t", v("t"), change.Time, "-01:02:03.500")
		wantInt(t, "y", v("y"), 2024)
		wantEnum(t, "e", v("e"), 2, "b")
		wantEnum(t, "e2", v("e2"), 2, "c'd")
		wantSet(t, "s", v("s"), 0b101, "x", "z")
		wantUint(t, "bt", v("bt"), 513) // b'1000000001' = bytes 02 01
		// MySQL prints object keys ordered by length, then bytes.
		wantText(t, "js", v("js"), change.JSON, `{"a":1,"d":1.5,"arr":["x",true,null],"big":9223372036854775807}`)
		geo := v("geo")
		wkb, _ := hex.DecodeString("0101000000" + "000000000000f03f" + "0000000000000040") // POINT(1 2)
		if geo.Kind() != change.Geometry || geo.Uint() != 0 || !bytes.Equal(geo.Bytes(), wkb) {
			t.Errorf("geo = %v srid %d wkb %x, want srid 0 wkb %x", geo.Kind(), geo.Uint(), geo.Bytes(), wkb)
		}
		wantText(t, "txt_latin1", v("txt_latin1"), change.String, "café ñ")
		wantText(t, "vc_latin1", v("vc_latin1"), change.String, "Ÿ€ señor") // MySQL's latin1 is cp1252
		wantText(t, "vc_ucs2", v("vc_ucs2"), change.String, "héllo")
	}

	ins := rows[0]
	full(ins, ins.After, 1, "héllo wörld")
	upd := rows[1]
	full(upd, upd.Before, 1, "héllo wörld")
	full(upd, upd.After, 2, "updated")
	del := rows[2]
	if del.After != nil {
		t.Error("delete has an after image")
	}
	full(del, del.Before, 2, "updated")
	null := rows[3]
	wantInt(t, "id", null.after(t, "id"), 3)
	for i, v := range null.After[1:] {
		if !v.IsNull() {
			t.Errorf("null row: %s = %v %v, want NULL (not absent)", tbl.Columns[i+1].Name, v.Kind(), v.Interface())
		}
	}
	for i, r := range rows {
		if r.Pos.File != "mysql-bin.000009" || r.RowIndex != 0 {
			t.Errorf("row %d at %v#%d", i, r.Pos, r.RowIndex)
		}
	}
	wantPos := []uint64{2244, 3064, 4123, 4928} // the rows events' offsets (log_pos - size)
	for i, r := range rows {
		if r.Pos.Offset != wantPos[i] {
			t.Errorf("row %d offset %d, want %d", i, r.Pos.Offset, wantPos[i])
		}
	}

	// The exact JSON line of the first insert.
	out, err := jsonLines(t, binlog.NewStreamSource(bytes.NewReader(readFixture(t, zongjiFull))))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines, want 4", len(lines))
	}
	if lines[0] != zongjiFirstInsert {
		t.Errorf("first JSON line:\n got %s\nwant %s", lines[0], zongjiFirstInsert)
	}
	if !strings.HasPrefix(lines[1], `{"op":"update","db":"zongji_fixture_capture","table":"capture_types","pk":["id"],"before":{"id":1,`) ||
		!strings.Contains(lines[1], `"after":{"id":2,`) || !strings.Contains(lines[1], `"vc":"updated"`) {
		t.Errorf("update line: %s", lines[1])
	}
	if !strings.HasPrefix(lines[2], `{"op":"delete","db":"zongji_fixture_capture","table":"capture_types","pk":["id"],"before":{"id":2,`) ||
		strings.Contains(lines[2], `"after"`) {
		t.Errorf("delete line: %s", lines[2])
	}
	wantNullLine := `"after":{"id":3,"i_big":null,"u_big":null,"dec_col":null,"vc":null,"ch":null,"bin_col":null,"vb":null,` +
		`"txt":null,"blb":null,"flt":null,"dbl":null,"dt":null,"ts":null,"d":null,"t":null,"y":null,"e":null,"e2":null,` +
		`"s":null,"bt":null,"js":null,"geo":null,"txt_latin1":null,"vc_latin1":null,"vc_ucs2":null}`
	if !strings.Contains(lines[3], wantNullLine) {
		t.Errorf("null row line: %s", lines[3])
	}
}

// TestStreamPositionsContiguous: in every zongji capture, each event that
// sits in a binlog file starts where the previous one ended. MariaDB
// 11.8 writes log_pos 0 in the events inside a transaction (ANNOTATE_ROWS,
// TABLE_MAP, rows events); their positions must still be right.
func TestStreamPositionsContiguous(t *testing.T) {
	for _, rel := range []string{zongjiFull, zongji + "binlog-mysql84.json.stream.bin", zongji + "binlog-mariadb118.json.stream.bin"} {
		evs, err := events(t, binlog.NewStreamSource(bytes.NewReader(readFixture(t, rel))))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		zeroLogPos := 0
		var prev *evInfo
		for i := range evs {
			e := &evs[i]
			artificial := e.Flags&replication.LOG_EVENT_ARTIFICIAL_F != 0 || e.Type == replication.FORMAT_DESCRIPTION_EVENT && e.LogPos == 0
			if artificial {
				continue
			}
			if e.LogPos == 0 {
				zeroLogPos++
			}
			if e.Next.File == e.Pos.File && e.Next.Offset != e.Pos.Offset+uint64(e.Size) {
				t.Errorf("%s: %v at %v: next %v, want +%d", rel, e.Type, e.Pos, e.Next, e.Size)
			}
			if prev != nil && prev.Next != e.Pos {
				t.Errorf("%s: %v at %v, but the previous %v ended at %v", rel, e.Type, e.Pos, prev.Type, prev.Next)
			}
			prev = e
		}
		if mariadb := strings.Contains(rel, "mariadb"); mariadb != (zeroLogPos > 0) {
			t.Errorf("%s: %d events with log_pos 0", rel, zeroLogPos)
		}
	}
}
