package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ump-lab/ump/report/document"
	"github.com/ump-lab/ump/report/paper"
	"github.com/ump-lab/ump/report/resultsdir"
)

// decimal is a number with a decimal point (1.4e-7 too), or a version
// (1.2.3).
var decimal = regexp.MustCompile(`\d+(?:\.\d+)+(?:e-?\d+)?|\d+e-?\d+`)

// setting is what precedes a decimal that names a setting rather than a
// result: a learning rate (lr 0.01, lr ≤ 0.002) or its exponent (10^-1.5),
// a non-IID degree (non-IID 0.1) or a parameter's value (β = 0.9, lambda =
// 0.8, gamma = 0.5).
var setting = regexp.MustCompile(`(?:10\^-?|lr ?[=≤≥<>]? ?|non-IID |(?:[βλαK]|alpha|beta|lambda|gamma) ?[=≤≥<>] ?)$`)

// resultsDir is a committed results directory named in the prose.
var resultsDir = regexp.MustCompile(`results/(?:[\w.-]+/)?[\w.-]+-[0-9a-f]{12}`)

// codeSpan is a code block or span of Markdown, whose figures are not cited.
var codeSpan = regexp.MustCompile("(?s)```.*?```|`[^`]*`")

// rowName is the name of an algorithm (a table row) in the prose.
var rowName = regexp.MustCompile(`Local\s+SGD|QG-DSGDm|SlowMo|GT-DSUM|D-SUM`)

// TestReproducingProseCitesItsResults: in every section of REPRODUCING.md
// that shows committed results (a report or compare block, or a results
// directory it names), each figure the prose cites is one the results
// show: it stands in one of the section's blocks, or in the tables of a
// results directory the section names, on a line of the row the prose
// cites it for, or in its column where a table's columns are algorithms
// (the last algorithm named before it in its paragraph or list item). A figure of points
// (98.58) may stand as the fraction the tables show (0.9858). What the
// prose derives (a gap between two entries, an lr no table chose) is not
// shown, so it is cited through the entries that are. A section without
// results cites only figures that a block of the document or the paper
// shows; a derivation the reader can redo stands in a code span.
func TestReproducingProseCitesItsResults(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	tablesOf := map[string]string{}
	named := func(dir string) string { // the tables ump report writes for a directory the prose names
		if tables, ok := tablesOf[dir]; ok {
			return tables
		}
		x, err := resultsdir.ReadExportedFinals(filepath.Join(root, dir))
		if err != nil {
			return "" // a directory no longer committed, named as history
		}
		_, tables, err := document.Tables(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range slices.Sorted(maps.Keys(tables)) {
			tablesOf[dir] += tables[kind]
		}
		return tablesOf[dir]
	}
	var everyBlock string
	for _, block := range []*regexp.Regexp{reportBlock, compareBlock, claimBlock} {
		everyBlock += strings.Join(block.FindAllString(string(data), -1), "\n")
	}
	tex := paperSource(t)
	checked := 0
	for _, section := range regexp.MustCompile(`(?m)^##+ `).Split(string(data), -1) {
		title, _, _ := strings.Cut(section, "\n")
		var shown []string
		prose := section
		for _, block := range []*regexp.Regexp{reportBlock, compareBlock, claimBlock} {
			for _, b := range block.FindAllString(section, -1) {
				shown = append(shown, b)
				prose = strings.Replace(prose, b, "", 1)
			}
		}
		for _, dir := range resultsDir.FindAllString(section, -1) {
			if tables := named(dir); tables != "" {
				shown = append(shown, tables)
			}
		}
		prose = codeSpan.ReplaceAllString(prose, "")
		if len(shown) == 0 {
			// No results here: a figure stands in the paper, or in a
			// block of the document that shows it.
			for _, m := range decimal.FindAllStringIndex(prose, -1) {
				n := prose[m[0]:m[1]]
				if !cited(prose, m[0], m[1]) || setting.MatchString(prose[max(0, m[0]-12):m[0]]) {
					continue
				}
				checked++
				if !strings.Contains(everyBlock, n) && (tex == "" || !strings.Contains(tex, n)) {
					context := strings.TrimSpace(prose[max(0, m[0]-60):min(len(prose), m[1]+20)])
					t.Errorf("REPRODUCING.md, %q: the prose cites %s (%q), "+
						"which neither a block of the document nor the paper shows", title, n, context)
				}
			}
			continue
		}
		lines := strings.Split(strings.Join(shown, "\n"), "\n")
		for _, m := range decimal.FindAllStringIndex(prose, -1) {
			n := prose[m[0]:m[1]]
			if !cited(prose, m[0], m[1]) || setting.MatchString(prose[max(0, m[0]-12):m[0]]) {
				continue
			}
			checked++
			forms := []string{regexp.QuoteMeta(n)}
			if v, err := strconv.ParseFloat(n, 64); err == nil && len(n)-strings.Index(n, ".") == 3 {
				forms = append(forms, regexp.QuoteMeta(fmt.Sprintf("%.4f", v/100)))
			}
			number := regexp.MustCompile(`(?:^|[^\d.])(?:` + strings.Join(forms, "|") + `)(?:$|[^\d])`)
			row := rowBefore(prose, m[0])
			if !shows(lines, number, row) {
				t.Errorf(
					"REPRODUCING.md, %q: the prose cites %s for %q (%q), which no table of its results shows on a "+
						"line of that row",
					title,
					n,
					row,
					strings.TrimSpace(prose[max(0, m[0]-60):min(len(prose), m[1]+20)]),
				)
			}
		}
	}
	t.Logf("%d figures checked", checked)
	if checked < 100 {
		t.Errorf("only %d figures checked: the sections or the pattern changed", checked)
	}
}

// cited reports whether the decimal at prose[i:j] is a figure the prose
// cites: not a version, nor part of a word or hash, nor a setting
// written as one (lr=0.01).
func cited(prose string, i, j int) bool {
	before, _ := utf8.DecodeLastRuneInString(prose[:i])
	after, _ := utf8.DecodeRuneInString(prose[j:])
	return strings.Count(prose[i:j], ".") == 1 && !unicode.IsLetter(before) && !unicode.IsDigit(before) &&
		!strings.ContainsRune("._=", before) && !unicode.IsLetter(after) && after != '_'
}

// shows reports whether the tables' lines show a figure for an algorithm:
// on a line of its row, or in its column of a table whose columns are
// algorithms (compression-mnist's: a row per codec).
func shows(lines []string, number *regexp.Regexp, row string) bool {
	key := rowKey(row)
	var header []string
	for i, l := range lines {
		if strings.Contains(rowKey(l), key) && number.MatchString(l) {
			return true
		}
		if !strings.HasPrefix(l, "|") {
			header = nil
			continue
		}
		cells := strings.Split(l, "|")
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---") {
			header = cells
			continue
		}
		for j, c := range cells {
			if row != "" && j < len(header) && strings.Contains(rowKey(header[j]), key) && number.MatchString(c) {
				return true
			}
		}
	}
	return false
}

