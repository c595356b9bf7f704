package e2e

// Oracles: a column's expected JSON value, from the server's own
// rendering of it.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Oracle says how to get a column's expected JSON value from the server:
// Expr is a SQL expression (over the table's columns) and Want turns its
// text result (nil for NULL) into the expected JSON value.
type Oracle struct {
	Expr string
	Want func(s *string) any
}

// Expectation forms compared by equalJSON.
type (
	// f32 and f64 expect a JSON number that parses to exactly this float
	// at the column's width, written in the shortest form that does.
	f32 float32
	f64 float64
)

var (
	// num expects a JSON number with exactly the server's text.
	num = func(s *string) any {
		if s == nil {
			return nil
		}
		return json.Number(*s)
	}
	// str expects a JSON string equal to the server's text.
	str = func(s *string) any {
		if s == nil {
			return nil
		}
		return *s
	}
	// enum expects the label, or the number 0 for the error value, from
	// "index:label".
	enum = func(s *string) any {
		if s == nil {
			return nil
		}
		i, l, _ := strings.Cut(*s, ":")
		if i == "0" {
			return json.Number("0")
		}
		return l
	}
	// hexB64 expects the base64 of the bytes whose HEX() the server gave.
	hexB64 = func(s *string) any {
		if s == nil {
			return nil
		}
		b, err := hex.DecodeString(*s)
		if err != nil {
			panic(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	// set expects an array of the labels in the server's comma-joined text.
	set = func(s *string) any {
		if s == nil {
			return nil
		}
		a := []any{}
		if *s == "" {
			return a
		}
		for _, l := range strings.Split(*s, ",") {
			a = append(a, l)
		}
		return a
	}
	// geom expects {"srid":N,"wkb":base64} from "SRID:HEX(WKB)".
	geom = func(s *string) any {
		if s == nil {
			return nil
		}
		srid, h, ok := strings.Cut(*s, ":")
		if !ok {
			panic("geometry oracle: want SRID:HEX")
		}
		return &Obj{Keys: []string{"srid", "wkb"}, M: map[string]any{"srid": json.Number(srid), "wkb": hexB64(&h)}}
	}
	float32Of = func(s *string) any {
		if s == nil {
			return nil
		}
		f, err := strconv.ParseFloat(*s, 64)
		if err != nil {
			panic(err)
		}
		return f32(float32(f))
	}
	float64Of = func(s *string) any {
		if s == nil {
			return nil
		}
		f, err := strconv.ParseFloat(*s, 64)
		if err != nil {
			panic(err)
		}
		return f64(f)
	}
)

// Column oracles for the usual forms.
func Num(expr string) Oracle    { return Oracle{expr, num} }
func Str(expr string) Oracle    { return Oracle{expr, str} }
func Bytes(expr string) Oracle  { return Oracle{"HEX(" + expr + ")", hexB64} }
func Set(expr string) Oracle    { return Oracle{expr, set} }
func Enum(expr string) Oracle   { return Oracle{"CONCAT(" + expr + " + 0, ':', " + expr + ")", enum} }
func Float(expr string) Oracle  { return Oracle{"CAST(" + expr + " AS DOUBLE)", float32Of} }
func Double(expr string) Oracle { return Oracle{"CAST(" + expr + " AS DOUBLE)", float64Of} }
func Geom(expr string) Oracle {
	return Oracle{"CONCAT(ST_SRID(" + expr + "), ':', HEX(ST_AsBinary(" + expr + ")))", geom}
}

// Char is the oracle for DECIMAL and temporal columns: CAST(v AS CHAR).
func Char(expr string) Oracle { return Oracle{"CAST(" + expr + " AS CHAR)", str} }

// shortestFloat is the shortest decimal that parses back to f at the
// given width (the README's contract), in encoding/json's notation.
func shortestFloat(f float64, bits int) string {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		s := strconv.FormatFloat(f, 'e', -1, bits)
		// e-07 → e-7, like encoding/json
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// equalJSON compares a decoded JSON value with an expectation.
func equalJSON(got, want any) bool {
	switch w := want.(type) {
	case f32:
		n, ok := got.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 32)
		return err == nil && float32(f) == float32(w) && string(n) == shortestFloat(float64(w), 32)
	case f64:
		n, ok := got.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f == float64(w) && string(n) == shortestFloat(float64(w), 64)
	case *Obj:
		g, ok := got.(*Obj)
		if !ok || !reflect.DeepEqual(g.Keys, w.Keys) {
			return false
		}
		for _, k := range w.Keys {
			if !equalJSON(g.M[k], w.M[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equalJSON(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

// show renders a decoded or expected value for messages.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return string(v)
	case f32:
		return fmt.Sprintf("float32 %s", shortestFloat(float64(v), 32))
	case f64:
		return fmt.Sprintf("float64 %s", shortestFloat(float64(v), 64))
	case *Obj:
		var b strings.Builder
		b.WriteString("{")
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q:%s", k, show(v.M[k]))
		}
		return b.String() + "}"
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, show(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}
