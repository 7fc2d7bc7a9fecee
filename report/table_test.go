package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
)

// TestTableNumbers: the table's decimals, scientific notation from 1e6 on.
func TestTableNumbers(t *testing.T) {
	g := &Grid{Spec: manifests.Table{Digits: 4}}
	for v, want := range map[float64]string{0.96831: "0.9683", 999999.5: "999999.5000", 2.3096e35: "2.3096e+35",
		-3.488e7: "-3.4880e+07"} {
		if got := g.number(v); got != want {
			t.Errorf("number(%g) = %q, want %q", v, got, want)
		}
	}
	if got := g.Text(Entry{Mean: 0.5, Std: 0.25, Seeds: 3}, "±"); got != "0.5000 ± 0.2500" {
		t.Errorf("text = %q", got)
	}
}

// TestBestEntryFollowsTheDirection: the best entry over a table's columns
// (status's "best" line) is the largest mean under best: max and the
// smallest under best: min.
func TestBestEntryFollowsTheDirection(t *testing.T) {
	for best, want := range map[string]struct {
		row  string
		mean float64
	}{"max": {"a", 0.9}, "min": {"b", 0.2}} {
		g := &Grid{Spec: manifests.Table{Best: best, Columns: []string{"partition.alpha"}},
			RowLabels: [][]string{{"a"}, {"b"}}, ColLabels: [][]string{{"0.1"}, {"1"}},
			Entries: [][]Entry{
				{{Mean: 0.5, Seeds: 1}, {Mean: 0.9, Seeds: 1}},
				{{Mean: 0.7, Seeds: 1}, {Mean: 0.2, Seeds: 1}},
			}}
		label, e, ok := g.Best()
		if !ok || e.Mean != want.mean || !strings.HasPrefix(label, want.row+", ") {
			t.Errorf("best: %s: %q %v (ok %v); want row %s at %v", best, label, e.Mean, ok, want.row, want.mean)
		}
	}
}

// TestSelectionByValidation: where every cell holds out a validation
// share, lr is chosen by the validation figure's seed mean, not the
// value's; on finals where lr 0.1 wins on the test split and lr 0.2 on
// validation, the manifest with validation picks 0.2 and says so, the
// same manifest without it 0.1.
func TestSelectionByValidation(t *testing.T) {
	src := `version: 1
name: v
task: {dataset: synthetic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
VALIDATION
sweep:
  lr: [0.1, 0.2]
  seed: [1, 2]
`
	for _, c := range []struct {
		validation, want string
	}{{"validation: {fraction: 0.1}", "0.2"}, {"", "0.1"}} {
		plan, err := manifests.Parse("v.yaml", []byte(strings.Replace(src, "VALIDATION", c.validation, 1)))
		if err != nil {
			t.Fatal(err)
		}
		finals := make([]Final, len(plan.Cells))
		for i, cell := range plan.Cells {
			test, val := 0.8, 0.7 // lr 0.1: better on test, worse on validation
			if cell.Config.LR == 0.2 {
				test, val = 0.75, 0.9
			}
			finals[i] = Final{
				Status:  eventlog.Completed,
				Figures: map[string]float64{"test_acc_mean": test, "val_acc_mean": val, "val_loss_mean": 1 - val},
			}
		}
		g, err := NewGrid(plan, Layout(plan), finals)
		if err != nil {
			t.Fatal(err)
		}
		if e := g.Entries[0][0]; e.Select != c.want {
			t.Errorf("%q: lr %s chosen, want %s", c.validation, e.Select, c.want)
		}
		byValidation := strings.Contains(g.Legend(), "by the max mean of val_acc_mean")
		if byValidation != (c.validation != "") {
			t.Errorf("%q: the legend %q does not say which figure chose", c.validation, g.Legend())
		}
	}
}

