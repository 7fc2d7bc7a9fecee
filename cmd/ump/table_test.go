package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
)

const tableManifest = `version: 1
name: quad-table
task: {dataset: quadratic, quadratic: {dim: 10, sigma: 0.3}}
workers: 6
rounds: 15
local_steps: 2
lr: 0.05
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: d-sum, alpha: 0}]
  seed: [1, 2, 3]
  lr: [0.02, 0.05, 5]
  topology.kind: [ring, full]
table: {rows: [algorithm], columns: [topology.kind], value: objective_gap, select: lr}
`

// TestTableAggregatesSeedsAndTunesLR checks every entry of ump table
// against the per-cell final export: the best lr's mean ± sample std over
// seeds, diverged learning rates never chosen.
func TestTableAggregatesSeedsAndTunesLR(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", tableManifest)
	run := ump(t, store, "run", m)
	hash := hashOf(t, run)
	md := ump(t, store, "table", hash[:8])
	if md.code != 0 {
		t.Fatalf("table: %d %s", md.code, md.stderr)
	}
	final, err := csv.NewReader(strings.NewReader(exportCSV(t, store, hash, "final"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range final[0] {
		col[name] = i
	}
	// Recompute every entry from the cells.
	type key struct{ alg, topo, lr string }
	vals := map[key][]float64{}
	for _, row := range final[1:] {
		if row[col["status"]] != "completed" {
			continue // lr 5 diverges
		}
		alg := fmt.Sprintf("d-sum(alpha=%s,beta=%s)", row[col["alpha"]], row[col["beta"]])
		v, _ := strconv.ParseFloat(row[col["objective_gap"]], 64)
		k := key{alg, row[col["topology"]], row[col["lr"]]}
		vals[k] = append(vals[k], v)
	}
	for _, alg := range []string{"d-sum(alpha=2,beta=0.9)", "d-sum(alpha=0,beta=0.9)"} {
		for column, topo := range []string{"ring", "full"} { // the header's order, checked below
			bestLR, bestMean, bestStd := "", math.Inf(1), 0.0
			for _, lr := range []string{"0.02", "0.05", "5"} {
				v := vals[key{alg, topo, lr}]
				if len(v) != 3 {
					continue
				}
				mean, std := meanStd3(v)
				if mean < bestMean {
					bestLR, bestMean, bestStd = lr, mean, std
				}
			}
			want := fmt.Sprintf("%.4f ± %.4f", bestMean, bestStd)
			entry := ""
			for _, l := range strings.Split(md.stdout, "\n") {
				if cells := strings.Split(l, "|"); strings.HasPrefix(l, "| "+alg+" |") && len(cells) > column+2 {
					entry = cells[column+2] // cells[0] is before the first |, cells[1] the row label
				}
			}
			if !strings.Contains(entry, want) ||
				!strings.Contains(entry, "(lr="+bestLR+")") && !strings.Contains(entry, "(lr="+bestLR+"; ") {
				t.Errorf(
					"%s on %s: want %s (lr=%s) in its column, got %q in\n%s",
					alg,
					topo,
					want,
					bestLR,
					entry,
					md.stdout,
				)
			}
		}
	}
	// --select-per row: one lr per row, the best mean over the row's
	// columns of the entries' means.
	row := ump(t, store, "table", "--select-per", "row", hash[:8])
	if row.code != 0 || !strings.Contains(row.stdout, "lr chosen once per row") {
		t.Errorf("table --select-per row: exit %d\n%s%s", row.code, row.stdout, row.stderr)
	}
	for _, alg := range []string{"d-sum(alpha=2,beta=0.9)", "d-sum(alpha=0,beta=0.9)"} {
		bestLR, best := "", math.Inf(1)
		for _, lr := range []string{"0.02", "0.05", "5"} {
			ring, full := vals[key{alg, "ring", lr}], vals[key{alg, "full", lr}]
			if len(ring) != 3 || len(full) != 3 {
				continue
			}
			mr, _ := meanStd3(ring)
			mf, _ := meanStd3(full)
			if (mr+mf)/2 < best {
				bestLR, best = lr, (mr+mf)/2
			}
		}
		for _, topo := range []string{"ring", "full"} {
			mean, std := meanStd3(vals[key{alg, topo, bestLR}])
			if want := fmt.Sprintf("%.4f ± %.4f (lr=%s)", mean, std, bestLR); !strings.Contains(
				strings.ReplaceAll(row.stdout, "**", ""),
				want,
			) {
				t.Errorf("table --select-per row: want %q for %s on %s in\n%s", want, alg, topo, row.stdout)
			}
		}
	}
	if r := ump(t, store, "table", "--select-per", "column", hash[:8]); r.code != 2 ||
		!strings.Contains(r.stderr, "--select-per \"column\": use entry") {
		t.Errorf("table --select-per column: exit %d, %q; want exit 2", r.code, r.stderr)
	}
	if !strings.Contains(md.stdout, "| algorithm | topology.kind=ring | topology.kind=full |") ||
		!strings.Contains(md.stdout, "**") {
		t.Errorf("header or bold best missing:\n%s", md.stdout)
	}
	tex := ump(t, store, "table", "--latex", hash[:8])
	for _, want := range []string{`\toprule`, `\midrule`, `\bottomrule`, `\textbf{`, `$\pm$`} {
		if !strings.Contains(tex.stdout, want) {
			t.Errorf("LaTeX lacks %s:\n%s", want, tex.stdout)
		}
	}

	// --value shows and tunes by another column: consensus_distance, lower
	// is better, against the per-cell export.
	cd := ump(t, store, "table", "--value", "consensus_distance", hash[:8])
	if cd.code != 0 || !strings.Contains(cd.stdout, "consensus_distance of the final round") ||
		!strings.Contains(cd.stdout, "best: min") {
		t.Errorf("table --value consensus_distance: exit %d\n%s%s", cd.code, cd.stdout, cd.stderr)
	}
	byLR, bestCD := map[string][]float64{}, 0.0 // d-sum(alpha=2) on the ring
	for _, row := range final[1:] {
		if row[col["status"]] == "completed" && row[col["topology"]] == "ring" && row[col["alpha"]] == "2" {
			v, _ := strconv.ParseFloat(row[col["consensus_distance"]], 64)
			byLR[row[col["lr"]]] = append(byLR[row[col["lr"]]], v)
		}
	}
	want := ""
	for lr, v := range byLR {
		mean, std := meanStd3(v)
		if entry := fmt.Sprintf("%.4f ± %.4f (lr=%s)", mean, std, lr); want == "" || mean < bestCD {
			want, bestCD = entry, mean
		}
	}
	if !strings.Contains(cd.stdout, want) {
		t.Errorf(
			"table --value consensus_distance: want %q for d-sum(alpha=2,beta=0.9) on the ring in\n%s",
			want,
			cd.stdout,
		)
	}
	if r := ump(t, store, "table", "--value", "nope", hash[:8]); r.code != 2 ||
		!strings.Contains(r.stderr, "--value nope") ||
		!strings.Contains(r.stderr, "its columns are") {
		t.Errorf("table --value nope: exit %d %q", r.code, r.stderr)
	}

	// table.also shows consensus_distance beside objective_gap, at the lr
	// objective_gap chose, in Markdown and as CSV columns.
	also := writeFile(
		t,
		"also.yaml",
		strings.Replace(tableManifest, "value: objective_gap,", "value: objective_gap, also: [consensus_distance],", 1),
	)
	ah := hashOf(t, ump(t, store, "run", also))
	am := ump(t, store, "table", ah[:8])
	line := ""
	for _, l := range strings.Split(md.stdout, "\n") {
		if strings.HasPrefix(l, "| d-sum(alpha=2,beta=0.9) |") {
			line = l
		}
	}
	for column, topo := range []string{"ring", "full"} {
		chosen := strings.TrimSuffix(strings.Split(strings.Split(line, "|")[column+2], "(lr=")[1], ") ")
		var cdv []float64
		for _, row := range final[1:] {
			if row[col["topology"]] == topo && row[col["alpha"]] == "2" && row[col["lr"]] == chosen {
				x, _ := strconv.ParseFloat(row[col["consensus_distance"]], 64)
				cdv = append(cdv, x)
			}
		}
		mean, std := meanStd3(cdv)
		if want := fmt.Sprintf(" / %.4f ± %.4f", mean, std); !strings.Contains(am.stdout, want) {
			t.Errorf(
				"table with also: want %q (consensus_distance at lr %s on %s) in\n%s",
				want,
				chosen,
				topo,
				am.stdout,
			)
		}
	}
	if !strings.Contains(am.stdout, "objective_gap / consensus_distance of the final round") {
		t.Errorf("table with also: legend\n%s", am.stdout)
	}
	if r := ump(t, store, "table", "--csv", ah[:8]); !strings.Contains(
		strings.Split(r.stdout, "\n")[0],
		"consensus_distance_mean,consensus_distance_std",
	) {
		t.Errorf("table --csv with also: header %q", strings.Split(r.stdout, "\n")[0])
	}

	// Only a diverging lr: every entry is *.
	diverging := writeFile(t, "d.yaml", strings.Replace(tableManifest, "lr: [0.02, 0.05, 5]", "lr: [1000]", 1))
	dh := hashOf(t, ump(t, store, "run", diverging))
	if r := ump(t, store, "table", dh[:8]); strings.Count(r.stdout, "| * ") != 4 {
		t.Errorf("all-diverged table:\n%s", r.stdout)
	}
	// A swept path the table does not place is an error naming it, before
	// anything runs (TestATableThatCannotBeLaidOutIsRefusedBeforeTraining
	// has the store that holds one).
	unplaced := writeFile(t, "u.yaml", strings.Replace(tableManifest, "columns: [topology.kind], ", "", 1))
	if r := ump(t, store, "run", unplaced); r.code != 2 ||
		!strings.Contains(r.stderr, "the sweep varies topology.kind") {
		t.Errorf("unplaced sweep path: exit %d %s", r.code, r.stderr)
	}
}

// meanStd3 is the mean and sample std of three seeds' values, written out
// independently of the table's own arithmetic.
func meanStd3(v []float64) (mean, std float64) {
	mean = (v[0] + v[1] + v[2]) / 3
	return mean, math.Sqrt(((v[0]-mean)*(v[0]-mean) + (v[1]-mean)*(v[1]-mean) + (v[2]-mean)*(v[2]-mean)) / 2)
}

// TestTableFiguresAreCheckedBeforeResults: a value no final table has is
// bad input before any cell has finished (`ump table --value`) and before
// anything runs (`ump run` of a manifest whose table.value or table.also
// names one), with the columns there are.
func TestTableFiguresAreCheckedBeforeResults(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest), "--until", "topology"))
	if r := ump(t, store, "table", hash, "--value", "nosuchcol"); r.code != 2 ||
		!strings.Contains(
			r.stderr,
			`"nosuchcol" is not a figure of the final table; its columns are: train_loss, consensus_distance, `+
				`objective_gap`,
		) {
		t.Errorf("table --value nosuchcol before any result: exit %d %q; want 2 naming the columns", r.code, r.stderr)
	}
	before := ump(t, store, "status").stdout
	for _, block := range []string{"table: {rows: [algorithm], value: test_acc}\n", "table: {rows: [algorithm], " +
		"value: objective_gap, also: [gap]}\n"} {
		m := writeFile(t, "bad.yaml", strings.Replace(smallManifest, "sweep:\n", block+"sweep:\n", 1))
		if r := ump(t, store, "run", m); r.code != 2 || !strings.Contains(r.stderr, "bad.yaml: bad argument: table.") ||
			!strings.Contains(r.stderr, "is not a figure of the final table") {
			t.Errorf("run with %s: exit %d %q; want 2 naming the field", strings.TrimSpace(block), r.code, r.stderr)
		}
	}
	if after := ump(t, store, "status").stdout; after != before {
		t.Errorf("a refused manifest was registered: status was\n%s\nand is\n%s", before, after)
	}
}

