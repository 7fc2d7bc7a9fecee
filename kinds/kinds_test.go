package kinds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestHelpSaysWhatARangeAllows(t *testing.T) {
	for _, c := range []struct {
		p    Param
		want string
	}{
		{Param{Type: Float, Range: "[0, 1)"}, "a number in [0, 1)"},
		{Param{Type: Float, Range: "(0, 1]"}, "a number in (0, 1]"},
		{Param{Type: Float, Range: "[0, inf)"}, "a number >= 0"},
		{Param{Type: Float, Range: "(0, inf)"}, "a number > 0"},
		{Param{Type: Int, Range: "[1, inf)"}, "a positive integer"},
		{Param{Type: Int, Range: "[2, inf)"}, "an integer >= 2"},
		{Param{Type: Bool}, "true or false"},
		{Param{Type: String, Choices: []string{"a", "b"}}, "one of: a, b"},
	} {
		if got := c.p.Help(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

func TestCoerceTypesValues(t *testing.T) {
	f, i := Param{Name: "f", Type: Float}, Param{Name: "i", Type: Int}
	for _, c := range []struct {
		p    Param
		in   any
		want any
	}{
		{f, 2, 2.0}, {f, json.Number("0.5"), 0.5}, {i, 3.0, 3}, {i, json.Number("7"), 7},
		{Param{Type: Bool}, true, true}, {Param{Type: String}, "x", "x"},
	} {
		if got, err := c.p.Coerce(c.in); err != nil || got != c.want {
			t.Errorf("%s %v: %v %v, want %v", c.p.Name, c.in, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		p  Param
		in any
	}{{i, 2.5}, {f, "x"}, {Param{Type: Bool}, 1}, {i, json.Number("1e3")}} {
		if _, err := bad.p.Coerce(bad.in); err == nil {
			t.Errorf("%+v took %v", bad.p, bad.in)
		}
	}
}

func TestFillAndValidate(t *testing.T) {
	k := Kind[struct{}]{Name: "k", Params: []Param{
		{Name: "b", Type: Float, Range: "[0, 1)", Default: 0.9},
		{Name: "m", Type: Float, Range: "[0, 1)", DefaultOf: func(v Values, _ Cell) any { return v.Float("b") }},
		{Name: "r", Type: Int, Range: "[1, inf)", Required: "k needs r"},
		{Name: "s", Type: String, Choices: []string{"x", "y"}, Default: "x"},
	}, Check: func(v Values, c Cell) []Problem {
		if v.Int("r") > c.Workers {
			return []Problem{{Param: "r", Msg: "more than the workers"}}
		}
		return nil
	}}
	v := Values{"b": 0.5, "r": 2}
	k.Fill(v, Cell{})
	if v["m"] != 0.5 || v["s"] != "x" {
		t.Errorf("filled %v: want m = b = 0.5 and s = x", v)
	}
	msgs := func(ps []Problem) (out []string) {
		for _, p := range ps {
			out = append(out, p.Param+": "+p.Msg)
		}
		return out
	}
	if got := msgs(k.Validate(v, Cell{Workers: 4})); len(got) != 0 {
		t.Errorf("valid values: %v", got)
	}
	if got := msgs(k.Validate(v, Cell{Workers: 1})); !slices.Equal(got, []string{"r: more than the workers"}) {
		t.Errorf("the kind's check: %v", got)
	}
	got := msgs(k.Validate(Values{"b": 1.0, "s": "z", "q": 1}, Cell{Workers: 4}))
	want := []string{
		"q: k does not take q; its parameters are: b, m, r, s",
		"b: 1 is out of range; use a number in [0, 1)",
		"r: k needs r",
		`s: "z" is not allowed; use one of: x, y`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q\nwant %q", got, want)
	}
}

func TestDidYouMean(t *testing.T) {
	options := []string{"d-sum", "gt-dsum", "dsgdm", "qg-dsgdm", "slowmo"}
	for word, want := range map[string]string{
		"dsum":    ` (did you mean "d-sum"?)`,
		"gt-dsm":  ` (did you mean "gt-dsum"?)`,
		"slowm0":  ` (did you mean "slowmo"?)`,
		"adam":    "",
		"d-sum":   "", // not misspelt
		"qgdsgdm": ` (did you mean "qg-dsgdm"?)`,
	} {
		if got := DidYouMean(word, options); got != want {
			t.Errorf("DidYouMean(%q) = %q; want %q", word, got, want)
		}
	}
	// Two letters swapped are one edit: a five-letter word allows one.
	if got := DidYouMean("alhpa", []string{"alpha", "beta"}); got != ` (did you mean "alpha"?)` {
		t.Errorf(`DidYouMean("alhpa") = %q; want alpha`, got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"kitten", "sitting", 3}, {"dsum", "d-sum", 1}, {"", "abc", 3}, {"beta", "beta", 0}, {"slowm0", "slowmo", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d; want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestBindPairsEachDeclarationWithItsConstructor: Bind gives each declared
// kind its constructor, keeping the declaration; a declared kind without a
// constructor, or a constructor without a declaration, panics naming it.
func TestBindPairsEachDeclarationWithItsConstructor(t *testing.T) {
	schema := &Schema{Field: "thing", Key: "kind", Kinds: []Kind[struct{}]{
		{Name: "a", Doc: "the first", Params: []Param{{Name: "p", Type: Int, Default: 1}}},
		{Name: "b", Doc: "the second", Uses: []string{"seed"}},
	}}
	f := Bind(schema, map[string]int{"a": 1, "b": 2})
	if len(f.Kinds) != 2 || f.Kinds[0].Name != "a" || f.Kinds[0].New != 1 || f.Kinds[1].New != 2 ||
		f.Kinds[0].Params[0].Name != "p" || f.Kinds[1].Uses[0] != "seed" || f.Field != "thing" || f.Key != "kind" {
		t.Errorf("Bind = %+v", f)
	}
	for name, news := range map[string]map[string]int{`"b" is declared but has no constructor`: {"a": 1},
		`"c" has a constructor but no declaration`: {"a": 1, "b": 2, "c": 3}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), name) {
					t.Errorf("Bind(%v): panic %v; want one saying %s", news, r, name)
				}
			}()
			Bind(schema, news)
		}()
	}
}
