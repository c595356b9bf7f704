package envelope

// Parsing of the temporal text of change values ("YYYY-MM-DD",
// "YYYY-MM-DD hh:mm:ss[.ffffff]", "[-]hh:mm:ss[.ffffff]") into the
// numbers Debezium writes. Nothing here allocates.

func digits(s []byte) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseDate reads "YYYY-MM-DD"; ok is false for zero or partly zero
// dates ("0000-00-00", "2024-00-15"), which name no day.
func parseDate(s []byte) (y, m, d int64, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseClock reads "hh:mm:ss[.ffffff]" (hours of any width) as
// microseconds.
func parseClock(s []byte) (int64, bool) {
	i := 0
	for i < len(s) && s[i] != ':' {
		i++
	}
	h, ok := digits(s[:i])
	if !ok || len(s) < i+6 || s[i+3] != ':' {
		return 0, false
	}
	mi, ok1 := digits(s[i+1 : i+3])
	sec, ok2 := digits(s[i+4 : i+6])
	if !ok1 || !ok2 {
		return 0, false
	}
	us := ((h*60+mi)*60 + sec) * 1e6
	rest := s[i+6:]
	if len(rest) > 0 {
		if rest[0] != '.' || len(rest) > 7 {
			return 0, false
		}
		f, ok := digits(rest[1:])
		if !ok {
			return 0, false
		}
		for n := len(rest) - 1; n < 6; n++ {
			f *= 10
		}
		us += f
	}
	return us, true
}

// parseTime reads a TIME value as signed microseconds.
func parseTime(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	us, ok := parseClock(s)
	if neg {
		us = -us
	}
	return us, ok
}

// parseDatetime reads "YYYY-MM-DD hh:mm:ss[.ffffff]" as microseconds
// since the epoch (the wall clock read as UTC); ok is false for zero
// dates.
func parseDatetime(s []byte) (int64, bool) {
	if len(s) < 19 || s[10] != ' ' {
		return 0, false
	}
	y, m, d, ok := parseDate(s[:10])
	if !ok {
		return 0, false
	}
	us, ok := parseClock(s[11:])
	if !ok {
		return 0, false
	}
	return daysFromCivil(y, m, d)*86400e6 + us, true
}

// floorDiv divides rounding toward negative infinity (as Java's
// Instant.toEpochMilli does for times before 1970).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
