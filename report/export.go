package report

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/record"
	"github.com/ump-lab/ump/state"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/optimizers"
	"github.com/ump-lab/ump/stages"
)

// Tables that Export builds: the stage output each comes from.
var tableSources = map[string]stages.Output{
	"partition": stages.Histogram,
	"topology":  stages.Mixing,
	"rounds":    stages.Rounds,
	"final":     stages.Final,
}

// SummaryTable is the exportable table of a manifest's table entries
// (Summary), not a stage's output.
const SummaryTable = "summary"

// CellTableNames lists the exportable tables built from the cells' stage
// outputs (TableSource).
func CellTableNames() []string { return slices.Sorted(maps.Keys(tableSources)) }

// TableNames lists the exportable tables: the cells' and the summary.
func TableNames() []string {
	return slices.Sorted(slices.Values(append(CellTableNames(), SummaryTable)))
}

// TableSource is the stage output an exportable table comes from.
func TableSource(name string) stages.Output { return tableSources[name] }

// Export builds one table over the cells of one or more manifests: the
// cell parameter columns, then the stage's own columns, cells in plan
// order, manifests in the order given. Cells without the table (pending,
// failed) are left out and listed in skipped. The rounds table also gets
// wall_seconds: cumulative compute time from the RoundCompleted events
// (the one column that differs between runs). The table's metadata names
// the manifests, the engines that computed the cells and this ump.
func Export(
	ctx context.Context,
	s state.Source,
	reps []*state.Report,
	table string,
	incomplete bool,
) (t *artifacts.Table, skipped []string, err error) {
	if table == SummaryTable && !incomplete {
		out, err := Summary(ctx, s, reps)
		return out, nil, err
	}
	src, ok := tableSources[table]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown table %q; use one of: %v", state.ErrBadArgument, table, TableNames())
	}
	if incomplete && src != stages.Rounds {
		return nil, nil, fmt.Errorf(
			"%w: only the rounds table has rows before a cell finishes (not %s)",
			state.ErrBadArgument,
			table,
		)
	}
	out := &artifacts.Table{}
	var hashes []string
	engines := map[string]bool{}
	for _, rep := range reps {
		hashes = append(hashes, rep.Plan.Hash)
		for i, cell := range rep.Cells {
			c := &rep.Plan.Cells[i]
			at := fmt.Sprintf("manifest %.12s cell %d", rep.Plan.Hash, i+1)
			st := cell.Stage(src.Stage)
			var own *artifacts.Table
			switch {
			case st != nil && st.Status != eventlog.Completed && incomplete:
				own = PartialRounds(&c.Config, cell, st)
			case st == nil || st.Status != eventlog.Completed:
				skipped = append(skipped, fmt.Sprintf("%s (%s): %s", at, c.LabelString(), cell.Status))
				continue
			default:
				ref, ok := cell.Output(src)
				if !ok {
					skipped = append(skipped, fmt.Sprintf("%s (%s): no %s output", at, c.LabelString(), src))
					continue
				}
				data, err := s.Blobs.Get(ctx, ref)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", at, err)
				}
				if own, err = artifacts.ReadArrow(data); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", at, err)
				}
			}
			cols := paramColumns(rep.Plan.Hash, c, cell, own.Rows())
			cols = append(cols, notApplicable(own.Columns)...)
			if src == stages.Rounds {
				cols = append(cols, wallSeconds(st, own.Column("round").Ints))
			}
			if err := appendColumns(out, cols); err != nil {
				return nil, nil, fmt.Errorf("%s: %w (export the manifests one at a time)", at, err)
			}
			engines[cell.Engine()] = true
		}
	}
	out.Metadata = map[string]string{"ump.manifests": strings.Join(hashes, ","), "ump.table": table,
		"ump.engines": strings.Join(slices.Sorted(maps.Keys(engines)), "; "), "ump.version": state.Version(),
		"ump.columns": "cell counts from 1 as ump's commands do; null where a parameter does not apply; " +
			"algorithm.lambda is lambda_"}
	return out, skipped, nil
}

