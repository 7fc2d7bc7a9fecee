package resultsdir

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/report"
)

// SameCell compares cell i (plan index) of x with cell i of y, a
// recomputation of the same plan: the status, and every figure (the float
// columns that are not parameters, wall_seconds aside) of the final row
// and of each round both evaluated, bit for bit (NaN matches NaN). It
// returns how many rounds it compared, or the first difference.
func (x *Exported) SameCell(i int, y *Exported) (int, error) {
	finals, err := x.Finals()
	if err != nil {
		return 0, err
	}
	again, err := y.Finals()
	if err != nil {
		return 0, err
	}
	if i >= len(again) || again[i].Status == "" {
		return 0, fmt.Errorf("the recomputation did not finish")
	}
	if was, now := finals[i].Status, again[i].Status; was != now {
		return 0, fmt.Errorf("committed %s, recomputed %s", was, now)
	}
	if err := sameFigures("the final row", finals[i].Figures, again[i].Figures); err != nil {
		return 0, err
	}
	committed, err := x.roundFigures(i)
	if err != nil {
		return 0, err
	}
	recomputed, err := y.roundFigures(i)
	if err != nil {
		return 0, err
	}
	compared := 0
	for _, round := range slices.Sorted(maps.Keys(committed)) {
		if now, ok := recomputed[round]; ok {
			if err := sameFigures(fmt.Sprintf("round %d", round), committed[round], now); err != nil {
				return compared, err
			}
			compared++
		}
	}
	return compared, nil
}

// roundFigures is cell i's figures by round in x's rounds export.
func (x *Exported) roundFigures(i int) (map[int64]map[string]float64, error) {
	rows, err := x.cellRows(x.Rounds)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]float64{}
	if len(rows[i]) == 0 {
		return out, nil
	}
	round := x.Rounds.Column("round")
	if round == nil || round.Ints == nil {
		return nil, fmt.Errorf("%s has no integer column round", RoundsFile)
	}
	for _, r := range rows[i] {
		out[round.Ints[r]] = figuresOf(x.Rounds, r)
	}
	return out, nil
}

// figuresOf is row r's figures: its float columns that are not
// parameters, wall_seconds (time, not a result) aside, a null as NaN.
func figuresOf(t *artifacts.Table, r int) map[string]float64 {
	params := report.ParamColumns()
	out := map[string]float64{}
	for _, c := range t.Columns {
		switch {
		case c.Floats == nil || slices.Contains(params, c.Name) || c.Name == "wall_seconds":
		case c.Null != nil && c.Null[r]:
			out[c.Name] = math.NaN()
		default:
			out[c.Name] = c.Floats[r]
		}
	}
	return out
}

// sameFigures names the first figure of where that differs between a
// committed row and its recomputation.
func sameFigures(where string, committed, recomputed map[string]float64) error {
	for _, name := range slices.Sorted(maps.Keys(committed)) {
		was, now := committed[name], recomputed[name]
		if _, ok := recomputed[name]; !ok {
			return fmt.Errorf("%s: %s was committed, and the recomputation has no such figure", where, name)
		}
		if math.Float64bits(was) != math.Float64bits(now) && !(math.IsNaN(was) && math.IsNaN(now)) {
			return fmt.Errorf("%s: %s committed %v, recomputed %v", where, name, was, now)
		}
	}
	return nil
}

// ComputeSeconds is the compute time the rounds record for each cell
// (its last wall_seconds), by cell key: what computing it took where it
// was computed. Cells the rounds say nothing of are left out.
func (x *Exported) ComputeSeconds() (map[string]float64, error) {
	rows, err := x.cellRows(x.Rounds)
	if err != nil {
		return nil, err
	}
	wall := x.Rounds.Column("wall_seconds")
	out := map[string]float64{}
	if wall == nil || wall.Floats == nil {
		return out, nil
	}
	for i, rs := range rows {
		for _, r := range rs {
			if key, s := x.Registration.CellKeys[i], wall.Floats[r]; s > out[key] { // a NaN is not
				out[key] = s
			}
		}
	}
	return out, nil
}
