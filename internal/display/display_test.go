package display

import "testing"

// hostile holds what a collaborator's manifest could carry: a colour
// escape, an OSC 8 hyperlink ended by BEL, a carriage return that rewrites
// the line, a bidi override, and the marks of each output format.
const hostile = "a\x1b[31mred\x1b]8;;http://x\x07link\rb\u202ec | [l](http://x) <b> `c` \\ _%$&#{}^~ α"

func TestEachOutputKeepsTheTextHarmless(t *testing.T) {
	for _, tc := range []struct {
		name      string
		out, want string
	}{
		{"terminal", Terminal(hostile), `a\x1b[31mred\x1b]8;;http://x\alink\rb\u202ec | [l](http://x) <b> ` + "`c`" + ` \ _%$&#{}^~ α`},
		{"markdown", Markdown(hostile), `a\\x1b\[31mred\\x1b\]8;;http://x\\alink\\rb\\u202ec \| \[l\](http://x) \<b\> \` + "`c\\`" + ` \\ _%$&#{}^~ α`},
		{"latex", LaTeX(hostile), `a\textbackslash{}x1b[31mred\textbackslash{}x1b]8;;http://x\textbackslash{}alink\textbackslash{}rb\textbackslash{}u202ec | [l](http://x) <b> ` +
			"`c`" + ` \textbackslash{} \_\%\$\&\#\{\}\^{}\~{} $\alpha$`},
		// The GPU engine's name keeps its brackets (issue 72).
		{"engine, terminal", Terminal("gomlx-float32/v4 xla cuda:0 [processId=0]"), "gomlx-float32/v4 xla cuda:0 [processId=0]"},
		{"engine, markdown", Markdown("gomlx-float32/v4 xla cuda:0 [processId=0]"), `gomlx-float32/v4 xla cuda:0 \[processId=0\]`},
		{"newline, terminal", Terminal("two\nlines"), `two\nlines`},
	} {
		if tc.out != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.out, tc.want)
		}
	}
}