// PartialRounds is the rounds table of a cell whose training has not
// finished (running, interrupted or failed): the metrics its events
// reported for each evaluated round so far (a round reported again after
// a resume: the latest report).
func PartialRounds(cfg *manifests.Manifest, cell *state.CellView, st *state.StageView) *artifacts.Table {
	metrics := map[int]map[string]record.Metric{}
	for i := range cell.Events {
		ev := &cell.Events[i]
		if ev.Kind != eventlog.RoundCompleted || ev.StageKey != st.Key {
			continue
		}
		if rep, err := eventlog.PayloadOf[record.RoundReport](ev); err == nil && len(rep.Metrics) > 0 {
			metrics[rep.Round] = rep.Metrics
		}
	}
	rounds := slices.Sorted(maps.Keys(metrics))
	t := &artifacts.Table{}
	for _, name := range stages.Columns(cfg.Task, cfg.Validation != nil) {
		if name == "round" {
			col := artifacts.Column{Name: name, Ints: make([]int64, len(rounds))}
			for r, round := range rounds {
				col.Ints[r] = int64(round)
			}
			t.Columns = append(t.Columns, col)
			continue
		}
		col := artifacts.Column{Name: name, Floats: make([]float64, len(rounds))}
		for r, round := range rounds {
			v, ok := metrics[round][name]
			col.Floats[r] = float64(v)
			if !ok {
				col.Floats[r] = math.NaN()
			}
		}
		t.Columns = append(t.Columns, col)
	}
	return t
}

// notApplicable makes a figure null in a cell where it is NaN in every
// row: one the cell does not have (bits_v for an algorithm without v,
// objective_gap off the quadratic task). A NaN among numbers (a loss that
// diverged) stays NaN.
func notApplicable(cols []artifacts.Column) []artifacts.Column {
	for i := range cols {
		if cols[i].Floats == nil {
			continue
		}
		none := !slices.ContainsFunc(cols[i].Floats, func(v float64) bool { return !math.IsNaN(v) })
		cols[i].Null = make([]bool, len(cols[i].Floats))
		for r := range cols[i].Null {
			cols[i].Null[r] = none
		}
	}
	return cols
}

// columnNames maps the parameters whose names are reserved words in the
// readers notebooks use (DuckDB, Python) to their export column.
var columnNames = map[string]string{"lambda": "lambda_"}

