package document

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/report/paper"
	"github.com/ump-lab/ump/report/resultsdir"
)

// Decide decides a claim of ump's own on the results in x: a comparison
// REPRODUCING.md makes beyond the paper's quoted claims, declared in
// YAML as published.yaml declares the paper's (claim: WORDS and one kind).
// It names rows as the tables print them ("D-SUM", "GT-DSUM (momentum
// restarted every step)") and columns by their labels ("0.1"), and is
// decided by the paper's claims' rule (docs/tables.md) on x's results
// alone; a run that departs from the paper manifest's set-up gives a
// provisional verdict, as the paper's claims' are. scope is the select scope the table reads ("" for the
// manifest's first, or "entry", "row" where the manifest declares it).
// The line is what REPRODUCING.md shows.
func Decide(x *resultsdir.Exported, scope string, claim []byte) (string, error) {
	plan := &x.Registration.Plan
	layout := report.Layout(plan)
	if scope != "" {
		if !slices.Contains(layout.SelectPer, scope) {
			return "", fmt.Errorf("manifest %s declares no select scope %q", plan.Manifest.Name, scope)
		}
		layout = layout.Scoped(scope)
	}
	g, err := x.Grid(layout)
	if err != nil {
		return "", err
	}
	pub, err := report.Paper()
	if err != nil {
		return "", err
	}
	t := ours(g, pub.Table(plan.Manifest.Name), plan.Manifest.Name)
	only := &published.Results{Confidence: pub.Confidence, Tables: []published.Table{t}}
	declared, err := only.Declared(t.Manifest, claim)
	if err != nil {
		return "", err
	}
	pc, err := besidePaper(x, declared, &t, g)
	if err != nil {
		return "", err
	}
	v := pc.Claims[0]
	line := v.Claim.Claim + ": " + v.Ours
	if len(pc.Departures) > 0 {
		line += " (provisional: the run departs from the paper's set-up)"
	}
	if len(v.Depends) > 0 {
		line += " (depends on a choice within the noise: " + strings.Join(v.Depends, "; ") + ")"
	}
	return line, nil
}

// ours is the table a claim of ump's own reads: the paper's table for the
// manifest (its names and columns) where there is one, without the
// paper's numbers, and every row of the grid the paper does not have,
// named as the tables print it.
func ours(g *report.Grid, paperTable *published.Table, manifest string) published.Table {
	t := published.Table{Manifest: manifest, Paper: manifest, Drawn: true}
	if paperTable != nil {
		t.Columns = paperTable.Columns
		for _, r := range paperTable.Rows {
			t.Rows = append(t.Rows, published.Row{Row: r.Row, Name: r.Name})
		}
	} else {
		for _, l := range g.ColLabels {
			t.Columns = append(t.Columns, strings.Join(l, " / "))
		}
	}
	for r, l := range g.RowLabels {
		if label := strings.Join(l, " / "); t.RowLabelled(label) < 0 {
			t.Rows = append(t.Rows, published.Row{Row: label, Name: g.RowTitle(r)})
		}
	}
	return t
}

// Claims are the paper's claims on x's table decided on x's results, as
// its paper table's legend prints them (the manifest's first select
// scope); nil where the paper has no table for x's manifest.
func Claims(x *resultsdir.Exported) ([]paper.Verdict, error) {
	plan := &x.Registration.Plan
	pub, err := report.Paper()
	if err != nil {
		return nil, err
	}
	t := pub.Table(plan.Manifest.Name)
	if t == nil {
		return nil, nil
	}
	g, err := x.Grid(report.Layout(plan))
	if err != nil {
		return nil, err
	}
	pc, err := besidePaper(x, pub, t, g)
	if err != nil {
		return nil, err
	}
	return pc.Claims, nil
}

// besidePaper sets grid g of x's results beside the published table t and
// decides p's claims on it, those on convergence on g's curves per round.
func besidePaper(x *resultsdir.Exported, p *published.Results, t *published.Table,
	g *report.Grid) (*paper.PaperComparison, error) {
	curves, err := x.Curves(g, report.CurveOptions{X: "round", Y: g.Spec.Value})
	if err != nil {
		return nil, err
	}
	return paper.ComparePaper(p, &x.Registration.Plan, g, t, curves), nil
}
