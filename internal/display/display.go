package display

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Terminal is s with each control character (ESC, BEL, CR, newline, the
// C1 controls, ...) and each invisible formatting character (bidi
// overrides) written as its Go escape, every other character kept.
func Terminal(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markdownSpecial escapes, with a backslash, what would make markup in a
// Markdown table cell: a cell boundary (|), a link or image ([ ]), an
// HTML tag or autolink (< >), a code span (`), and the backslash itself.
var markdownSpecial = strings.NewReplacer(`\`, `\\`, "|", `\|`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`, "`", "\\`")

// Markdown is s as Terminal writes it, escaped for Markdown: it renders as
// the characters it holds and stays in its table cell.
func Markdown(s string) string {
	return markdownSpecial.Replace(Terminal(s))
}

// latexSpecial escapes the characters LaTeX treats specially, and writes
// the Greek letters labels use (non-IID α, momentum β) as math.
var latexSpecial = strings.NewReplacer(
	`\`,
	`\textbackslash{}`,
	"_",
	`\_`,
	"%",
	`\%`,
	"&",
	`\&`,
	"#",
	`\#`,
	"$",
	`\$`,
	"{",
	`\{`,
	"}",
	`\}`,
	"^",
	`\^{}`,
	"~",
	`\~{}`,
	"α",
	`$\alpha$`,
	"β",
	`$\beta$`,
	"γ",
	`$\gamma$`,
	"η",
	`$\eta$`,
	"λ",
	`$\lambda$`,
	"μ",
	`$\mu$`,
)

// LaTeX is s as Terminal writes it (a newline would end a % comment),
// escaped for LaTeX text.
func LaTeX(s string) string {
	return latexSpecial.Replace(Terminal(s))
}

// Shell is s as one shell word: bare when the shell takes each of its
// characters literally, else single-quoted, so that a command printed
// with it runs as printed.
func Shell(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// ShellWords is each of words as Shell writes it.
func ShellWords(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Shell(w)
	}
	return out
}

// AbsolutePaths is args with each that names a file or directory made
// absolute (a hash stays as it is), so that a hint that names them runs
// from any directory.
func AbsolutePaths(args []string) []string {
	out := slices.Clone(args)
	for i, arg := range out {
		if _, err := os.Stat(arg); err == nil {
			if abs, err := filepath.Abs(arg); err == nil {
				out[i] = abs
			}
		}
	}
	return out
}