// TestTablePaperSetsOursBesideThePaper runs two seeds of one entry of
// paper/table1-mnist (D-SUM, non-IID 0.1, one lr, 2 rounds) and checks
// `ump table --paper`: the paper's entry as printed, ours recomputed from
// the final export with its difference, the entries not run, and the
// claims; CSV carries the same numbers; a manifest the paper has no table
// for is refused (exit 2).
func TestTablePaperSetsOursBesideThePaper(t *testing.T) {
	t.Parallel()
	if info, _ := datasets.Lookup("mnist"); !info.Installed(datasets.DefaultDir()) {
		t.Skipf("mnist is not installed in %s (run `ump data fetch mnist`; .ci/run installs it)", datasets.DefaultDir())
	}
	store := t.TempDir()
	run := ump(
		t,
		store,
		"run",
		"paper/table1-mnist",
		"rounds=2",
		"evaluate.every=2",
		"workers=4",
		"local_steps=2",
		"sweep.algorithm=[{name: d-sum, alpha: 2, beta: 0.9}]",
		"sweep.partition.alpha=[0.1]",
		"sweep.lr=[0.1]",
		"sweep.seed=[1, 2]",
	)
	if run.code != 0 {
		t.Fatalf("run: %d %s", run.code, run.stderr)
	}
	hash := hashOf(t, run)
	md := ump(t, store, "table", hash[:8], "--paper")
	if md.code != 0 {
		t.Fatalf("table --paper: %d %s", md.code, md.stderr)
	}
	final, err := csv.NewReader(strings.NewReader(exportCSV(t, store, hash, "final"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var accs []float64
	for _, row := range final[1:] {
		v, _ := strconv.ParseFloat(row[slices.Index(final[0], "test_acc_mean")], 64)
		accs = append(accs, 100*v)
	}
	if len(accs) != 2 {
		t.Fatalf("the final export has %d cells, want 2", len(accs))
	}
	mean := (accs[0] + accs[1]) / 2
	want := fmt.Sprintf("· 97.89 ± 0.21 · %+.2f ·", mean-97.89)
	row := ""
	for _, l := range strings.Split(md.stdout, "\n") {
		if strings.HasPrefix(l, "| D-SUM |") {
			row = l
		}
	}
	if cells := strings.Split(row, " | "); len(cells) != 4 ||
		!strings.Contains(cells[1], fmt.Sprintf("%.2f ± ", mean)) ||
		!strings.Contains(cells[1], want) ||
		cells[2] != "– · 98.77 ± 0.04" {
		t.Errorf(
			"the D-SUM row is %q; want ours %.2f beside %q, and – beside the paper's non-IID 1 (98.77 ± 0.04)",
			row,
			mean,
			want,
		)
	}
	for _, s := range []string{"| Local SGD w/ momentum | – · 95.66 ± 0.21 |", "Kendall's tau-b",
		"- GT-DSUM more accurate than D-SUM where the data are skewed " +
			"(line 109: \"GT-DSUM performs better than D-SUM on model " +
			"generalization across training tasks suffering from data skewness\"; reading: at non-IID 0.1, the most " +
			"skewed degree): ours not run"} {
		if !strings.Contains(md.stdout, s) {
			t.Errorf("table --paper lacks %q:\n%s", s, md.stdout)
		}
	}
	out := ump(t, store, "table", hash[:8], "--paper", "--csv")
	rows, err := csv.NewReader(strings.NewReader(out.stdout)).ReadAll()
	if err != nil || out.code != 0 {
		t.Fatalf("table --paper --csv: %d %v %s", out.code, err, out.stderr)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	found := false
	for _, r := range rows[1:] {
		if r[col("paper_name")] == "D-SUM" && r[col("partition.alpha")] == "0.1" {
			found = true
			got, _ := strconv.ParseFloat(r[col("test_acc_mean_mean_percent")], 64)
			diff, _ := strconv.ParseFloat(r[col("difference")], 64)
			if math.Abs(got-mean) > 1e-9 || math.Abs(diff-(mean-97.89)) > 1e-9 ||
				r[col("paper_printed")] != "97.89 ± 0.21" {
				t.Errorf("CSV row %v: want mean %v, difference %v, the paper's 97.89 ± 0.21", r, mean, mean-97.89)
			}
		}
	}
	if !found {
		t.Errorf("CSV has no D-SUM row at 0.1:\n%s", out.stdout)
	}
	sum := ump(t, store, "export", "--manifest", hash, "--table", "summary", "--out", "-")
	summary, err := csv.NewReader(strings.NewReader(sum.stdout)).ReadAll()
	if err != nil || len(summary) != 2 {
		t.Fatalf("export --table summary: %d rows (%v), want a header and the one entry run", len(summary), err)
	}
	scol := func(name string) int { return slices.Index(summary[0], name) }
	for _, r := range summary[1:] {
		if r[scol("algorithm")] != "d-sum(alpha=2,beta=0.9)" || r[scol("partition.alpha")] != "0.1" {
			t.Errorf("summary row %v: want D-SUM at non-IID 0.1", r)
			continue
		}
		m, _ := strconv.ParseFloat(r[scol("test_acc_mean_mean")], 64)
		lo, _ := strconv.ParseFloat(r[scol("test_acc_mean_ci95_low")], 64)
		sd, _ := strconv.ParseFloat(r[scol("test_acc_mean_std")], 64)
		half := 12.706204736174698 * sd / math.Sqrt(2) // t(0.975, 1 df)
		if math.Abs(100*m-mean) > 1e-9 || math.Abs(lo-(m-half)) > 1e-9 || r[scol("paper_mean_percent")] != "97.89" ||
			r[scol("paper_std_percent")] != "0.21" ||
			r[scol("manifest")] != hash ||
			r[scol("seeds")] != "2" ||
			r[scol("selected_lr")] != "0.1" {
			t.Errorf("summary row %v: want mean %v, interval low %v, the paper's 97.89 ± 0.21", r, mean/100, m-half)
		}
	}
	quad := ump(t, store, "run", writeFile(t, "m.yaml", tableManifest))
	if bad := ump(t, store, "table", hashOf(t, quad)[:8], "--paper"); bad.code != 2 ||
		!strings.Contains(bad.stderr, "the paper publishes no table for manifest \"quad-table\"") {
		t.Errorf("table --paper of a manifest the paper has no table for: exit %d, %s", bad.code, bad.stderr)
	}
}

// TestTableIntervalsAndComparison checks `ump table --ci --compare ROW`
// against the per-cell final export: each entry's 95% interval is the
// mean ∓ t(0.975, 2) · std / √3 of its three seeds at the chosen lr, and
// each row's difference to the baseline and probability of improvement
// (pairs of seeds won, lower objective_gap better) are the export's; an
// unknown row is refused (exit 2).
func TestTableIntervalsAndComparison(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", tableManifest)))
	const base = "d-sum(alpha=0,beta=0.9)"
	out := ump(t, store, "table", hash[:8], "--csv", "--ci", "--compare", "alpha=0")
	rows, err := csv.NewReader(strings.NewReader(out.stdout)).ReadAll()
	if err != nil || out.code != 0 {
		t.Fatalf("table --csv --ci --compare: %d %v %s", out.code, err, out.stderr)
	}
	final, err := csv.NewReader(strings.NewReader(exportCSV(t, store, hash, "final"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seeds := func(alg, topo, lr string) []float64 {
		var v []float64
		for _, r := range final[1:] {
			if fmt.Sprintf(
				"d-sum(alpha=%s,beta=%s)",
				r[slices.Index(final[0], "alpha")],
				r[slices.Index(final[0], "beta")],
			) == alg &&
				r[slices.Index(final[0], "topology")] == topo &&
				r[slices.Index(final[0], "lr")] == lr {
				x, _ := strconv.ParseFloat(r[slices.Index(final[0], "objective_gap")], 64)
				v = append(v, x)
			}
		}
		return v
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	num := func(r []string, name string) float64 { x, _ := strconv.ParseFloat(r[col(name)], 64); return x }
	chosen := map[string][]float64{} // "alg topo": the chosen lr's seeds
	for _, r := range rows[1:] {
		chosen[r[col("algorithm")]+" "+r[col("topology.kind")]] = seeds(
			r[col("algorithm")],
			r[col("topology.kind")],
			r[col("selected_lr")],
		)
	}
	for _, r := range rows[1:] {
		v := chosen[r[col("algorithm")]+" "+r[col("topology.kind")]]
		mean, std := meanStd3(v)
		half := 4.302652729911275 * std / math.Sqrt(3)
		if math.Abs(num(r, "objective_gap_ci95_low")-(mean-half)) > 1e-12 ||
			math.Abs(num(r, "objective_gap_ci95_high")-(mean+half)) > 1e-12 {
			t.Errorf(
				"%v: interval [%s, %s], want %v ∓ %v",
				r,
				r[col("objective_gap_ci95_low")],
				r[col("objective_gap_ci95_high")],
				mean,
				half,
			)
		}
		b := chosen[base+" "+r[col("topology.kind")]]
		if r[col("algorithm")] == base {
			if r[col("objective_gap_difference")] != "NaN" {
				t.Errorf("the baseline's own row has a difference: %v", r)
			}
			continue
		}
		bmean, _ := meanStd3(b)
		var won float64
		for _, x := range v {
			for _, y := range b {
				if x < y {
					won++
				} else if x == y {
					won += 0.5
				}
			}
		}
		if math.Abs(num(r, "objective_gap_difference")-(mean-bmean)) > 1e-12 ||
			math.Abs(num(r, "p_improvement")-won/9) > 1e-12 ||
			!(num(r, "welch_p") > 0 && num(r, "welch_p") <= 1) {
			t.Errorf("%v: want difference %v, P(improvement) %v, a p-value in (0, 1]", r, mean-bmean, won/9)
		}
	}
	md := ump(t, store, "table", hash[:8], "--ci", "--compare", "alpha=0")
	if !strings.Contains(md.stdout, "95% interval of the mean") || !strings.Contains(md.stdout, "P(better)") {
		t.Errorf("table --ci --compare:\n%s", md.stdout)
	}
	if bad := ump(t, store, "table", hash[:8], "--compare", "d-sum"); bad.code != 2 ||
		!strings.Contains(bad.stderr, "name one row") {
		t.Errorf("--compare naming two rows: exit %d %s", bad.code, bad.stderr)
	}
}

// TestExportsMarkDivergedCells: the final and rounds exports carry a
// diverged column, true exactly for the cells whose status is diverged
// (the lr 5 cells of tableManifest), so that a notebook does not mistake
// their last figures for results.
func TestExportsMarkDivergedCells(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", tableManifest)))
	for _, table := range []string{"final", "rounds"} {
		out := ump(t, store, "export", "--manifest", hash, "--table", table, "--out", "-")
		rows, err := csv.NewReader(strings.NewReader(out.stdout)).ReadAll()
		if err != nil || out.code != 0 {
			t.Fatalf("export %s: %d %v %s", table, out.code, err, out.stderr)
		}
		status, diverged := slices.Index(rows[0], "status"), slices.Index(rows[0], "diverged")
		if diverged < 0 {
			t.Fatalf("export %s has no diverged column: %v", table, rows[0])
		}
		count := 0
		for _, r := range rows[1:] {
			if want := strconv.FormatBool(r[status] == "diverged"); r[diverged] != want {
				t.Errorf("export %s: status %s, diverged %s", table, r[status], r[diverged])
			}
			if r[diverged] == "true" {
				count++
			}
		}
		if count == 0 {
			t.Errorf("export %s: no cell marked diverged (lr 5 diverges)", table)
		}
	}
}
