package verify

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// plan is how one table is compared: the SQL expressions of a row's
// hash, its key's identity and the key as the report shows it.
type plan struct {
	src, dst *tableInfo
	hash     string // MD5 of the row's exact text
	keyID    string // the key's exact text; "" without a primary key
	display  string // the key (or the row, without a key) for people
	order    string // ORDER BY list: the key's columns
	intKey   string // the first key column, when it is an integer
	opts     Options
	out      *Table
}

// integer types whose range can be bisected.
var intTypes = map[string]bool{"tinyint": true, "smallint": true, "mediumint": true, "int": true, "bigint": true}

// numeric types shown (and hashed) as their decimal text.
var textTypes = map[string]bool{"decimal": true, "float": true, "double": true}

var binaryTypes = map[string]bool{"binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true,
	"longblob": true, "inet4": true, "inet6": true, "uuid": true, "geometry": true, "point": true, "linestring": true,
	"polygon": true, "multipoint": true, "multilinestring": true, "multipolygon": true, "geometrycollection": true}

// stringTypes hold strings of any length: exact hashes their bytes.
var stringTypes = map[string]bool{"char": true, "varchar": true, "tinytext": true, "text": true, "mediumtext": true,
	"longtext": true, "binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true,
	"longblob": true, "json": true, "enum": true, "set": true, "geometry": true, "point": true, "linestring": true,
	"polygon": true, "multipoint": true, "multilinestring": true, "multipolygon": true, "geometrycollection": true,
	"vector": true}

// exact is a column's exact text, short enough to concatenate: the MD5
// of a string's bytes (its HEX could pass max_allowed_packet, and a
// function whose result does returns NULL); HEX of an integer, a
// temporal value's text, a UUID's or address's bytes; the decimal text of
// DECIMAL and DOUBLE (HEX would round them to integers: DOUBLE's text is
// the shortest that reads back exactly), of FLOAT through DOUBLE (a
// FLOAT's own text has 6 digits: 1.0000001 and 1.0000002 both print 1);
// the number of an ENUM or SET value; 'N' for NULL, which none of these
// gives. Every part has a fixed length or no ',' in it, so the list
// joined by ',' is unambiguous.
func exact(c column) string {
	ref := quote(c.name)
	switch {
	case c.dataType == "enum" || c.dataType == "set":
		// The number: '' and the error value 0 have the same text.
		return "IFNULL(HEX(" + ref + "+0), 'N')"
	case c.dataType == "float":
		return "IFNULL(CAST(CAST(" + ref + " AS DOUBLE) AS CHAR), 'N')"
	case c.dataType == "decimal" || c.dataType == "double":
		return "IFNULL(CAST(" + ref + " AS CHAR), 'N')"
	case stringTypes[c.dataType]:
		return "IFNULL(MD5(" + ref + "), 'N')"
	}
	return "IFNULL(HEX(" + ref + "), 'N')"
}

// shown is a column's value for the report; long values are cut after
// 64 characters (32 bytes) and marked with "…".
func shown(c column) string {
	ref := quote(c.name)
	switch {
	case textTypes[c.dataType] || intTypes[c.dataType] || c.dataType == "year" || c.dataType == "bit":
		return "IFNULL(CAST(" + ref + "+0 AS CHAR), 'NULL')"
	case c.dataType == "enum" || c.dataType == "set":
		// The number beside an empty label: the member '' and the
		// error value 0 look alike.
		return "IFNULL(IF(" + ref + " = '', CONCAT(QUOTE(" + ref + "), '#', " + ref + "+0), QUOTE(" + ref + ")), 'NULL')"
	case binaryTypes[c.dataType]:
		return "IFNULL(CONCAT('0x', HEX(LEFT(" + ref + ", 32)), IF(LENGTH(" + ref + ") > 32, '…', '')), 'NULL')"
	}
	return "IF(CHAR_LENGTH(" + ref + ") > 64, CONCAT(QUOTE(LEFT(" + ref + ", 64)), '…'), QUOTE(" + ref + "))"
}

