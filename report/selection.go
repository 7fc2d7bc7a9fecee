package report

import (
	"math"
	"slices"

	"github.com/ump-lab/ump/internal/rng"
)

// SelectionResamples is how many resamples of the seeds measure how sure
// a choice of the select path is; StableSelection is the share of them
// that must choose it again for the choice to be shown as stable.
const (
	SelectionResamples = 1000
	StableSelection    = 0.9
)

// Selection says how sure a choice of the select path (the learning rate)
// is, for one scope (an entry, or a row's entries under one lr per row).
type Selection struct {
	RunnerUp string // the choice ranked next by the same rule
	// Margin is how much better the choice's mean of the selection
	// figure is than the runner-up's (over the scope's entries); NaN where
	// the runner-up ranks behind for its diverged entries.
	Margin float64
	// Stability is the share of SelectionResamples resamples of the seeds
	// (drawn with replacement, the same draw for every choice) in which
	// the same rule chooses it again; NaN with one seed.
	Stability float64
	// Excluded is a choice whose mean is better but which a diverged seed
	// excluded (the divergence rule decided), and ExcludedMean its mean
	// over the seeds that did not diverge; "" where none.
	Excluded     string
	ExcludedMean float64
}

// Stable reports whether the choice is chosen again in at least
// StableSelection of the resamples (or cannot be measured: one seed).
func (s *Selection) Stable() bool { return !(s.Stability < StableSelection) }

// selectRank orders two choices of one scope: fewer diverged entries
// first, then the better mean of the entries' selection means.
type selectRank struct {
	diverged int
	mean     float64
}

// ahead reports whether a ranks before b (better: "min" or "max").
func (a selectRank) ahead(b selectRank, better string) bool {
	if a.diverged != b.diverged {
		return a.diverged < b.diverged
	}
	if better == "min" {
		return a.mean < b.mean
	}
	return a.mean > b.mean
}

// rankOn is the rank of a choice's entries on the seeds drawn (nil: as
// they are): an entry with a drawn seed that diverged counts as diverged.
func rankOn(es []*Entry, seeds []int) selectRank {
	r := selectRank{mean: math.NaN()}
	var means []float64
	for _, e := range es {
		if seeds == nil {
			if e.Diverged {
				r.diverged++
			} else {
				means = append(means, e.selectMean)
			}
			continue
		}
		var vals []float64
		diverged := false
		for _, s := range seeds {
			v, ok := e.bySeed[s]
			switch {
			case !ok:
			case math.IsNaN(v):
				diverged = true
			default:
				vals = append(vals, v)
			}
		}
		if diverged || len(vals) == 0 {
			r.diverged++
			continue
		}
		means = append(means, StatOf(vals).Mean)
	}
	if len(means) > 0 {
		r.mean = StatOf(means).Mean
	}
	return r
}

// winner is the choice the rule picks on the seeds drawn (the first of
// choices on a tie).
func winner(choices []string, entries func(string) []*Entry, seeds []int, better string) (string, selectRank) {
	best, bestRank := "", selectRank{}
	for i, c := range choices {
		if r := rankOn(entries(c), seeds); i == 0 || r.ahead(bestRank, better) {
			best, bestRank = c, r
		}
	}
	return best, bestRank
}

// selection measures the choice of chosen among choices (each complete,
// at least two), whose entries in the scope entries gives.
func selection(choices []string, chosen string, entries func(string) []*Entry, better string) *Selection {
	_, chosenRank := winner([]string{chosen}, entries, nil, better)
	others := slices.DeleteFunc(slices.Clone(choices), func(c string) bool { return c == chosen })
	runnerUp, runnerRank := winner(others, entries, nil, better)
	s := &Selection{RunnerUp: runnerUp, Margin: math.NaN()}
	if runnerRank.diverged == chosenRank.diverged {
		s.Margin = chosenRank.mean - runnerRank.mean
		if better == "min" {
			s.Margin = -s.Margin
		}
	}
	// the best mean when divergence is set aside
	plain := func(c string) selectRank {
		var means []float64
		for _, e := range entries(c) {
			var vals []float64
			for _, v := range e.bySeed {
				if !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
			if len(vals) > 0 {
				means = append(means, StatOf(vals).Mean)
			}
		}
		r := selectRank{mean: math.NaN()}
		if len(means) > 0 {
			r.mean = StatOf(means).Mean
		}
		return r
	}
	for _, c := range others {
		if r := plain(c); rankOn(entries(c), nil).diverged > chosenRank.diverged && r.ahead(plain(chosen), better) &&
			(s.Excluded == "" || r.ahead(selectRank{mean: s.ExcludedMean}, better)) {
			s.Excluded, s.ExcludedMean = c, r.mean
		}
	}
	var seeds []int
	for _, c := range choices {
		for _, e := range entries(c) {
			for seed := range e.bySeed {
				if !slices.Contains(seeds, seed) {
					seeds = append(seeds, seed)
				}
			}
		}
	}
	slices.Sort(seeds)
	if len(seeds) < 2 {
		s.Stability = math.NaN()
		return s
	}
	r := rng.New(0, "selection")
	drawn := make([]int, len(seeds))
	wins := 0
	for range SelectionResamples {
		for i := range drawn {
			drawn[i] = seeds[r.IntN(len(seeds))]
		}
		if w, _ := winner(choices, entries, drawn, better); w == chosen {
			wins++
		}
	}
	s.Stability = float64(wins) / SelectionResamples
	return s
}

// WithRunnersUp is a copy of the grid whose entries chosen by s show s's
// runner-up instead: what a claim would read had s chosen it.
func (g *Grid) WithRunnersUp(s *Selection) *Grid {
	swapped := *g
	swapped.Entries = make([][]Entry, len(g.Entries))
	for i := range g.Entries {
		swapped.Entries[i] = slices.Clone(g.Entries[i])
		for j, x := range swapped.Entries[i] {
			if x.Selection == s && x.RunnerUpEntry != nil {
				swapped.Entries[i][j] = *x.RunnerUpEntry
			}
		}
	}
	return &swapped
}