// paramColumns repeats a cell's parameters over rows, with a column for
// every parameter optimizers.Family declares (numbers as float64, flags
// as booleans, the others as strings; columnNames renames). A parameter
// that does not apply to the cell (one its algorithm does not take,
// partition_alpha without a Dirichlet partition, the model and batch size
// of the quadratic task) is null; lr_schedule is "constant" or the
// schedule's canonical JSON; compression is "none" or the block's
// canonical JSON. cell counts from 1.
func paramColumns(hash string, c *manifests.Cell, cell *state.CellView, rows int) []artifacts.Column {
	cfg := c.Config
	nulls := func(null bool) []bool {
		n := make([]bool, rows)
		for r := range n {
			n[r] = null
		}
		return n
	}
	str := func(name, v string) artifacts.Column {
		col := artifacts.Column{Name: name, Strings: make([]string, rows), Null: nulls(v == "")}
		for r := range col.Strings {
			col.Strings[r] = v
		}
		return col
	}
	integer := func(name string, v int, applies bool) artifacts.Column {
		col := artifacts.Column{Name: name, Ints: make([]int64, rows), Null: nulls(!applies)}
		for r := range col.Ints {
			col.Ints[r] = int64(v)
		}
		return col
	}
	float := func(name string, v float64) artifacts.Column {
		col := artifacts.Column{Name: name, Floats: make([]float64, rows), Null: nulls(math.IsNaN(v))}
		for r := range col.Floats {
			col.Floats[r] = v
		}
		return col
	}
	boolean := func(name string, v, applies bool) artifacts.Column {
		col := artifacts.Column{Name: name, Bools: make([]bool, rows), Null: nulls(!applies)}
		for r := range col.Bools {
			col.Bools[r] = v
		}
		return col
	}
	schedule := "constant"
	if sc := cfg.LRSchedule; sc != nil {
		schedule = string(manifests.CanonicalJSON(sc))
	}
	codec, compression := "none", "none"
	if c := cfg.Compression; c != nil {
		codec, compression = c.Codec, string(manifests.CanonicalJSON(c))
	}
	partitionKind, partitionAlpha := "", math.NaN()
	if p := cfg.Partition; p != nil {
		partitionKind, partitionAlpha = p.Kind, param(p.Params, "alpha")
	}
	cols := []artifacts.Column{
		str("manifest", hash), integer("cell", c.Index+1, true), str("cell_key", cell.Key), str("status", cell.Status),
		boolean("diverged", cell.Status == eventlog.Diverged, true),
		str("dataset", cfg.Task.Dataset), str("model", cfg.Task.Model), str("partition", partitionKind),
		float(
			"partition_alpha",
			partitionAlpha,
		), str("algorithm", cfg.Algorithm.Name), integer("workers", cfg.Workers, true),
		str("topology", cfg.Topology.Kind), float("lr", cfg.LR), integer("seed", cfg.Seed, true),
		integer("local_steps", cfg.LocalSteps, true), integer("rounds", cfg.Rounds, true),
	}
	for _, p := range optimizers.Family.Params() { // as declared
		name := p.Name
		if renamed, ok := columnNames[name]; ok {
			name = renamed
		}
		_, applies := cfg.Algorithm.Params[p.Name]
		switch p.Type {
		case kinds.Float, kinds.Int:
			cols = append(cols, float(name, param(cfg.Algorithm.Params, p.Name)))
		case kinds.Bool:
			cols = append(cols, boolean(name, applies && cfg.Algorithm.Params.Bool(p.Name), applies))
		default:
			given := ""
			if applies {
				given = fmt.Sprint(cfg.Algorithm.Params[p.Name]) // paper, step, ...
			}
			cols = append(cols, str(name, given))
		}
	}
	return append(cols, integer("batch_size", cfg.BatchSize, cfg.Task.Kind().Samples), str("lr_schedule", schedule),
		float("weight_decay", cfg.WeightDecay), str("codec", codec), str("compression", compression),
		str("engine", cell.Engine()), str("ump_version", cell.Fingerprint()["ump"]))
}

// param is a numeric parameter, or NaN when the kind does not take it.
func param(v kinds.Values, name string) float64 {
	if _, ok := v[name]; !ok {
		return math.NaN()
	}
	return v.Float(name)
}

// wallSeconds sums, for each round, the seconds reported for every round
// up to it.
func wallSeconds(st *state.StageView, rounds []int64) artifacts.Column {
	secs := st.Seconds
	reported := slices.Sorted(maps.Keys(secs))
	col := artifacts.Column{Name: "wall_seconds", Floats: make([]float64, len(rounds))}
	cum, k := 0.0, 0
	for i, round := range rounds { // ascending
		for ; k < len(reported) && reported[k] <= int(round); k++ {
			cum += secs[reported[k]]
		}
		col.Floats[i] = cum
	}
	return col
}

// appendColumns appends a cell's columns to the table, which must have the
// same columns in the same order (or none yet).
func appendColumns(t *artifacts.Table, cols []artifacts.Column) error {
	if len(t.Columns) == 0 {
		t.Columns = cols
		return nil
	}
	if len(cols) != len(t.Columns) {
		return fmt.Errorf("has %d columns, earlier cells %d", len(cols), len(t.Columns))
	}
	for i := range cols {
		dst := &t.Columns[i]
		if dst.Name != cols[i].Name {
			return fmt.Errorf("column %d is %q, earlier cells have %q", i, cols[i].Name, dst.Name)
		}
		if (dst.Null != nil) != (cols[i].Null != nil) {
			return fmt.Errorf("column %q is nullable here and not in earlier cells", dst.Name)
		}
		dst.Ints = append(dst.Ints, cols[i].Ints...)
		dst.Floats = append(dst.Floats, cols[i].Floats...)
		dst.Strings = append(dst.Strings, cols[i].Strings...)
		dst.Bools = append(dst.Bools, cols[i].Bools...)
		dst.Null = append(dst.Null, cols[i].Null...)
	}
	return nil
}