func compareTable(s, d *side, st, dt *tableInfo, opts Options) (*Table, error) {
	out := &Table{DB: st.db, Name: st.name, Versioned: st.versioned, strict: opts.StrictSchema}
	cols := compareDefinitions(st, dt, out)
	if len(cols) == 0 {
		out.Schema = append(out.Schema, "no columns in common")
		return out, nil
	}
	p := &plan{src: st, dst: dt, opts: opts, out: out}
	var exacts []string
	for _, c := range cols {
		exacts = append(exacts, exact(c))
	}
	p.hash = "MD5(CONCAT_WS(','," + strings.Join(exacts, ",") + "))"
	byName := map[string]column{}
	for _, c := range cols {
		byName[c.name] = c
	}
	key := st.key
	if strings.Join(st.key, "\x00") != strings.Join(dt.key, "\x00") {
		key = nil // reported by compareDefinitions
	}
	for _, k := range key {
		if _, ok := byName[k]; !ok {
			key = nil
		}
	}
	if st.versioned && len(key) > 0 {
		// History rows repeat the key: the row end tells them apart.
		if end := periodEnd(cols); end != "" && !contains(key, end) {
			key = append(append([]string(nil), key...), end)
		}
	}
	if len(key) > 0 {
		var ids, disp, order []string
		for _, k := range key {
			ids = append(ids, exact(byName[k]))
			disp = append(disp, "CONCAT("+literal(quote(k)+"=")+", "+shown(byName[k])+")")
			order = append(order, quote(k))
		}
		p.keyID = "CONCAT_WS(','," + strings.Join(ids, ",") + ")"
		p.display = "CONCAT_WS(', '," + strings.Join(disp, ",") + ")"
		p.order = strings.Join(order, ", ")
		if intTypes[byName[key[0]].dataType] {
			p.intKey = quote(key[0])
		}
	} else {
		var disp []string
		for _, c := range cols {
			disp = append(disp, shown(c))
		}
		p.display = "CONCAT('(', CONCAT_WS(', '," + strings.Join(disp, ",") + "), ')')"
	}

	// The proof: every row of both sides, read at once.
	var ds, dd digest
	var es, ed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ds, es = s.rowDigest(cols, st)
	}()
	dd, ed = d.rowDigest(cols, dt)
	<-done
	if es != nil || ed != nil {
		out.Error = readError(es, ed, st)
		return out, nil
	}
	out.SourceRows, out.TargetRows = int64(ds.rows), int64(dd.rows)
	out.Method = "SHA-256 of every row"
	if len(key) == 0 {
		out.Method += "; no primary key: compared as a multiset of rows"
	}
	if ds == dd {
		return out, nil
	}
	out.RowsDiffer = true
	// Name the rows: the first split (of the key's range, or into hash
	// buckets) compares the whole table, equal parts end the search.
	var err error
	if p.intKey != "" {
		err = p.bisect(s, d)
	} else {
		err = p.buckets(s, d)
	}
	return out, err
}

// readError says why a table could not be read on a side, and what to
// do about it.
func readError(es, ed error, t *tableInfo) string {
	var msgs []string
	for _, e := range []error{es, ed} {
		if e == nil {
			continue
		}
		m := e.Error()
		if strings.Contains(m, "command denied") {
			m += fmt.Sprintf(" (verify needs SELECT on %s.%s on both sides: GRANT SELECT ON %s.* TO the user)", quote(t.db), quote(t.name), quote(t.db))
		}
		msgs = append(msgs, m)
	}
	return "cannot read the rows: " + strings.Join(msgs, "; ")
}

