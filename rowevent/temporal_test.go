package rowevent

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func tcol(t byte, fsp int) tablemap.Column { return tablemap.Column{Type: t, FSP: fsp} }

func cellTS(sec uint64, s string) change.Value { return change.TimestampValue(sec, []byte(s)) }

func TestDecodeCellDate(t *testing.T) {
	d := tcol(mysql.MYSQL_TYPE_DATE, 0)
	runCellCases(t, []cellCase{
		// 3 bytes LE: year<<9 | month<<5 | day
		{"date", d, "43b50f", cellText(change.Date, "2010-10-03")},      // 2010<<9 + 10<<5 + 3 = 1029443 = 0x0fb543
		{"zero date", d, "000000", cellText(change.Date, "0000-00-00")}, // kept as is
		{"month 0", d, "00c80f", cellText(change.Date, "2020-00-00")},   // 2020<<9 = 0x0fc800
		{"max", d, "9f1f4e", cellText(change.Date, "9999-12-31")},       // 9999<<9 + 12<<5 + 31 = 0x4e1f9f
		{"min", d, "21d007", cellText(change.Date, "1000-01-01")},       // 1000<<9 + 1<<5 + 1 = 0x07d021
		{"newdate", tcol(mysql.MYSQL_TYPE_NEWDATE, 0), "43b50f", cellText(change.Date, "2010-10-03")},
	})
}

func TestDecodeCellDatetime2(t *testing.T) {
	dt := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_DATETIME2, fsp) }
	// 0x99b39ec8b8 - 0x8000000000 = (2024*13+6)<<22 | 15<<17 | 12<<12 | 34<<6 | 56
	runCellCases(t, []cellCase{
		{"fsp0", dt(0), "99b39ec8b8", cellText(change.Datetime, "2024-06-15 12:34:56")},
		{"zero", dt(0), "8000000000", cellText(change.Datetime, "0000-00-00 00:00:00")},
		{"max", dt(0), "fef3ff7efb", cellText(change.Datetime, "9999-12-31 23:59:59")},
		{"month 0", dt(0), "99a5000000", cellText(change.Datetime, "2020-00-00 00:00:00")},
		{"fsp1", dt(1), "99b39ec8b846", cellText(change.Datetime, "2024-06-15 12:34:56.7")},              // 0x46 = 70 hundredths
		{"fsp2", dt(2), "99b39ec8b84e", cellText(change.Datetime, "2024-06-15 12:34:56.78")},             // 0x4e = 78
		{"fsp3", dt(3), "99b39ec8b81ed2", cellText(change.Datetime, "2024-06-15 12:34:56.789")},          // 0x1ed2 = 7890 (units of 100µs)
		{"fsp3 zero", dt(3), "80000000000000", cellText(change.Datetime, "0000-00-00 00:00:00.000")},     // as MySQL prints it
		{"fsp4", dt(4), "99b39ec8b81ed3", cellText(change.Datetime, "2024-06-15 12:34:56.7891")},         // 0x1ed3 = 7891
		{"fsp5", dt(5), "99b39ec8b80c0a80", cellText(change.Datetime, "2024-06-15 12:34:56.78912")},      // 0x0c0a80 = 789120 µs
		{"fsp6", dt(6), "99b39ec8b801e240", cellText(change.Datetime, "2024-06-15 12:34:56.123456")},     // 0x01e240 = 123456
		{"fsp6 min", dt(6), "8cb2420000000001", cellText(change.Datetime, "1000-01-01 00:00:00.000001")}, // (1000*13+1)<<22 | 1<<17
	})
}

func TestDecodeCellTimestamp2(t *testing.T) {
	c := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_TIMESTAMP2, fsp) }
	runCellCases(t, []cellCase{
		// 4 bytes BE Unix seconds, always rendered in UTC
		{"fsp0", c(0), "666d8a70", cellTS(0x666d8a70, "2024-06-15 12:34:56")},
		{"epoch+1", c(0), "00000001", cellTS(1, "1970-01-01 00:00:01")},
		{"2038", c(0), "7fffffff", cellTS(0x7fffffff, "2038-01-19 03:14:07")},
		{"zero", c(0), "00000000", cellTS(0, "0000-00-00 00:00:00")},
		{"fsp3", c(3), "666d8a701ed2", cellTS(0x666d8a70, "2024-06-15 12:34:56.789")},      // 0x1ed2 = 7890 * 100µs
		{"fsp6", c(6), "7fffffff0f423f", cellTS(0x7fffffff, "2038-01-19 03:14:07.999999")}, // 0x0f423f = 999999
		{"after 2038", c(0), "ffffffff", cellTS(0xffffffff, "2106-02-07 06:28:15")},        // MariaDB 11.5+ range (computed)
		{"fsp2 zero", c(2), "0000000000", cellTS(0, "0000-00-00 00:00:00.00")},             // (computed)
	})
}