// TestSelectionByValidationLossWhereLowerIsBetter: a table whose figure
// is best at its minimum (train_loss) tunes by val_loss_mean, not by
// val_acc_mean: here the two disagree.
func TestSelectionByValidationLossWhereLowerIsBetter(t *testing.T) {
	plan, err := manifests.Parse("v.yaml", []byte(`version: 1
name: v
task: {dataset: synthetic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
validation: {fraction: 0.1}
sweep:
  algorithm: [{name: d-sum}]
  lr: [0.1, 0.2]
  seed: [1, 2]
table: {rows: [algorithm], value: train_loss, select: lr}
`))
	if err != nil {
		t.Fatal(err)
	}
	finals := make([]Final, len(plan.Cells))
	for i, cell := range plan.Cells {
		acc, loss := 0.9, 0.2 // lr 0.1: the lower validation loss, the higher accuracy
		if cell.Config.LR == 0.2 {
			acc, loss = 0.7, 0.5
		}
		finals[i] = Final{
			Status:  eventlog.Completed,
			Figures: map[string]float64{"train_loss": 1, "val_acc_mean": acc, "val_loss_mean": loss},
		}
	}
	g, err := NewGrid(plan, Layout(plan), finals)
	if err != nil {
		t.Fatal(err)
	}
	if g.Spec.Best != "min" || g.SelectBy != "val_loss_mean" || g.Entries[0][0].Select != "0.1" {
		t.Errorf(
			"best %s, tuned by %s, lr %s; want min, val_loss_mean, 0.1",
			g.Spec.Best,
			g.SelectBy,
			g.Entries[0][0].Select,
		)
	}
}