func periodEnd(cols []column) string {
	for _, c := range cols {
		if strings.Contains(c.extra, "ROW END") {
			return c.name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func names(cols []string) string {
	var q []string
	for _, c := range cols {
		q = append(q, quote(c))
	}
	return strings.Join(q, ",")
}

// groups folds the hashes of the rows matching cond, grouped by the
// value of the SQL expression bucket, into "count sum sum" (the exact
// sums of the two 64-bit halves of each MD5) per group: no difference
// cancels out but by a collision of both sums.
func (p *plan) groups(sd *side, t *tableInfo, bucket, cond string) (map[string]string, error) {
	rows, err := sd.query("SELECT b, COUNT(*), SUM(CAST(CONV(LEFT(h, 16), 16, 10) AS UNSIGNED)), " +
		"SUM(CAST(CONV(SUBSTRING(h, 17, 16), 16, 10) AS UNSIGNED)) FROM (SELECT " + bucket + " AS b, " + p.hash +
		" AS h FROM " + scope(t, cond) + ") x GROUP BY b")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, r := range rows {
		m[str(r[0])] = str(r[1]) + " " + str(r[2]) + " " + str(r[3])
	}
	return m, nil
}

// full reports whether enough differing rows were named.
func (p *plan) full() bool {
	if len(p.out.Rows) >= p.opts.MaxRows {
		p.out.Truncated = true
		return true
	}
	return false
}

// bisect compares ranges of the integer first key column, splitting the
// ranges that differ until they hold at most Leaf rows on either side.
func (p *plan) bisect(s, d *side) error {
	lo, hi := new(big.Int), new(big.Int)
	first := true
	for _, x := range []struct {
		sd *side
		t  *tableInfo
	}{{s, p.src}, {d, p.dst}} {
		rows, err := x.sd.query("SELECT MIN(" + p.intKey + "), MAX(" + p.intKey + ") FROM " + scope(x.t, ""))
		if err != nil {
			return err
		}
		if rows[0][0] == nil {
			continue
		}
		l, _ := new(big.Int).SetString(*rows[0][0], 10)
		h, _ := new(big.Int).SetString(*rows[0][1], 10)
		if l == nil || h == nil {
			return fmt.Errorf("%s: the key's range %q..%q is not integer", x.sd.name, *rows[0][0], *rows[0][1])
		}
		if first || l.Cmp(lo) < 0 {
			lo.Set(l)
		}
		if first || h.Cmp(hi) > 0 {
			hi.Set(h)
		}
		first = false
	}
	if first {
		return nil
	}
	return p.bisectRange(s, d, lo, hi, p.out.SourceRows, p.out.TargetRows)
}

// fanout is how many parts a differing key range is split into; the
// parts' aggregates come from one pass over the range.
const fanout = 16

// bisectRange names the differing rows of the key range lo..hi, whose
// aggregates differ and hold ns rows on the source, nd on the target:
// small enough, its rows are matched; else it is split into fanout
// parts, and the parts that differ are examined in turn.
func (p *plan) bisectRange(s, d *side, lo, hi *big.Int, ns, nd int64) error {
	if p.full() {
		return nil
	}
	cond := p.intKey + " BETWEEN " + lo.String() + " AND " + hi.String()
	if (ns <= int64(p.opts.Leaf) && nd <= int64(p.opts.Leaf)) || lo.Cmp(hi) == 0 {
		return p.matchRows(s, d, cond)
	}
	// Part i holds the keys from bounds[i] to bounds[i+1]-1.
	width := new(big.Int).Sub(hi, lo)
	width.Add(width, big.NewInt(1))
	parts := int64(fanout)
	if width.IsInt64() && width.Int64() < parts {
		parts = width.Int64()
	}
	bounds := make([]*big.Int, parts+1)
	var when strings.Builder
	when.WriteString("CASE")
	for i := int64(0); i <= parts; i++ {
		b := new(big.Int).Mul(width, big.NewInt(i))
		b.Quo(b, big.NewInt(parts))
		bounds[i] = b.Add(b, lo)
		if i > 0 && i < parts {
			fmt.Fprintf(&when, " WHEN %s < %s THEN %d", p.intKey, bounds[i], i-1)
		}
	}
	fmt.Fprintf(&when, " ELSE %d END", parts-1)
	as, err := p.groups(s, p.src, when.String(), cond)
	if err != nil {
		return err
	}
	ad, err := p.groups(d, p.dst, when.String(), cond)
	if err != nil {
		return err
	}
	for i := int64(0); i < parts; i++ {
		k := fmt.Sprint(i)
		if as[k] == ad[k] {
			continue
		}
		var cs, cd int64
		fmt.Sscan(as[k], &cs)
		fmt.Sscan(ad[k], &cd)
		end := new(big.Int).Sub(bounds[i+1], big.NewInt(1))
		if i == parts-1 {
			end = hi
		}
		if err := p.bisectRange(s, d, bounds[i], end, cs, cd); err != nil {
			return err
		}
	}
	return nil
}

// keyRow is one row of a range: its key's display and its hash.
type keyRow struct{ display, hash string }

// fetch returns the rows matching cond by key identity, and the
// identities in key order.
func (p *plan) fetch(sd *side, t *tableInfo, cond string) (map[string]keyRow, []string, error) {
	rows, err := sd.query("SELECT " + p.keyID + ", " + p.hash + ", " + p.display + " FROM " + scope(t, cond) +
		" ORDER BY " + p.order)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]keyRow, len(rows))
	order := make([]string, 0, len(rows))
	for _, r := range rows {
		id := str(r[0])
		if _, dup := m[id]; !dup {
			order = append(order, id)
		}
		m[id] = keyRow{display: str(r[2]), hash: str(r[1])}
	}
	return m, order, nil
}

// matchRows names the differing rows among those matching cond.
func (p *plan) matchRows(s, d *side, cond string) error {
	ms, os, err := p.fetch(s, p.src, cond)
	if err != nil {
		return err
	}
	md, od, err := p.fetch(d, p.dst, cond)
	if err != nil {
		return err
	}
	for _, id := range os {
		r := ms[id]
		t, ok := md[id]
		switch {
		case !ok:
			p.out.Rows = append(p.out.Rows, Row{Missing, r.display})
		case t.hash != r.hash:
			p.out.Rows = append(p.out.Rows, Row{Changed, r.display})
		default:
			continue
		}
		if p.full() {
			return nil
		}
	}
	for _, id := range od {
		if _, ok := ms[id]; !ok {
			p.out.Rows = append(p.out.Rows, Row{Extra, md[id].display})
			if p.full() {
				return nil
			}
		}
	}
	return nil
}

// buckets splits the rows by the first hex digits of the key's MD5 (of
// the row's hash without a key), compares the buckets' aggregates and
// matches the rows of the differing ones.
func (p *plan) buckets(s, d *side) error {
	n := max(p.out.SourceRows, p.out.TargetRows)
	digits := 2
	for n > int64(p.opts.Leaf)<<(4*digits) && digits < 5 {
		digits++
	}
	bucket := "LEFT(" + p.hash + ", " + fmt.Sprint(digits) + ")"
	if p.keyID != "" {
		bucket = "LEFT(MD5(" + p.keyID + "), " + fmt.Sprint(digits) + ")"
	}
	bs, err := p.groups(s, p.src, bucket, "1")
	if err != nil {
		return err
	}
	bd, err := p.groups(d, p.dst, bucket, "1")
	if err != nil {
		return err
	}
	var differ []string
	for b, a := range bs {
		if bd[b] != a {
			differ = append(differ, b)
		}
	}
	for b := range bd {
		if _, ok := bs[b]; !ok {
			differ = append(differ, b)
		}
	}
	sort.Strings(differ)
	for len(differ) > 0 && !p.full() {
		batch := differ[:min(16, len(differ))]
		differ = differ[len(batch):]
		var lits []string
		for _, b := range batch {
			lits = append(lits, "'"+b+"'")
		}
		cond := bucket + " IN (" + strings.Join(lits, ",") + ")"
		if p.keyID != "" {
			err = p.matchRows(s, d, cond)
		} else {
			err = p.matchKeyless(s, d, cond)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// matchKeyless compares the sorted hashes of the rows matching cond as
// multisets, then shows the rows that are missing or extra.
func (p *plan) matchKeyless(s, d *side, cond string) error {
	hashes := func(sd *side, t *tableInfo) ([]string, error) {
		rows, err := sd.query("SELECT h FROM (SELECT " + p.hash + " AS h FROM " + scope(t, cond) + ") x ORDER BY h")
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = str(r[0])
		}
		return out, nil
	}
	hs, err := hashes(s, p.src)
	if err != nil {
		return err
	}
	hd, err := hashes(d, p.dst)
	if err != nil {
		return err
	}
	var missing, extra []string
	i, j := 0, 0
	for i < len(hs) || j < len(hd) {
		switch {
		case j >= len(hd) || (i < len(hs) && hs[i] < hd[j]):
			missing = append(missing, hs[i])
			i++
		case i >= len(hs) || hd[j] < hs[i]:
			extra = append(extra, hd[j])
			j++
		default:
			i++
			j++
		}
	}
	for _, x := range []struct {
		sd   *side
		t    *tableInfo
		hs   []string
		kind Kind
	}{{s, p.src, missing, Missing}, {d, p.dst, extra, Extra}} {
		if len(x.hs) == 0 {
			continue
		}
		x.hs = x.hs[:min(len(x.hs), p.opts.MaxRows)]
		var lits []string
		for _, h := range x.hs {
			lits = append(lits, "'"+h+"'")
		}
		rows, err := x.sd.query("SELECT h, MIN(r) FROM (SELECT " + p.hash + " AS h, " + p.display + " AS r FROM " + scope(x.t, cond) +
			") x WHERE h IN (" + strings.Join(lits, ",") + ") GROUP BY h")
		if err != nil {
			return err
		}
		shownAs := map[string]string{}
		for _, r := range rows {
			shownAs[str(r[0])] = str(r[1])
		}
		for _, h := range x.hs {
			p.out.Rows = append(p.out.Rows, Row{x.kind, shownAs[h]})
			if p.full() {
				return nil
			}
		}
	}
	return nil
}
