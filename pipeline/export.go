package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
	"github.com/ump-lab/ump/stages/evaluate"
	"github.com/ump-lab/ump/stages/partition"
	"github.com/ump-lab/ump/stages/topology"
	"github.com/ump-lab/ump/stages/train"
)

// Tables that Export builds: the stage output each comes from.
var tableSources = map[string]stages.Output{
	"partition": partition.Histogram,
	"topology":  topology.Mixing,
	"rounds":    train.Rounds,
	"final":     evaluate.Final,
}

// TableNames lists the exportable tables.
func TableNames() []string { return slices.Sorted(maps.Keys(tableSources)) }

// Export builds one table over a manifest's cells: the cell parameter
// columns, then the stage's own columns, cells in order. Cells without the
// table (pending, failed) are left out and listed in skipped. The rounds
// table also gets wall_seconds: cumulative compute time from the
// RoundCompleted events (the one column that differs between runs).
func (s *Store) Export(ctx context.Context, rep *Report, table string) (t *artifacts.Table, skipped []string, err error) {
	src, ok := tableSources[table]
	if !ok {
		return nil, nil, fmt.Errorf("unknown table %q; use one of: %v", table, TableNames())
	}
	out := &artifacts.Table{}
	for i, cell := range rep.Cells {
		c := &rep.Plan.Cells[i]
		st := cell.Stage(src.Stage)
		if st == nil || st.Status != Completed {
			skipped = append(skipped, fmt.Sprintf("cell %d (%s): %s", i+1, c.LabelString(), cell.Status))
			continue
		}
		ref, ok := cell.Output(src)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("cell %d (%s): no %s output", i+1, c.LabelString(), src))
			continue
		}
		data, err := s.Blobs.Get(ctx, ref)
		if err != nil {
			return nil, nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		own, err := artifacts.ReadArrow(data)
		if err != nil {
			return nil, nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		cols := paramColumns(rep.Plan.Hash, c, cell, own.Rows())
		cols = append(cols, own.Columns...)
		if src == train.Rounds {
			cols = append(cols, wallSeconds(st, own.Column("round").Ints))
		}
		if err := appendColumns(out, cols); err != nil {
			return nil, nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
	}
	return out, skipped, nil
}

// paramColumns repeats a cell's parameters over rows, with a column for
// every parameter algorithms.Family declares (numbers as float64, the
// others as strings). Parameters an algorithm does not take are NaN
// (numbers) or empty (strings); batch_size
// is 0 for the quadratic task; lr_schedule is "constant" or the schedule's
// canonical JSON; compression is "none" or the block's canonical JSON.
func paramColumns(hash string, c *manifests.Cell, cell *CellView, rows int) []artifacts.Column {
	cfg := c.Config
	str := func(name, v string) artifacts.Column {
		col := artifacts.Column{Name: name, Strings: make([]string, rows)}
		for r := range col.Strings {
			col.Strings[r] = v
		}
		return col
	}
	integer := func(name string, v int) artifacts.Column {
		col := artifacts.Column{Name: name, Ints: make([]int64, rows)}
		for r := range col.Ints {
			col.Ints[r] = int64(v)
		}
		return col
	}
	float := func(name string, v float64) artifacts.Column {
		col := artifacts.Column{Name: name, Floats: make([]float64, rows)}
		for r := range col.Floats {
			col.Floats[r] = v
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
		str("manifest", hash), integer("cell", c.Index), str("cell_key", cell.Key), str("status", cell.Status),
		str("dataset", cfg.Task.Dataset), str("model", cfg.Task.Model), str("partition", partitionKind),
		float("partition_alpha", partitionAlpha), str("algorithm", cfg.Algorithm.Name), integer("workers", cfg.Workers),
		str("topology", cfg.Topology.Kind), float("lr", cfg.LR), integer("seed", cfg.Seed),
		integer("local_steps", cfg.LocalSteps), integer("rounds", cfg.Rounds),
	}
	for _, p := range algorithms.Family.Params() { // as declared
		if p.Type == kinds.Float || p.Type == kinds.Int {
			cols = append(cols, float(p.Name, param(cfg.Algorithm.Params, p.Name)))
			continue
		}
		given := ""
		if v, ok := cfg.Algorithm.Params[p.Name]; ok {
			given = fmt.Sprint(v) // true, false, paper, ...
		}
		cols = append(cols, str(p.Name, given))
	}
	return append(cols, integer("batch_size", cfg.BatchSize), str("lr_schedule", schedule),
		float("weight_decay", cfg.WeightDecay), str("codec", codec), str("compression", compression))
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
func wallSeconds(st *StageView, rounds []int64) artifacts.Column {
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
		dst.Ints = append(dst.Ints, cols[i].Ints...)
		dst.Floats = append(dst.Floats, cols[i].Floats...)
		dst.Strings = append(dst.Strings, cols[i].Strings...)
	}
	return nil
}

// ParamColumns names the cell parameter columns every exported table
// starts with.
func ParamColumns() []string {
	var names []string
	for _, c := range paramColumns("", &manifests.Cell{}, &CellView{}, 0) {
		names = append(names, c.Name)
	}
	return names
}
