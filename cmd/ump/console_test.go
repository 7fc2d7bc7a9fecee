package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProgressBetweenEvaluations: training that evaluates only at its
// last round still prints where it is every few seconds.
func TestProgressBetweenEvaluations(t *testing.T) {
	t.Parallel()
	m := writeFile(t, "quiet.yaml", strings.NewReplacer(
		"rounds: 120",
		"rounds: 500",
		"seed: [1, 2]",
		"seed: [1]",
		"checkpoint: {every: 10}",
		"checkpoint: {every: 500}",
		"evaluate: {every: 3}",
		"evaluate: {every: 500}",
	).Replace(longManifest))
	start := time.Now()
	r := ump(t, t.TempDir(), "run", m)
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	var between []int
	for _, g := range regexp.MustCompile(`train: round (\d+)/500 \(sweep`).FindAllStringSubmatch(r.stderr, -1) {
		n, _ := strconv.Atoi(g[1])
		between = append(between, n)
	}
	// A line at the first round, then one at least every 2 s.
	if want := int(took / (2 * time.Second)); len(between) < max(2, want-1) {
		t.Errorf(
			"a run of %v printed %d progress lines between evaluations (rounds %v); want one every 2 s\n%s",
			took,
			len(between),
			between,
			r.stderr,
		)
	}
}

// TestCellSummariesFitAHundredColumns: the per-cell lines after a run of
// a data-set sweep with long labels stay within 100 columns (the export
// hint below them is a command, as long as its paths make it).
func TestCellSummariesFitAHundredColumns(t *testing.T) {
	t.Parallel()
	m := writeFile(
		t,
		"wide.yaml",
		strings.Replace(
			strings.Replace(
				smallManifest,
				"task: {dataset: quadratic, quadratic: {dim: 30, sigma: 0.5}}",
				"task: {dataset: synthetic, model: logreg}",
				1,
			),
			"sweep:\n",
			"sweep:\n  algorithm: [{name: d-sum, alpha: 2, beta: 0.9}, {name: qg-dsgdm, beta: 0.9, mu: 0.5}]\n  "+
				"partition: [{kind: dirichlet, alpha: 0.1}]\n",
			1,
		),
	)
	r := ump(t, t.TempDir(), "run", m)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	summary, _, _ := strings.Cut(r.stdout, "\ntable (")
	summary, _, _ = strings.Cut(summary, "\n(every figure: ") // a command to paste, whole however long its paths
	for _, line := range strings.Split(summary, "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a %d-column line:\n%s", n, line)
		}
	}
	if !strings.Contains(summary, "test_acc_mean") {
		t.Errorf("the cell lines lack the table's figure:\n%s", summary)
	}
}
