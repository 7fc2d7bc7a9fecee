package house

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Limits on the docs' prose: a sentence over longSentence words is long;
// at most maxLongShare of a page's sentences may be, none in the
// README's first readmeOpening lines, and the README holds at most
// readmeChars characters.
const (
	longSentence  = 40
	maxLongShare  = 0.15
	readmeOpening = 100
	readmeChars   = 15000
)

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	listItem    = regexp.MustCompile(`^\s*(?:[-*]|\d+\.)\s+`)
	// sentenceEnd is a full stop, question or exclamation mark and the
	// space after it, unless it ends an abbreviation.
	sentenceEnd  = regexp.MustCompile(`[.!?]\s+`)
	abbreviation = regexp.MustCompile(`(?:\be\.g|\bi\.e|\betc|\bcf|\bvs|\bFig)\.$`)
)

// sentences are the sentences of a Markdown page's prose: its paragraphs
// and list items, without code blocks, tables, headings or comments.
func sentences(page string) []string {
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, " "))
		}
		cur = nil
	}
	code := false
	for _, line := range strings.Split(htmlComment.ReplaceAllString(page, ""), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			code = !code
			flush()
		case code || trimmed == "" || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#"):
			flush()
		case listItem.MatchString(line):
			flush()
			cur = append(cur, listItem.ReplaceAllString(line, ""))
		default:
			cur = append(cur, trimmed)
		}
	}
	flush()
	var out []string
	for _, b := range blocks {
		start := 0
		for _, m := range sentenceEnd.FindAllStringIndex(b, -1) {
			if abbreviation.MatchString(b[start : m[0]+1]) {
				continue
			}
			out = append(out, b[start:m[0]+1])
			start = m[1]
		}
		if rest := strings.TrimSpace(b[start:]); rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// long are the sentences of over longSentence words.
func long(sentences []string) []string {
	var out []string
	for _, s := range sentences {
		if len(strings.Fields(s)) > longSentence {
			out = append(out, s)
		}
	}
	return out
}

func readPage(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMEIsShortAndPlain: the README holds at most readmeChars
// characters, and no sentence of its first readmeOpening lines is long.
func TestREADMEIsShortAndPlain(t *testing.T) {
	page := readPage(t, "README.md")
	if n := len([]rune(page)); n > readmeChars {
		t.Errorf("README.md holds %d characters, over %d: move detail to a page under docs/", n, readmeChars)
	}
	opening := strings.Join(strings.SplitAfterN(page, "\n", readmeOpening+1)[:readmeOpening], "")
	for _, s := range long(sentences(opening)) {
		t.Errorf("README.md's first %d lines: a sentence of %d words, over %d: %q",
			readmeOpening, len(strings.Fields(s)), longSentence, s)
	}
}

// TestDocsSentencesAreShort: at most maxLongShare of the sentences of each
// page under docs/ are long. Run with -v, it prints every page's share.
func TestDocsSentencesAreShort(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) < 10 {
		t.Fatalf("docs pages: %v (%d found)", err, len(pages))
	}
	for _, path := range pages {
		name := "docs/" + filepath.Base(path)
		all := sentences(readPage(t, name))
		longOnes := long(all)
		share := float64(len(longOnes)) / float64(max(1, len(all)))
		t.Logf("%-30s %3d of %3d sentences over %d words (%.0f%%)",
			name, len(longOnes), len(all), longSentence, 100*share)
		if share > maxLongShare {
			t.Errorf("%s: %d of %d sentences run over %d words (%.0f%%, over %.0f%%); the first: %q",
				name, len(longOnes), len(all), longSentence, 100*share, 100*maxLongShare, longOnes[0])
		}
	}
}

// TestSentencesAreCut: the splitter cuts at full stops but not after an
// abbreviation, and leaves out code, tables, headings and comments.
func TestSentencesAreCut(t *testing.T) {
	page := "# A heading. Not prose.\n\nOne, e.g. this. Two\nlines! Three?\n\n- an item. And more\n" +
		"```\ncode. Not prose.\n```\n| a table. | row. |\n<!-- a comment. -->\n"
	got := sentences(page)
	want := []string{"One, e.g. this.", "Two lines!", "Three?", "an item.", "And more"}
	if !slices.Equal(got, want) {
		t.Errorf("sentences: %q, want %q", got, want)
	}
	words := strings.Repeat("word ", longSentence)
	if n := len(long([]string{words, words + "one more."})); n != 1 {
		t.Errorf("%d long sentences, want 1 (the one of %d words)", n, longSentence+1)
	}
}
