package conformance

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// go-mysql's TABLE_MAP fixtures are event bodies (post-header + payload,
// 6-byte table id) without the 19-byte header and the CRC32. tableMapBody
// wraps one into a whole event and parses it with go-mysql's parser set
// up by the real MySQL 5.7.22 FORMAT_DESCRIPTION_EVENT from the same test
// suite (CRC32, 8-byte TABLE_MAP post-header), then builds the Table.
func tableMapBody(t *testing.T, name string) (*replication.TableMapEvent, *tablemap.Table, error) {
	t.Helper()
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	if _, err := p.Parse(readFixture(t, gomysql+"parser_test.go__TestRowsEventDecodeFunc__L88__mysql5722_fde_event.bin")); err != nil {
		t.Fatalf("FDE: %v", err)
	}
	if strings.Contains(name, "mariadb") {
		p.SetFlavor("mariadb") // as the pipeline does for a MariaDB FDE
	} else {
		p.SetFlavor("mysql")
	}
	body := readFixture(t, gomysql+name)
	raw := make([]byte, binlog.HeaderSize, binlog.HeaderSize+len(body)+4)
	raw[4] = byte(replication.TABLE_MAP_EVENT)
	binary.LittleEndian.PutUint32(raw[5:], 1)
	binary.LittleEndian.PutUint32(raw[9:], uint32(binlog.HeaderSize+len(body)+4))
	raw = append(raw, body...)
	raw = binary.LittleEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	ev, err := p.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	te := ev.Event.(*replication.TableMapEvent)
	tbl, err := tablemap.FromEvent(te)
	return te, tbl, err
}

func mustTableMap(t *testing.T, name string) *tablemap.Table {
	t.Helper()
	_, tbl, err := tableMapBody(t, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tbl
}

// wantNoNames: servers without FULL metadata (MySQL 5.7, MariaDB 10.4).
func wantNoNames(t *testing.T, name string) {
	t.Helper()
	_, tbl, err := tableMapBody(t, name)
	var me *tablemap.MetadataError
	if !errors.As(err, &me) || tbl != nil {
		t.Errorf("%s: want *tablemap.MetadataError, got %v, %v", name, tbl, err)
	}
}

var typesNames = []string{"b_bit", "n_boolean", "n_tinyint", "n_smallint", "n_mediumint", "n_int", "n_bigint",
	"n_decimal", "n_float", "n_double", "nu_tinyint", "nu_smallint", "nu_mediumint", "nu_int", "nu_bigint",
	"nu_decimal", "nu_float", "nu_double", "t_year", "t_date", "t_time", "t_ftime", "t_datetime", "t_fdatetime",
	"t_timestamp", "t_ftimestamp", "c_char", "c_varchar", "c_binary", "c_varbinary", "c_tinyblob", "c_blob",
	"c_mediumblob", "c_longblob", "c_tinytext", "c_text", "c_mediumtext", "c_longtext", "e_enum", "s_set",
	"g_geometry", "j_json"}

const tm = "row_event_test.go__"

// TestGoMySQLTableMapNullable: CREATE TABLE _null (c1 int null, c2 int not
// null default '2', c3 timestamp default now(), c4 text).
func TestGoMySQLTableMapNullable(t *testing.T) {
	for _, name := range []string{"TestTableMapNullable__L716__mysql80.bin", "TestTableMapNullable__L720__mariadb105.bin"} {
		tbl := mustTableMap(t, tm+name)
		if tbl.DB != "test" || tbl.Name != "_null" {
			t.Errorf("%s: table %s.%s", name, tbl.DB, tbl.Name)
		}
		wantNames(t, tbl, "c1", "c2", "c3", "c4")
		var got []bool
		for _, c := range tbl.Columns {
			got = append(got, c.Nullable)
		}
		if want := []bool{true, false, false, true}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: nullable %v, want %v", name, got, want)
		}
		if len(tbl.PrimaryKey) != 0 || len(tbl.PKNames) != 0 {
			t.Errorf("%s: pk %v", name, tbl.PrimaryKey)
		}
	}
	wantNoNames(t, tm+"TestTableMapNullable__L714__mysql57.bin")
	wantNoNames(t, tm+"TestTableMapNullable__L718__mariadb104.bin")
}

