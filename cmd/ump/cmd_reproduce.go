package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ump-lab/ump/fleet"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/pipeline"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/floats"
)

func reproduceCommand() *cli.Command {
	return &cli.Command{
		Name:      "reproduce",
		Usage:     "compute every manifest of a tree of results directories again in the store (resumable), then compare each cell with its committed figures bit for bit",
		ArgsUsage: "[DIR ...]",
		Description: "Finds every results directory (one `ump report` wrote) under each DIR (default: results), runs\n" +
			"its manifest in the store as `ump run` would, cached cells skipped and interrupted training\n" +
			"resumed, with one progress line and an ETA over all of them; then compares each finished cell\n" +
			"with the directory's: its status, final row and every evaluated round, bit for bit. A directory\n" +
			"whose cells have other keys on this machine (computed under another engine, or other data) is\n" +
			"named and left out. Exit 4 where a cell differs; rerun the same command to resume.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "run `N` cells at once, as ump run -j does; results are bit-identical to one at a time"},
		},
		Action: func(c *cli.Context) error {
			if c.Int("jobs") < 1 {
				return badInput{fmt.Errorf("--jobs %d: use a number of cells >= 1", c.Int("jobs"))}
			}
			roots := c.Args().Slice()
			if len(roots) == 0 {
				roots = []string{"results"}
			}
			return runReproduce(c.Context, globalsOf(c), roots, c.Int("jobs"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

// A reproduction is one results directory and the plan it holds.
type reproduction struct {
	dir  string
	x    *resultsdir.Exported
	plan *manifests.Plan
	// other says why the directory is left out (its cells have other
	// keys here); "" when it is computed again.
	other string
	// cached counts its cells that the store held whole before this run.
	cached int
}

func runReproduce(ctx context.Context, g globals, roots []string, jobs int, stdout, stderr io.Writer) error {
	dirs, err := resultsDirs(roots)
	if err != nil {
		return err
	}
	// The rerun hint names the roots absolute, so that it runs from any directory.
	rerun := fmt.Sprintf("%s reproduce -j %d %s", g.ump, jobs, strings.Join(quotedEach(absolutePaths(roots)), " "))
	store, err := pipeline.Open(g.store, "ump reproduce")
	if err != nil {
		return err
	}
	defer store.Close()
	if store.Note != "" {
		fmt.Fprintln(stderr, g.hinted(store.Note))
	}
	runner := g.runner(store, nil) // the one line below instead of every cell's
	runner.Jobs = jobs
	all, err := planReproductions(ctx, g, runner, dirs)
	if err != nil {
		return err
	}
	var todo []*reproduction
	recorded := map[string]float64{} // by cell key: a cell shared by directories is computed once
	for _, r := range all {
		if r.other == "" {
			todo = append(todo, r)
			seconds, err := r.x.ComputeSeconds()
			if err != nil {
				return err
			}
			maps.Copy(recorded, seconds)
		}
	}
	if len(todo) == 0 {
		compareReproductions(ctx, g.ump, store, all, stdout) // says why each is left out
		return badInput{fmt.Errorf("no results directory under %s can be computed again on this machine (%d left out, named above)", strings.Join(roots, ", "), len(all))}
	}
	line := newReproduceLine(stderr, todo)
	fmt.Fprintf(stderr, "reproduce: directories to compute again in %s: %d (%d distinct cells, whose rounds record %.1f hours of compute where they ran); left out: %d (named at the end)\n",
		g.store, len(todo), line.cells, floats.Sum(slices.Collect(maps.Values(recorded)))/3600, len(all)-len(todo))
	for k, r := range todo {
		runner.Overrides, runner.Counted = r.x.Registration.Overrides, line.count
		line.directory(k, r)
		out, err := runner.Run(ctx, r.plan)
		r.cached = out.Cached
		if err != nil {
			line.end()
			if errors.Is(err, pipeline.ErrInterrupted) {
				fmt.Fprintf(stderr, "stopped at a safe point; rerun `%s` to resume\n", rerun)
			}
			return fmt.Errorf("%s: %w", r.dir, err)
		}
	}
	line.end()
	return compareReproductions(ctx, g.ump, store, all, stdout)
}

// resultsDirs are the results directories under roots (each one, or a
// tree holding them), sorted.
func resultsDirs(roots []string) ([]string, error) {
	var dirs []string
	for _, root := range roots {
		if _, err := os.Stat(root); err != nil {
			return nil, badInput{fmt.Errorf("%s: no such directory (give directories that hold results `ump report` wrote)", root)}
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && resultsdir.IsExported(path) {
				dirs = append(dirs, path)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if len(dirs) == 0 {
		return nil, badInput{fmt.Errorf("%s holds no results directory (one with the %s that `ump report` writes)", strings.Join(roots, ", "), resultsdir.RegistrationFile)}
	}
	return dirs, nil
}

// planReproductions reads every directory and says which of them this
// machine computes under the keys they record.
func planReproductions(ctx context.Context, g globals, runner *pipeline.Runner, dirs []string) ([]*reproduction, error) {
	var all []*reproduction
	for _, dir := range dirs {
		x, err := resultsdir.ReadExportedFinals(dir)
		if err != nil {
			return nil, err
		}
		r := &reproduction{dir: dir, x: x, plan: &x.Registration.Plan}
		all = append(all, r)
		if err := gpuBuilt(r.plan, g.device); err != nil {
			r.other = "its cells train on the GPU engine, which this build lacks"
			continue
		}
		keys, err := runner.Keys(ctx, r.plan)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		differ := 0
		for i, key := range keys {
			if key != x.Registration.CellKeys[i] {
				differ++
			}
		}
		if differ > 0 {
			engine, _ := runner.Engines.Name(&r.plan.Cells[0].Config)
			r.other = fmt.Sprintf("%d of its %d cells have other keys here: they were computed under engine %s (or other data), and this machine computes with %s",
				differ, len(keys), display.Terminal(x.Engines()), engine)
		}
	}
	return all, nil
}

// compareReproductions compares every finished cell of each directory
// computed again with its recomputation in the store, and prints what
// it found per directory; ump is how ump was run, for the hint that sets
// the two side by side.
func compareReproductions(ctx context.Context, ump string, store *pipeline.Store, all []*reproduction, w io.Writer) error {
	differ, left := 0, 0
	for _, r := range all {
		name := fmt.Sprintf("%s (%s, %.12s)", r.dir, display.Terminal(r.plan.Manifest.Name), r.plan.Hash)
		if r.other != "" {
			left++
			fmt.Fprintf(w, "%s: left out: %s\n", name, r.other)
			continue
		}
		rep, err := store.Source().FindReport(r.plan.Hash)
		if err != nil {
			return err
		}
		y, err := resultsdir.ExportOf(ctx, store.Source(), rep)
		if err != nil {
			return err
		}
		finals, err := r.x.Finals()
		if err != nil {
			return err
		}
		same, rounds, bad := 0, 0, 0
		for i, f := range finals {
			if f.Status == "" {
				continue
			}
			n, err := r.x.SameCell(i, y)
			if err != nil {
				bad++
				fmt.Fprintf(w, "%s: cell %d %s DIFFERS: %v\n", name, i+1, r.plan.Cells[i].LabelString(), err)
				continue
			}
			same++
			rounds += n
		}
		if bad > 0 {
			differ++
			fmt.Fprintf(w, "%s: %d of %d finished cells differ (`%s compare %.12s %s` sets the two side by side)\n",
				name, bad, bad+same, ump, r.plan.Hash, fleet.ShellQuote(absolutePaths([]string{r.dir})[0]))
			continue
		}
		fmt.Fprintf(w, "%s: %d finished cells identical bit for bit (status, final row and %d evaluated rounds); %d of its %d cells computed in this run, %d found in the store\n",
			name, same, rounds, len(r.plan.Cells)-r.cached, len(r.plan.Cells), r.cached)
	}
	fmt.Fprintf(w, "directories computed again: %d (%d identical, %d differ); left out: %d\n", len(all)-left, len(all)-left-differ, differ, left)
	if differ > 0 {
		return fmt.Errorf("%w: directories computed again that differ from their committed figures: %d of %d", fleet.ErrNondeterministic, differ, len(all)-left)
	}
	return nil
}

// reproduceLine is the one progress line of a reproduction: on a
// terminal rewritten in place, elsewhere printed once a minute. Its
// share and ETA weigh each cell's rounds by what a round computes
// (cellWork), over the distinct cells of every directory computed again.
type reproduceLine struct {
	mu        sync.Mutex
	w         io.Writer
	terminal  bool
	dirs      int
	k         int         // the directory running, from 0
	name      string      // its name
	work      [][]float64 // per directory and cell: its work (cellWork x rounds), 0 where an earlier directory has the cell
	cells     int         // the distinct cells (by key) of every directory
	total     float64
	done, ran float64 // the work accounted for, and of it the work computed here
	began     time.Time
	last      time.Time
	every     time.Duration
}

func newReproduceLine(w io.Writer, todo []*reproduction) *reproduceLine {
	l := &reproduceLine{w: w, dirs: len(todo), began: time.Now(), every: time.Minute}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			l.terminal, l.every = true, time.Second
		}
	}
	seen := map[string]bool{}
	for _, r := range todo {
		work := make([]float64, len(r.plan.Cells))
		for i, key := range r.x.Registration.CellKeys {
			if !seen[key] {
				cfg := &r.plan.Cells[i].Config
				work[i] = float64(cfg.Rounds) * cellWork(cfg)
				l.total += work[i]
			}
			seen[key] = true
		}
		l.work = append(l.work, work)
	}
	l.cells = len(seen)
	return l
}

// cellWork is what one round of a cell computes, in local steps of one
// sample (a task without samples counts a step as one).
func cellWork(cfg *manifests.Manifest) float64 {
	work := float64(cfg.Workers * cfg.LocalSteps)
	if cfg.Task.Kind().Samples {
		work *= float64(cfg.BatchSize)
	}
	return work
}

func (l *reproduceLine) directory(k int, r *reproduction) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.k, l.name = k, fmt.Sprintf("%s (%d cells)", r.dir, len(r.plan.Cells))
	l.print()
}

// count is Runner.Counted.
func (l *reproduceLine) count(c *manifests.Cell, rounds int, computed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	work := l.work[l.k][c.Index] * float64(rounds) / float64(c.Config.Rounds)
	l.done += work
	if computed {
		l.ran += work
	}
	if time.Since(l.last) >= l.every {
		l.print()
	}
}

func (l *reproduceLine) print() {
	l.last = time.Now()
	eta := "ETA after the first rounds"
	switch {
	case l.done >= l.total:
		eta = "took " + time.Since(l.began).Round(time.Second).String()
	case l.ran > 0:
		left := time.Duration(float64(time.Since(l.began)) * (l.total - l.done) / l.ran)
		eta = "ETA " + left.Round(time.Second).String()
	}
	share := 100.0
	if l.total > 0 {
		share = 100 * l.done / l.total
	}
	text := fmt.Sprintf("reproduce: directory %d of %d, %s; %.1f%% of the work, %s", l.k+1, l.dirs, l.name, share, eta)
	if l.terminal {
		fmt.Fprintf(l.w, "\r%s\033[K", text)
		return
	}
	fmt.Fprintln(l.w, text)
}

// end prints the line a last time, finished or not.
func (l *reproduceLine) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.print()
	if l.terminal {
		fmt.Fprintln(l.w)
	}
}