// ParamColumns names the cell parameter columns every exported table
// starts with.
func ParamColumns() []string {
	var names []string
	for _, c := range paramColumns("", &manifests.Cell{}, &state.CellView{}, 0) {
		names = append(names, c.Name)
	}
	return names
}

// Summary is the table of each manifest's table entries (Grid.Table: the
// row and column labels, mean, std, the 95% interval, the seeds, the
// chosen value of the select path, the status), each row led by its
// manifest's hash and followed by the paper's published entry where
// published.yaml has one (percent, as printed; NaN elsewhere). The
// manifests' layouts must have the same columns.
func Summary(ctx context.Context, s state.Source, reps []*state.Report) (*artifacts.Table, error) {
	pub, err := Paper()
	if err != nil {
		return nil, err
	}
	out := &artifacts.Table{}
	var hashes []string
	engines := map[string]bool{}
	for _, rep := range reps {
		g, err := ReadGrid(ctx, s, rep, Layout(&rep.Plan))
		if err != nil {
			return nil, err
		}
		t := g.Table()
		n := t.Rows()
		paperMean := artifacts.Column{Name: "paper_mean_percent", Floats: make([]float64, n)}
		paperStd := artifacts.Column{Name: "paper_std_percent", Floats: make([]float64, n)}
		for i := range n {
			paperMean.Floats[i], paperStd.Floats[i] = math.NaN(), math.NaN()
		}
		if pt := pub.Table(rep.Plan.Manifest.Name); pt != nil {
			for _, row := range pt.Rows {
				r := g.RowLabeled(row.Row)
				for pcol, label := range pt.Columns {
					c := g.ColumnLabeled(label)
					v, _ := pub.Read(row.Values[pcol]) // checked by published.Parse
					if r < 0 || c < 0 || v.Diverged {
						continue
					}
					i := r*len(g.ColLabels) + c // Grid.Table's order
					paperMean.Floats[i] = v.Mean
					if v.HasStd {
						paperStd.Floats[i] = v.Std
					}
				}
			}
		}
		hashCol := artifacts.Column{Name: "manifest", Strings: slices.Repeat([]string{rep.Plan.Hash}, n)}
		cols := slices.Concat([]artifacts.Column{hashCol}, t.Columns, []artifacts.Column{paperMean, paperStd})
		if err := appendColumns(out, cols); err != nil {
			return nil, fmt.Errorf(
				"manifest %.12s: %w (its table has other rows or columns than the first manifest's: export the "+
					"manifests one at a time)",
				rep.Plan.Hash,
				err,
			)
		}
		hashes = append(hashes, rep.Plan.Hash)
		for _, cell := range rep.Cells {
			if e := cell.Engine(); e != "" {
				engines[e] = true
			}
		}
	}
	out.Metadata = map[string]string{"ump.manifests": strings.Join(hashes, ","), "ump.table": SummaryTable,
		"ump.engines": strings.Join(slices.Sorted(maps.Keys(engines)), "; "), "ump.version": state.Version(),
		"ump.columns": "one row per table entry; std NaN for one seed; ci95 the 95% interval of the mean (Student's " +
			"t up to 5 seeds, bootstrap beyond); paper_* in percent, NaN where the paper has no entry"}
	return out, nil
}

// Paper is the paper's published results and claims
// (manifests/published.yaml), parsed.
func Paper() (*published.Results, error) { return published.Parse(manifests.Published) }
