package sqllex

import "testing"

func TestLex(t *testing.T) {
	toks := Lex("/*!40000 ALTER */ TABLE `d.b`.`x``y` ADD c VARCHAR(3) DEFAULT _utf8mb4'it''s' -- note\n, 1.5e3 # end")
	want := []struct {
		kind Kind
		text string
	}{
		{Word, "ALTER"}, {Word, "TABLE"}, {Quoted, "d.b"}, {Punct, "."}, {Quoted, "x`y"}, {Word, "ADD"}, {Word, "c"},
		{Word, "VARCHAR"}, {Punct, "("}, {Number, "3"}, {Punct, ")"}, {Word, "DEFAULT"}, {String, "it's"}, {Punct, ","}, {Number, "1.5e3"},
	}
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens %+v, want %d", len(toks), toks, len(want))
	}
	for i, w := range want {
		if toks[i].Kind != w.kind || toks[i].Text != w.text {
			t.Errorf("token %d: %+v, want %v %q", i, toks[i], w.kind, w.text)
		}
	}
	if toks[12].Introducer != "_utf8mb4" {
		t.Errorf("introducer %q", toks[12].Introducer)
	}
}

func TestParserName(t *testing.T) {
	p := &Parser{Toks: Lex("`d.b`.`t` x"), DB: "def"}
	n, ok := p.Name()
	if !ok || n.DB != "d.b" || n.Name != "t" {
		t.Fatalf("got %+v %v", n, ok)
	}
	n, ok = p.Name()
	if !ok || n.DB != "def" || n.Name != "x" || !p.Done() {
		t.Fatalf("got %+v %v", n, ok)
	}
}
