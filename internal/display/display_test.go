package display

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// hostile holds what a collaborator's manifest could carry: a colour
// escape, an OSC 8 hyperlink ended by BEL, a carriage return that rewrites
// the line, a bidi override, and the marks of each output format.
const hostile = "a\x1b[31mred\x1b]8;;http://x\x07link\rb\u202ec | [l](http://x) <b> `c` \\ _%$&#{}^~ α"

func TestEachOutputKeepsTheTextHarmless(t *testing.T) {
	for _, tc := range []struct {
		name      string
		out, want string
	}{
		{"terminal", Terminal(hostile), `a\x1b[31mred\x1b]8;;http://x\alink\rb\u202ec | [l](http://x) <b> ` + "`c`" +
			` \ _%$&#{}^~ α`},
		{"markdown", Markdown(hostile),
			`a\\x1b\[31mred\\x1b\]8;;http://x\\alink\\rb\\u202ec \| \[l\](http://x) \<b\> \` + "`c\\`" +
				` \\ _%$&#{}^~ α`},
		{"latex", LaTeX(hostile),
			`a\textbackslash{}x1b[31mred\textbackslash{}x1b]8;;http://x\textbackslash{}alink` +
				`\textbackslash{}rb\textbackslash{}u202ec | [l](http://x) <b> ` +
				"`c`" + ` \textbackslash{} \_\%\$\&\#\{\}\^{}\~{} $\alpha$`},
		// The GPU engine's name keeps its brackets (issue 72).
		{"engine, terminal", Terminal("gomlx-float32/v4 xla cuda:0 [processId=0]"), "gomlx-float32/v4 xla " +
			"cuda:0 [processId=0]"},
		{"engine, markdown", Markdown("gomlx-float32/v4 xla cuda:0 [processId=0]"),
			`gomlx-float32/v4 xla cuda:0 \[processId=0\]`},
		{"newline, terminal", Terminal("two\nlines"), `two\nlines`},
	} {
		if tc.out != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.out, tc.want)
		}
	}
}

// TestShellWordsReadBackAsGiven hands each word, as Shell writes it, to a
// real shell and reads back what the shell made of it.
func TestShellWordsReadBackAsGiven(t *testing.T) {
	words := []string{
		"plain/path-1.0",
		"two words",
		"it's",
		"$HOME",
		"a;rm -rf x",
		"`id`",
		"",
		"*.go",
		"tab\there",
		"ü",
	}
	cmd := exec.Command("sh", "-c", `for w in `+strings.Join(ShellWords(words), " ")+`; do printf '%s\n' "$w"; done`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, words) {
		t.Errorf("the shell read back %q, want %q", got, words)
	}
	if got := Shell("plain/path-1.0"); got != "plain/path-1.0" {
		t.Errorf("Shell quotes a word the shell takes as it is: %s", got)
	}
}