// rowKey is a row's name as a table without labels spells it too: lower
// case, words joined by hyphens (Local SGD: local-sgd-m(...), GT-DSUM:
// gt-dsum / displacement / step).
func rowKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "-")) }

// rowBefore is the last algorithm the prose names before i in the same
// paragraph or list item, whose figure a number there is; "" where none
// is (any line of the tables may show it).
func rowBefore(prose string, i int) string {
	start := max(strings.LastIndex(prose[:i], "\n\n"), strings.LastIndex(prose[:i], "\n- "), 0)
	names := rowName.FindAllString(prose[start:i], -1)
	if len(names) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(names[len(names)-1]), " ")
}

// paperSource is the paper's LaTeX source where a folder beside the
// repository holds it (paper/ump-paper.tex), as CI's does, or "" (the
// checks that need it are left out, and the test says so).
func paperSource(t *testing.T) string {
	found, _ := filepath.Glob(filepath.Join("..", "..", "..", "*", "paper", "ump-paper.tex"))
	if len(found) == 0 {
		t.Log("the paper's LaTeX source is not beside the repository: " +
			"figures and quotations are not checked against it")
		return ""
	}
	tex, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(tex)
}

// quotation is a span of the prose in double quotes.
var quotation = regexp.MustCompile(`"([^"]+)"|“([^”]+)”`)

// TestReproducingQuotesVerbatim: every quotation in REPRODUCING.md's
// prose is verbatim: the paper's words as they print (an ellipsis … may
// stand for words left out), or what a block of the document shows.
// A paraphrase is not set in quotation marks.
func TestReproducingQuotesVerbatim(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "REPRODUCING.md"))
	if err != nil {
		t.Fatal(err)
	}
	tex := paperSource(t)
	if tex == "" {
		t.Skip("the paper's LaTeX source is not beside the repository " +
			"(no ../*/paper/ump-paper.tex; .ci/run installs it)")
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	printed := words(paper.PlainLaTeX(tex))
	prose, shown := string(data), ""
	for _, block := range []*regexp.Regexp{reportBlock, compareBlock, claimBlock} {
		for _, b := range block.FindAllString(prose, -1) {
			shown += words(b) + "\n"
			prose = strings.Replace(prose, b, "", 1)
		}
	}
	prose = codeSpan.ReplaceAllString(prose, "")
	quotes := 0
	for _, m := range quotation.FindAllStringSubmatch(prose, -1) {
		q := words(m[1] + m[2])
		quotes++
		for _, part := range strings.Split(q, "…") {
			part = strings.TrimSpace(part)
			if part != "" && !strings.Contains(printed, part) && !strings.Contains(shown, part) {
				t.Errorf("REPRODUCING.md quotes %q, which is not verbatim in the paper "+
					"nor in a block of the document: quote the words as they print, or drop the quotation marks", q)
				break
			}
		}
	}
	if quotes < 10 {
		t.Errorf("only %d quotations found: the pattern changed", quotes)
	}
}