// TestSelectionOnSeedsOfItsOwn: with select: {by: lr, seeds: [1, 2]} lr
// is chosen by the mean over seeds 1 and 2 alone, and each entry
// aggregates the other seeds (3 and 4): where lr 0.1 wins on seeds 1-2 and
// lr 0.2 on seeds 3-4, 0.1 is chosen and its entry is seeds 3-4's mean.
func TestSelectionOnSeedsOfItsOwn(t *testing.T) {
	plan, err := manifests.Parse("s.yaml", []byte(`version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  lr: [0.1, 0.2]
  seed: [1, 2, 3, 4]
table: {rows: [algorithm], value: objective_gap, select: {by: lr, seeds: [1, 2]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	finals := make([]Final, len(plan.Cells))
	for i, cell := range plan.Cells {
		gaps := map[float64]map[bool]float64{0.1: {true: 1, false: 5}, 0.2: {true: 2, false: 3}}
		gap := gaps[cell.Config.LR][cell.Config.Seed <= 2]
		gap += float64(cell.Config.Seed) / 100 // a spread over seeds
		finals[i] = Final{Status: eventlog.Completed, Figures: map[string]float64{"objective_gap": gap}}
	}
	g, err := NewGrid(plan, Layout(plan), finals)
	if err != nil {
		t.Fatal(err)
	}
	e := g.Entries[0][0]
	if e.Select != "0.1" || e.Seeds != 2 || math.Abs(e.Mean-5.035) > 1e-12 {
		t.Errorf("entry %+v; want lr 0.1 (best on seeds 1-2), over seeds 3-4 (mean 5.035)", e)
	}
	if !strings.Contains(g.Legend(), "over seeds 1, 2, which the entries leave out") {
		t.Errorf("the legend does not say the tuning seeds: %q", g.Legend())
	}
}

// TestSelectionPerRow: select per row picks, for each row, the one value
// of the select path whose mean over the row's columns is best (a value
// diverged in fewer columns first), though another is best in some column;
// the variant per entry picks each column's best; a row with a value not
// finished is provisional.
func TestSelectionPerRow(t *testing.T) {
	plan, err := manifests.Parse("s.yaml", []byte(`version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: local-sgd-m}]
  topology.kind: [ring, full, star]
  lr: [0.1, 0.2, 0.3]
  seed: [1, 2]
table: {rows: [algorithm], columns: [topology.kind], value: objective_gap, select: {by: lr, per: [row, entry]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Manifest.Table.SelectPer; !slices.Equal(got, []string{"row", "entry"}) {
		t.Fatalf("select.per parsed as %v", got)
	}
	// objective_gap (lower is better) per algorithm, lr and topology: for
	// d-sum, lr 0.2 is best in no column but best on the mean over columns
	// (2 against 0.1's 3; 0.3's 1.25 diverges on the star); for
	// local-sgd-m, lr 0.3 (best elsewhere) has not finished on the ring
	gaps := map[string]map[float64][3]float64{
		"d-sum":       {0.1: {1, 7, 1}, 0.2: {2, 2, 2}, 0.3: {1.5, 1, math.NaN()}},
		"local-sgd-m": {0.1: {4, 4, 4}, 0.2: {3, 5, 3}, 0.3: {0, 0, 0}},
	}
	topo := map[string]int{"ring": 0, "full": 1, "star": 2}
	finals := make([]Final, len(plan.Cells))
	for i, cell := range plan.Cells {
		c := cell.Config
		gap := gaps[c.Algorithm.Name][c.LR][topo[c.Topology.Kind]] + float64(c.Seed)/100
		status := eventlog.Completed
		switch {
		case math.IsNaN(gap):
			status = eventlog.Diverged
		case c.Algorithm.Name == "local-sgd-m" && c.LR == 0.3 && c.Topology.Kind == "ring":
			status = eventlog.Pending
		}
		finals[i] = Final{Status: status, Figures: map[string]float64{"objective_gap": gap}}
	}
	spec := Layout(plan)
	for _, c := range []struct {
		scope       string
		lrs         [2][3]string // per row and column
		provisional [2][3]bool
	}{
		{"row", [2][3]string{{"0.2", "0.2", "0.2"}, {"0.2", "0.2", "0.2"}}, [2][3]bool{{}, {true, true, true}}},
		{"entry", [2][3]string{{"0.1", "0.3", "0.1"}, {"0.2", "0.3", "0.3"}}, [2][3]bool{{}, {true, false, false}}},
	} {
		g, err := NewGrid(plan, spec.Scoped(c.scope), finals)
		if err != nil {
			t.Fatal(err)
		}
		for r := range 2 {
			for col := range 3 {
				e := g.Entries[r][col]
				if e.Select != c.lrs[r][col] || e.Provisional != c.provisional[r][col] || e.Seeds != 2 {
					t.Errorf(
						"per %s, %v at %v: lr %s, provisional %v, %d seeds; want lr %s, provisional %v, 2 seeds",
						c.scope,
						g.RowLabels[r],
						g.ColLabels[col],
						e.Select,
						e.Provisional,
						e.Seeds,
						c.lrs[r][col],
						c.provisional[r][col],
					)
				}
			}
		}
		want := map[string]string{"row": "lr chosen once per row (for all its columns) by the min mean over the " +
			"row's columns of each entry's mean",
			"entry": "lr chosen per entry by the min mean"}[c.scope]
		if !strings.Contains(g.Legend(), want) {
			t.Errorf("per %s: the legend %q does not say %q", c.scope, g.Legend(), want)
		}
	}
}

// The paper manifests name their rows as the paper does (table.labels),
// and every label renames something their tables show: a typo in a key
// would leave an identifier in a table.
func TestPaperManifestsLabelWhatTheirTablesShow(t *testing.T) {
	n := 0
	for _, name := range manifests.Embedded() {
		if !strings.HasPrefix(name, "paper/") {
			continue
		}
		n++
		plan, err := manifests.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		spec := Layout(plan)
		g, err := NewGrid(plan, spec, make([]Final, len(plan.Cells)))
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]bool{}
		for _, p := range slices.Concat(spec.Rows, spec.Columns) {
			shown[p] = true
		}
		for _, l := range slices.Concat(g.RowLabels, g.ColLabels) {
			for _, v := range l {
				shown[v] = true
			}
		}
		for k := range spec.Labels {
			if !shown[k] {
				t.Errorf("%s: label %q names nothing its table shows", name, k)
			}
		}
		for k, p := range spec.Rows {
			if p != "algorithm" && p != "algorithm.name" {
				continue
			}
			for r := range g.RowLabels {
				if v := g.RowLabels[r][k]; spec.Labels[v] == "" {
					t.Errorf("%s: row %q has no paper name in table.labels", name, v)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d paper manifests, want every one of manifests/paper", n)
	}
}

// TestRowIndexTakesWhatATablePrints: a row is named by its label as
// printed, its identifier, either in another case, or a part of either
// that no other row has; a part two rows share names none.
func TestRowIndexTakesWhatATablePrints(t *testing.T) {
	g := &Grid{Spec: manifests.Table{Rows: []string{"algorithm"}, Labels: map[string]string{
		"d-sum(alpha=2,beta=0.9)": "D-SUM", "d-sum(alpha=2,beta=0.9,momentum_restart=step)": "D-SUM (momentum " +
			"restarted every step)",
		"local-sgd-m(beta=0.9,nesterov=false)": "Local SGD w/ momentum"}},
		RowLabels: [][]string{
			{"d-sum(alpha=2,beta=0.9)"},
			{"d-sum(alpha=2,beta=0.9,momentum_restart=step)"},
			{"local-sgd-m(beta=0.9,nesterov=false)"},
		}}
	for name, want := range map[string]int{"D-SUM": 0, "d-sum": 0, "d-sum(alpha=2,beta=0.9)": 0, "D-SUM (momentum " +
		"restarted every step)": 1,
		"momentum_restart": 1, "restarted": 1, "Local SGD w/ momentum": 2, "local sgd": 2, "local-sgd-m": 2, "Local": 2,
		"alpha=2": -1, "momentum": -1, "SlowMo": -1} {
		if got, ok := g.RowIndex(name); got != want || ok != (want >= 0) {
			t.Errorf("RowIndex(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

// TestSelectionSaysHowSureItIs: a choice of lr reports its margin over
// the runner-up, the share of resamples of the seeds that choose it again
// (against the exact probability, enumerated here over every draw), and
// a better lr that a diverged seed excluded; an unstable choice is marked
// in the table.
func TestSelectionSaysHowSureItIs(t *testing.T) {
	plan, err := manifests.Parse("s.yaml", []byte(`version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  lr: [0.1, 0.2, 0.3]
  seed: [1, 2, 3]
table: {rows: [algorithm], value: objective_gap, select: lr}
`))
	if err != nil {
		t.Fatal(err)
	}
	grid := func(gaps map[float64][3]float64) *Grid {
		finals := make([]Final, len(plan.Cells))
		for i, cell := range plan.Cells {
			gap := gaps[cell.Config.LR][cell.Config.Seed-1]
			status := eventlog.Completed
			if math.IsNaN(gap) {
				status = eventlog.Diverged
			}
			finals[i] = Final{Status: status, Figures: map[string]float64{"objective_gap": gap}}
		}
		g, err := NewGrid(plan, Layout(plan), finals)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// Lower is better. lr 0.1 (mean 2) beats 0.2 (2.2) by 0.2; 0.3 has the
	// best mean (0.5) but seed 2 diverged there.
	gaps := map[float64][3]float64{0.1: {1, 1, 4}, 0.2: {2.2, 2.2, 2.2}, 0.3: {0.5, math.NaN(), 0.5}}
	g := grid(gaps)
	e := g.Entries[0][0]
	s := e.Selection
	if e.Select != "0.1" || s == nil || s.RunnerUp != "0.2" || math.Abs(s.Margin-0.2) > 1e-12 || s.Excluded != "0.3" ||
		s.ExcludedMean != 0.5 {
		t.Fatalf("lr %s, selection %+v; want 0.1 over 0.2 by 0.2, 0.3 excluded at 0.5", e.Select, s)
	}
	// The exact probability that a draw of 3 seeds (with replacement)
	// chooses 0.1 again: 0.3 must see seed 2, and 0.1's mean stay below 2.2.
	wins, draws := 0, 0
	for a := 1; a <= 3; a++ {
		for b := 1; b <= 3; b++ {
			for c := 1; c <= 3; c++ {
				draws++
				seeds := []int{a, b, c}
				var sum float64
				for _, sd := range seeds {
					sum += gaps[0.1][sd-1]
				}
				if slices.Contains(seeds, 2) && sum/3 < 2.2 {
					wins++
				}
			}
		}
	}
	exact := float64(wins) / float64(draws)
	if math.Abs(s.Stability-exact) > 0.05 || s.Stable() {
		t.Errorf(
			"chosen again in %v of resamples; the exact share is %v (%d of %d draws), not stable",
			s.Stability,
			exact,
			wins,
			draws,
		)
	}
	md := g.Markdown()
	for _, want := range []string{"(lr=0.1; 0.2 within noise)", "lr=0.1 over 0.2 by 0.2", "(within noise); 0.3 " +
		"has the better mean (0.5", "but a diverged seed excludes it"} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q:\n%s", want, md)
		}
	}
	// The same entries under other lrs, the excluded one first: the same
	// draws choose the same entry again (a drawn diverged seed ranks its
	// choice behind, wherever it stands in the order).
	mirrored := grid(map[float64][3]float64{
		0.1: {0.5, math.NaN(), 0.5}, 0.2: {1, 1, 4}, 0.3: {2.2, 2.2, 2.2},
	}).Entries[0][0]
	if mirrored.Select != "0.2" || mirrored.Selection.Stability != s.Stability {
		t.Errorf(
			"with the diverged lr first: lr %s chosen again in %v of resamples; want 0.2 in %v, as before",
			mirrored.Select,
			mirrored.Selection.Stability,
			s.Stability,
		)
	}
	steady := grid(map[float64][3]float64{0.1: {1, 1.1, 0.9}, 0.2: {2.2, 2.2, 2.2}, 0.3: {3, 3, 3}})
	if s := steady.Entries[0][0].Selection; s.Stability != 1 || !s.Stable() || s.Excluded != "" ||
		strings.Contains(steady.Markdown(), "within noise") {
		t.Errorf("a choice every draw makes: %+v\n%s", s, steady.Markdown())
	}
}

// TestCheckTableRefusesWhatCannotBeLaidOut: a select path that is also a
// row or column path and two rows that print alike are refused before
// anything runs; the same layout without them passes.
func TestCheckTableRefusesWhatCannotBeLaidOut(t *testing.T) {
	const base = `version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: local-sgd-m}]
  lr: [0.1, 0.2]
`
	for table, want := range map[string]string{
		"{rows: [algorithm], value: objective_gap, select: lr}": "",
		"{rows: [algorithm], columns: [lr], value: objective_gap, select: {by: lr}}": "table.select: lr is " +
			"also a row or column path",
		"{rows: [algorithm], value: objective_gap, select: lr, labels: {\"d-sum(alpha=2,beta=0.9)\": A, " +
			"\"local-sgd-m(beta=0.9,nesterov=false)\": A}}": `both print as "A"`,
		"{rows: [algorithm], value: objective_gap, select: lr, labels: {objective_gap: gap, lr: rate, " +
			"\"d-sum(alpha=2,beta=0.9)\": D-SUM}}": "",
	} {
		plan, err := manifests.Parse("s.yaml", []byte(base+"table: "+table+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		err = CheckTable(plan, Layout(plan))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: refused: %v", table, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error saying %q", table, err, want)
		}
	}
}

// TestCheckLabelsRefusesALabelNamingNothing: a label whose key is no row
// or column value, swept path or figure of the table is refused, naming
// it; one naming a row of the manifest before an override narrowed its
// sweep is taken; every embedded manifest's labels name something.
func TestCheckLabelsRefusesALabelNamingNothing(t *testing.T) {
	const m = `version: 1
name: s
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: local-sgd-m}]
  topology.kind: [ring, full]
  lr: [0.1, 0.2]
table: {rows: [algorithm], columns: [topology.kind], value: objective_gap, select: lr, labels: LABELS}
`
	parse := func(labels string, overrides ...string) *manifests.Plan {
		plan, err := manifests.Parse("s.yaml", []byte(strings.Replace(m, "LABELS", labels, 1)), overrides...)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	for labels, want := range map[string]string{
		`{"d-sum(alpha=2,beta=0.9)": D-SUM, full: mesh, topology.kind: graph, objective_gap: gap, lr: rate, round: ` +
			`t}`: "",
		`{d-sum: D-SUM}`:  `"d-sum" names no row or column value, swept path or figure`,
		`{mesh: mesh}`:    `"mesh" names no row`,
		`{test_acc: acc}`: `"test_acc" names no row`,
	} {
		plan := parse(labels)
		err := CheckLabels(Layout(plan), plan)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("labels %s: %v; want %q", labels, err, want)
		}
	}
	labels := `{"local-sgd-m(beta=0.9,nesterov=false)": Local SGD}`
	narrowed := parse(labels, "sweep.algorithm=[{name: d-sum}]")
	if err := CheckLabels(Layout(narrowed), narrowed); err == nil {
		t.Error("a label of a row the override removed passes against the narrowed plan alone")
	}
	if err := CheckLabels(Layout(narrowed), narrowed, parse(labels)); err != nil {
		t.Errorf("a label of a row the override removed, checked with the manifest's file: %v", err)
	}
	for _, name := range manifests.Embedded() {
		plan, err := manifests.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckLabels(Layout(plan), plan); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestTablesKeepLabelsInTheirCells: a row label from a manifest holding a
// terminal escape, a cell boundary, a link and LaTeX specials is printed
// harmless in each format: in Markdown it stays one cell of its row and
// makes no link, in LaTeX its specials are escaped and no newline ends a
// comment, and no control character reaches either.
func TestTablesKeepLabelsInTheirCells(t *testing.T) {
	label := "D-SUM\x1b]0;pwned\x07 | [x](http://e) 50%_&\nnext"
	g := &Grid{
		Spec: manifests.Table{
			Rows:   []string{"algorithm"},
			Value:  "test_acc_mean",
			Best:   "max",
			Digits: 2,
			Labels: map[string]string{"d-sum": label},
		},
		RowLabels: [][]string{{"d-sum"}, {"dpsgd"}},
		ColLabels: [][]string{{}},
		Baseline:  []string{label},
		Entries:   [][]Entry{{{Mean: 0.9, Std: 0.01, Seeds: 2}}, {{Mean: 0.8, Std: 0.02, Seeds: 2}}},
	}
	md := g.Markdown()
	wantRow := `| D-SUM\\x1b\]0;pwned\\a \| \[x\](http://e) 50%_&\\nnext | **0.90 ± 0.01** |`
	if !strings.Contains(md, wantRow+"\n") {
		t.Errorf("Markdown lacks the row %s:\n%s", wantRow, md)
	}
	if !strings.Contains(md, `the difference of the means to D-SUM\\x1b\]0;pwned\\a \| \[x\]`) {
		t.Errorf("Markdown's legend names the baseline unescaped:\n%s", md)
	}
	tex := g.LaTeX()
	if want := `D-SUM\textbackslash{}x1b]0;pwned\textbackslash{}a | [x](http://e) 50\%\_\&\textbackslash{}nnext & ` +
		`\textbf{0.90 $\pm$ 0.01} \\`; !strings.Contains(
		tex,
		want+"\n",
	) {
		t.Errorf("LaTeX lacks the row %s:\n%s", want, tex)
	}
	for _, line := range strings.Split(tex, "\n") {
		if strings.HasPrefix(line, "next") {
			t.Errorf("a newline in a label ended a LaTeX comment:\n%s", tex)
		}
	}
	if strings.ContainsAny(md+tex, "\x1b\x07\r") {
		t.Error("a control character reached a table")
	}
}

// TestAddedSeedsJoinTheirEntry: cells a manifest adds beyond its sweep
// (manifests' add block) count among their entry's seeds, and only there.
func TestAddedSeedsJoinTheirEntry(t *testing.T) {
	plan, err := manifests.Parse("a.yaml", []byte(`version: 1
name: a
task: {dataset: quadratic}
rounds: 2
lr: 0.1
algorithm: {name: d-sum}
sweep: {lr: [0.1, 0.2], seed: [1, 2]}
add:
  - {lr: 0.1, seed: 3}
table: {rows: [lr], value: objective_gap}
`))
	if err != nil {
		t.Fatal(err)
	}
	finals := make([]Final, len(plan.Cells))
	for i, c := range plan.Cells {
		finals[i] = Final{
			Status:  eventlog.Completed,
			Figures: map[string]float64{"objective_gap": float64(c.Config.Seed)},
		}
	}
	g, err := NewGrid(plan, Layout(plan), finals)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []struct {
		seeds int
		mean  float64
	}{{3, 2}, {2, 1.5}} {
		if e := g.Entries[r][0]; e.Seeds != want.seeds || e.Mean != want.mean {
			t.Errorf("row %s: %d seeds, mean %v; want %d, %v", g.RowTitle(r), e.Seeds, e.Mean, want.seeds, want.mean)
		}
	}
	if want := "the entries aggregate 2 to 3 seeds (cells added beyond the sweep"; !strings.Contains(g.Legend(), want) {
		t.Errorf("the legend does not say %q: %s", want, g.Legend())
	}
}