func TestDecodeCellTime2(t *testing.T) {
	c := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_TIME2, fsp) }
	// 3 bytes BE, 0x800000 + (hour<<12 | minute<<6 | second), then the
	// fraction; negative values count down from 0x800000 with the fraction
	// bytes reversed (0x100 - frac etc.).
	runCellCases(t, []cellCase{
		{"fsp0", c(0), "80c8b8", cellText(change.Time, "12:34:56")}, // 12<<12 | 34<<6 | 56 = 0xc8b8
		{"min", c(0), "4b9105", cellText(change.Time, "-838:59:59")},
		{"max", c(0), "b46efb", cellText(change.Time, "838:59:59")},
		{"zero", c(0), "800000", cellText(change.Time, "00:00:00")},
		{"-1s", c(0), "7fffff", cellText(change.Time, "-00:00:01")},
		{"fsp1 negative", c(1), "7fef7cce", cellText(change.Time, "-01:02:03.5")},     // 0x100 - 0xce = 50 hundredths
		{"fsp1 -0.1", c(1), "7ffffff6", cellText(change.Time, "-00:00:00.1")},         // 0x100 - 0xf6 = 10
		{"fsp1 0.1", c(1), "8000000a", cellText(change.Time, "00:00:00.1")},           // 10 hundredths
		{"fsp2 -0.01", c(2), "7fffffff", cellText(change.Time, "-00:00:00.01")},       // int -1, frac 0xff -> -(0x100-0xff)
		{"fsp2 -1.01", c(2), "7ffffeff", cellText(change.Time, "-00:00:01.01")},       // int -2, frac 0xff
		{"fsp2 -0.99", c(2), "7fffff9d", cellText(change.Time, "-00:00:00.99")},       // 0x100 - 0x9d = 99
		{"fsp3 negative", c(3), "7fef7cec78", cellText(change.Time, "-01:02:03.500")}, // 0x10000 - 0xec78 = 5000
		{"fsp3 -0.001", c(3), "7ffffffff6", cellText(change.Time, "-00:00:00.001")},
		{"fsp3 positive", c(3), "80c0002706", cellText(change.Time, "12:00:00.999")}, // 0x2706 = 9990
		{"fsp4", c(4), "7ffffeffff", cellText(change.Time, "-00:00:01.0001")},
		{"fsp5", c(5), "7ffffefffff6", cellText(change.Time, "-00:00:01.00001")}, // 6 bytes: 0x800000000000 - packed
		{"fsp6 min", c(6), "4b9105000000", cellText(change.Time, "-838:59:59.000000")},
		{"fsp6 -1µs", c(6), "7fffffffffff", cellText(change.Time, "-00:00:00.000001")},
		{"fsp6 max", c(6), "b46efb0f423f", cellText(change.Time, "838:59:59.999999")},
	})
}