// TestGoMySQLTableMapNames: the 42-column _types table.
func TestGoMySQLTableMapNames(t *testing.T) {
	for _, name := range []string{"TestTableMapOptMetaNames__L844__mysql80.bin", "TestTableMapOptMetaNames__L848__mariadb105.bin"} {
		tbl := mustTableMap(t, tm+name)
		wantNames(t, tbl, typesNames...)
		if got := tbl.Columns[38].EnumValues; !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("%s: e_enum labels %q", name, got)
		}
		if got := tbl.Columns[39].SetValues; !reflect.DeepEqual(got, []string{"1", "2"}) {
			t.Errorf("%s: s_set labels %q", name, got)
		}
		if c := tbl.Columns[0]; c.Bits != 64 {
			t.Errorf("%s: b_bit BIT(%d), want 64", name, c.Bits)
		}
		if c := tbl.Columns[7]; c.Precision != 65 || c.Scale != 30 {
			t.Errorf("%s: n_decimal DECIMAL(%d,%d), want (65,30)", name, c.Precision, c.Scale)
		}
		for _, i := range []int{21, 23, 25} {
			if c := tbl.Columns[i]; c.FSP != 6 {
				t.Errorf("%s: %s fsp %d, want 6", name, c.Name, c.FSP)
			}
		}
	}
	wantNoNames(t, tm+"TestTableMapOptMetaNames__L842__mysql57.bin")
	wantNoNames(t, tm+"TestTableMapOptMetaNames__L846__mariadb104.bin")
}

// TestGoMySQLTableMapPrimaryKey: _prim (id2 int, col varchar(30), id1
// bigint, primary key (id1, id2)) with SIMPLE_PRIMARY_KEY, and _prim2
// (col1 int, id1 char(10), col2 int, id2 varchar(20), primary key (id1,
// id2(10))) with PRIMARY_KEY_WITH_PREFIX.
func TestGoMySQLTableMapPrimaryKey(t *testing.T) {
	for _, name := range []string{"TestTableMapOptMetaPrimaryKey__L895__mysql80_case1.bin", "TestTableMapOptMetaPrimaryKey__L907__mariadb105_case1.bin"} {
		tbl := mustTableMap(t, tm+name)
		wantNames(t, tbl, "id2", "col", "id1")
		if !reflect.DeepEqual(tbl.PrimaryKey, []int{2, 0}) || !reflect.DeepEqual(tbl.PrimaryKeyPrefix, []int{0, 0}) ||
			!reflect.DeepEqual(tbl.PKNames, []string{"id1", "id2"}) {
			t.Errorf("%s: pk %v prefix %v names %q, want [2 0] [0 0] [id1 id2]", name, tbl.PrimaryKey, tbl.PrimaryKeyPrefix, tbl.PKNames)
		}
	}
	for _, name := range []string{"TestTableMapOptMetaPrimaryKey__L919__mysql80_case2.bin", "TestTableMapOptMetaPrimaryKey__L931__mariadb105_case2.bin"} {
		tbl := mustTableMap(t, tm+name)
		wantNames(t, tbl, "col1", "id1", "col2", "id2")
		if !reflect.DeepEqual(tbl.PrimaryKey, []int{1, 3}) || !reflect.DeepEqual(tbl.PrimaryKeyPrefix, []int{0, 10}) ||
			!reflect.DeepEqual(tbl.PKNames, []string{"id1", "id2"}) {
			t.Errorf("%s: pk %v prefix %v names %q, want [1 3] [0 10] [id1 id2]", name, tbl.PrimaryKey, tbl.PrimaryKeyPrefix, tbl.PKNames)
		}
	}
	for _, name := range []string{"L889__mysql57_case1", "L901__mariadb104_case1", "L913__mysql57_case2", "L925__mariadb104_case2"} {
		wantNoNames(t, tm+"TestTableMapOptMetaPrimaryKey__"+name+".bin")
	}
}

// TestGoMySQLTableMapVisibility: 11 INT columns col0..col10 (MySQL
// 8.0.23+). Case 1 has col0,2,5,6,7,9,10 INVISIBLE (bitmap 58 80); case
// 2 none. MariaDB 10.5 sends no visibility: all visible.
func TestGoMySQLTableMapVisibility(t *testing.T) {
	visible := func(tbl *tablemap.Table) []int {
		var v []int
		for i, c := range tbl.Columns {
			if c.Visible {
				v = append(v, i)
			}
		}
		return v
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tbl := mustTableMap(t, tm+"TestTableMapOptMetaVisibility__L1024__mysql80_case1.bin")
	wantNames(t, tbl, "col0", "col1", "col2", "col3", "col4", "col5", "col6", "col7", "col8", "col9", "col10")
	if got := visible(tbl); !reflect.DeepEqual(got, []int{1, 3, 4, 8}) {
		t.Errorf("case 1 visible columns %v, want [1 3 4 8]", got)
	}
	for _, name := range []string{"L1036__mysql80_case2", "L1048__mariadb105_case2"} {
		tbl := mustTableMap(t, tm+"TestTableMapOptMetaVisibility__"+name+".bin")
		if got := visible(tbl); !reflect.DeepEqual(got, all) {
			t.Errorf("%s visible columns %v, want all", name, got)
		}
	}
	wantNoNames(t, tm+"TestTableMapOptMetaVisibility__L1030__mysql57_case2.bin")
	wantNoNames(t, tm+"TestTableMapOptMetaVisibility__L1042__mariadb104_case2.bin")
}

// TestGoMySQLTableMapHelperMaps: the 51-column _types table (the 42 above
// with c_char collate gbk_chinese_ci, plus s_set2 set('3','4') and
// e_enum2 enum('c','d') collate gbk_chinese_ci, and seven typed geometry
// columns). Expected maps from go-mysql's TestTableMapHelperMaps.
func TestGoMySQLTableMapHelperMaps(t *testing.T) {
	for _, server := range []string{"mysql80", "mariadb105"} {
		t.Run(server, func(t *testing.T) {
			line := map[string]string{"mysql80": "L1347", "mariadb105": "L1357"}[server]
			tbl := mustTableMap(t, tm+"TestTableMapHelperMaps__"+line+"__"+server+".bin")
			if len(tbl.Columns) != 51 {
				t.Fatalf("%d columns", len(tbl.Columns))
			}
			mariadb := server == "mariadb105"
			// Signedness: cols 1-9 signed, 10-17 unsigned; YEAR (18) is
			// logged unsigned by MariaDB only.
			for i := 1; i <= 18; i++ {
				want := i >= 10 && i <= 17 || i == 18 && mariadb
				if got := tbl.Columns[i].Unsigned; got != want {
					t.Errorf("%s unsigned %v, want %v", tbl.Columns[i].Name, got, want)
				}
			}
			collations := map[int]uint32{26: 28, 27: 224, 28: 63, 29: 63, 30: 63, 31: 63, 32: 63, 33: 63, 34: 224, 35: 224, 36: 224, 37: 224,
				38: 224, 39: 224, 42: 28, 43: 28} // 38-43: ENUM/SET charsets
			if mariadb {
				// MariaDB lists GEOMETRY (binary) and JSON (= LONGTEXT, utf8mb4_bin) too.
				collations[40] = 63
				collations[41] = 46
				for i := 44; i <= 50; i++ {
					collations[i] = 63
				}
			}
			for i, c := range tbl.Columns {
				if got, want := c.Collation, collations[i]; got != want {
					t.Errorf("%s collation %d, want %d", c.Name, got, want)
				}
			}
			wantLabels := map[int][]string{38: {"a", "b"}, 43: {"c", "d"}}
			wantSets := map[int][]string{39: {"1", "2"}, 42: {"3", "4"}}
			for i, c := range tbl.Columns {
				if !reflect.DeepEqual(c.EnumValues, wantLabels[i]) {
					t.Errorf("%s ENUM labels %q, want %q", c.Name, c.EnumValues, wantLabels[i])
				}
				if !reflect.DeepEqual(c.SetValues, wantSets[i]) {
					t.Errorf("%s SET labels %q, want %q", c.Name, c.SetValues, wantSets[i])
				}
			}
			geoms := map[int]int{40: 0, 44: 7, 45: 6, 46: 5, 47: 4, 48: 3, 49: 2, 50: 1}
			for i, want := range geoms {
				if got := tbl.Columns[i].GeometryType; got != want {
					t.Errorf("%s geometry type %d, want %d", tbl.Columns[i].Name, got, want)
				}
			}
		})
	}
	wantNoNames(t, tm+"TestTableMapHelperMaps__L1367__mysql57.bin")
	wantNoNames(t, tm+"TestTableMapHelperMaps__L1377__mariadb104.bin")
}