// Old formats, captured from MariaDB 10.11 with mysql56_temporal_format=OFF
// (table `old`, three rows). The hires columns' TABLE_MAP metadata is
// empty, so FSP is set here by hand as a schema would give it.
func TestDecodeCellOldTemporal(t *testing.T) {
	dt := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_DATETIME, fsp) }
	tm := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_TIME, fsp) }
	tsc := func(fsp int) tablemap.Column { return tcol(mysql.MYSQL_TYPE_TIMESTAMP, fsp) }
	runCellCases(t, []cellCase{
		// DATETIME: 8 bytes LE YYYYMMDDhhmmss; 20240615123456 = 0x1268a2acaa00
		{"datetime", dt(0), "00aaaca268120000", cellText(change.Datetime, "2024-06-15 12:34:56")},
		{"datetime zero", dt(0), "0000000000000000", cellText(change.Datetime, "0000-00-00 00:00:00")},
		{"datetime max", dt(0), "7787d105f15a0000", cellText(change.Datetime, "9999-12-31 23:59:59")},
		// hires DATETIME(n): BE ((((((y*13+m)*32+d)*24+h)*60+mi)*60+s)*10^6+µs) / 10^(6-n), 5..8 bytes
		{"datetime(1)", dt(1), "00a96b86ea67", cellText(change.Datetime, "2024-06-15 12:34:56.7")},
		{"datetime(3)", dt(3), "00422e00b39095", cellText(change.Datetime, "2024-06-15 12:34:56.789")},
		{"datetime(6)", dt(6), "010283b2bd629e40", cellText(change.Datetime, "2024-06-15 12:34:56.123456")},
		{"datetime(1) zero", dt(1), "000000000000", cellText(change.Datetime, "0000-00-00 00:00:00.0")},
		{"datetime(1) max", dt(1), "0344d965ffff", cellText(change.Datetime, "9999-12-31 23:59:59.9")},
		{"datetime(3) min", dt(3), "0020b127eddc01", cellText(change.Datetime, "1000-01-01 00:00:00.001")},
		{"datetime(6) month 0", dt(6), "0101f0a218700001", cellText(change.Datetime, "2020-00-00 00:00:00.000001")},
		// TIME: 3 bytes LE signed [-]HHMMSS; 123456 = 0x01e240
		{"time", tm(0), "40e201", cellText(change.Time, "12:34:56")},
		{"time min", tm(0), "590a80", cellText(change.Time, "-838:59:59")}, // -8385959
		{"time -1s", tm(0), "ffffff", cellText(change.Time, "-00:00:01")},
		// hires TIME(n): BE, zero point (839h in µs)/10^(6-n), 3..6 bytes
		{"time(1)", tm(1), "01cc4eed", cellText(change.Time, "-01:02:03.5")},
		{"time(3)", tm(3), "00b3ced494", cellText(change.Time, "-01:02:03.500")},
		{"time(6) max", tm(6), "057e7bbcf7ff", cellText(change.Time, "838:59:59.999999")},
		{"time(1) zero", tm(1), "01cce060", cellText(change.Time, "00:00:00.0")},
		{"time(3) -1ms", tm(3), "00b407a57f", cellText(change.Time, "-00:00:00.001")},
		{"time(3) +1ms", tm(3), "00b407a581", cellText(change.Time, "00:00:00.001")},
		{"time(6) min", tm(6), "000000000001", cellText(change.Time, "-838:59:59.999999")},
		{"time(1) -0.1", tm(1), "01cce05f", cellText(change.Time, "-00:00:00.1")},
		{"time(6) -1µs", tm(6), "02bf3dde7bff", cellText(change.Time, "-00:00:00.000001")},
		// TIMESTAMP: 4 bytes LE seconds; hires adds BE µs/10^(6-n)
		{"timestamp", tsc(0), "708a6d66", cellTS(0x666d8a70, "2024-06-15 12:34:56")},
		{"timestamp epoch+1", tsc(0), "01000000", cellTS(1, "1970-01-01 00:00:01")},
		{"timestamp(1)", tsc(1), "666d8a7007", cellTS(0x666d8a70, "2024-06-15 12:34:56.7")},
		{"timestamp(1) epoch", tsc(1), "0000000101", cellTS(1, "1970-01-01 00:00:01.1")},
		{"timestamp(3)", tsc(3), "666d8a700315", cellTS(0x666d8a70, "2024-06-15 12:34:56.789")},
		{"timestamp(6)", tsc(6), "666d8a7001e240", cellTS(0x666d8a70, "2024-06-15 12:34:56.123456")},
		{"timestamp(6) 2038", tsc(6), "7fffffff0f423f", cellTS(0x7fffffff, "2038-01-19 03:14:07.999999")},
	})
}

// Without the precision (the binlog never gives it), hires cells are read
// in the plain layout; values that cannot be plain ones are reported.
func TestDecodeCellOldHiresDetected(t *testing.T) {
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string // the hires cell followed by the next cell of the row
	}{
		{"datetime(1)", tcol(mysql.MYSQL_TYPE_DATETIME, 0), "00a96b86ea67" + "00422e00"},
		{"datetime(3)", tcol(mysql.MYSQL_TYPE_DATETIME, 0), "00422e00b39095" + "01"},
		{"time(3)", tcol(mysql.MYSQL_TYPE_TIME, 0), "00b3ced494"},
		{"zongji datetime(3)", tcol(mysql.MYSQL_TYPE_DATETIME, 0), "00422e00b3909500b3ced494666d8a700315"},
	}
	for _, tc := range cases {
		data, _ := hex.DecodeString(tc.hex)
		var a arena
		_, _, err := decodeCell(&a, data, &tc.col)
		if !errors.Is(err, ErrOldHiresTemporal) || !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: err = %v, want ErrOldHiresTemporal", tc.name, err)
		}
	}
}

func TestDecodeCellTemporalErrors(t *testing.T) {
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string
	}{
		{"datetime2 negative", tcol(mysql.MYSQL_TYPE_DATETIME2, 0), "7fffffffff"},
		{"datetime2 fraction", tcol(mysql.MYSQL_TYPE_DATETIME2, 2), "99b39ec8b8ff"}, // 255 hundredths
		{"timestamp2 fraction", tcol(mysql.MYSQL_TYPE_TIMESTAMP2, 6), "666d8a70ffffff"},
		{"time2 fraction", tcol(mysql.MYSQL_TYPE_TIME2, 6), "800000ffffff"},
		{"timestamp hires fraction", tcol(mysql.MYSQL_TYPE_TIMESTAMP, 1), "666d8a70ff"},
	}
	for _, tc := range cases {
		data, _ := hex.DecodeString(tc.hex)
		var a arena
		_, n, err := decodeCell(&a, data, &tc.col)
		if !errors.Is(err, ErrBadValue) || n != 0 {
			t.Errorf("%s: n=%d err=%v, want ErrBadValue", tc.name, n, err)
		}
	}
}
