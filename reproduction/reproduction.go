package reproduction

import (
	"context"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/ump-lab/ump/state"
)

// A Dir is one results directory to compute again and the plan it holds.
type Dir struct {
	Path string
	X    *resultsdir.Exported
	Plan *manifests.Plan
	// Other says why the directory is left out (its cells have other
	// keys here); "" when it is computed again.
	Other string
	// Cached counts its cells that the store held whole before this run.
	Cached int
	// Finished are the plan indices of the cells it holds, which are
	// computed again; Missing those it lacks (a partial directory), which
	// are not: there is nothing to compare them with.
	Finished, Missing []int
}

// Find lists the results directories under roots (each one, or a
// tree holding them), sorted.
func Find(roots []string) ([]string, error) {
	var dirs []string
	for _, root := range roots {
		if _, err := os.Stat(root); err != nil {
			return nil, fmt.Errorf(
				"%w: %s: no such directory (give directories that hold results `ump report` wrote)",
				state.ErrBadArgument,
				root,
			)
		}
		walk := root
		if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			walk = root + string(filepath.Separator) // a link to a tree: walk the tree it names
		}
		err := filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("%w: %s: %v (give directories ump can read)", state.ErrBadArgument, path, err)
			}
			if path == walk {
				path = root
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
		return nil, fmt.Errorf(
			"%w: %s holds no results directory (one with the %s that `ump report` writes)",
			state.ErrBadArgument,
			strings.Join(roots, ", "),
			resultsdir.RegistrationFile,
		)
	}
	return dirs, nil
}

// Plan reads every directory and says which of them this machine
// computes under the keys they record (runner's); lacks says why this
// build cannot compute a plan at all ("" when it can).
func Plan(
	ctx context.Context,
	runner *pipeline.Runner,
	dirs []string,
	lacks func(*manifests.Plan) string,
) ([]*Dir, error) {
	var all []*Dir
	for _, dir := range dirs {
		x, err := resultsdir.ReadExportedFinals(dir)
		if err != nil {
			return nil, err
		}
		r := &Dir{Path: dir, X: x, Plan: &x.Registration.Plan}
		all = append(all, r)
		if r.Missing, err = x.Missing(); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		for i := range r.Plan.Cells {
			if !slices.Contains(r.Missing, i) {
				r.Finished = append(r.Finished, i)
			}
		}
		if len(r.Finished) == 0 {
			r.Other = "it holds no finished cell, so there is nothing to compute again or compare"
			continue
		}
		if r.Other = lacks(r.Plan); r.Other != "" {
			continue
		}
		keys, err := runner.Keys(ctx, r.Plan)
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
			engine, _ := runner.Engines.Name(&r.Plan.Cells[0].Config)
			r.Other = fmt.Sprintf(
				"%d of its %d cells have other keys here: they were computed under engine %s (or other data), and "+
					"this machine computes with %s",
				differ,
				len(keys),
				display.Terminal(x.Engines()),
				engine,
			)
		}
	}
	return all, nil
}

// Compare compares every finished cell of each directory
// computed again with its recomputation in the store, and prints what
// it found per directory; ump is how ump was run, for the hint that sets
// the two side by side.
func Compare(ctx context.Context, ump string, src state.Source, all []*Dir, w io.Writer) error {
	differ, left := 0, 0
	for _, r := range all {
		name := fmt.Sprintf("%s (%s, %.12s)", r.Path, display.Terminal(r.Plan.Manifest.Name), r.Plan.Hash)
		if r.Other != "" {
			left++
			fmt.Fprintf(w, "%s: left out: %s\n", name, r.Other)
			continue
		}
		rep, err := src.FindReport(r.Plan.Hash)
		if err != nil {
			return err
		}
		y, err := resultsdir.ExportOf(ctx, src, rep)
		if err != nil {
			return err
		}
		finals, err := r.X.Finals()
		if err != nil {
			return err
		}
		same, rounds, bad := 0, 0, 0
		for i, f := range finals {
			if f.Status == "" {
				continue
			}
			n, err := r.X.SameCell(i, y)
			if err != nil {
				bad++
				fmt.Fprintf(w, "%s: cell %d %s DIFFERS: %v\n", name, i+1, r.Plan.Cells[i].LabelString(), err)
				continue
			}
			same++
			rounds += n
		}
		if bad > 0 {
			differ++
			fmt.Fprintf(w, "%s: %d of %d finished cells differ (`%s compare %.12s %s` sets the two side by side)%s\n",
				name, bad, bad+same, ump, r.Plan.Hash, display.Shell(display.AbsolutePaths([]string{r.Path})[0]),
				r.partial())
			continue
		}
		fmt.Fprintf(w, "%s: %d finished cells identical bit for bit (status, final row and %d evaluated rounds); "+
			"%d of them computed in this run, %d found in the store%s\n",
			name, same, rounds, len(r.Finished)-r.Cached, r.Cached, r.partial())
	}
	fmt.Fprintf(
		w,
		"directories computed again: %d (%d identical, %d differ); left out: %d\n",
		len(all)-left,
		len(all)-left-differ,
		differ,
		left,
	)
	if differ > 0 {
		return fmt.Errorf(
			"%w: directories computed again that differ from their committed figures: %d of %d",
			fleet.ErrNondeterministic,
			differ,
			len(all)-left,
		)
	}
	return nil
}

// partial says which cells a partial directory lacks ("" for a whole
// one).
func (r *Dir) partial() string {
	if len(r.Missing) == 0 {
		return ""
	}
	return fmt.Sprintf("; partial: %d of its %d cells finished where it was reported, "+
		"cells %s not (not computed: nothing to compare them with)",
		len(r.Finished), len(r.Plan.Cells), resultsdir.CellRanges(r.Missing))
}

// Line is the one progress line of a reproduction: on a
// terminal rewritten in place, elsewhere printed once a minute. Its
// share and ETA weigh each cell's rounds by what a round computes
// (cellWork), over the distinct cells of every directory computed again.
type Line struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	dirs     int
	k        int    // the directory running, from 0
	name     string // its name
	// work: per directory and cell, its work (cellWork x rounds), 0 where
	// an earlier directory has the cell.
	work      [][]float64
	Cells     int // the distinct cells (by key) of every directory
	total     float64
	done, ran float64 // the work accounted for, and of it the work computed here
	began     time.Time
	last      time.Time
	every     time.Duration
	now       func() time.Time
	// estimate is the wall time the whole work takes by the compute its
	// rounds recorded (Estimate); 0 for none.
	estimate time.Duration
	// firstRan is when work was first computed here, and eta the last
	// ETA printed (0 before the first), from which the next is smoothed.
	firstRan time.Time
	eta      time.Duration
}

func NewLine(w io.Writer, todo []*Dir) *Line {
	l := &Line{w: w, dirs: len(todo), began: time.Now(), every: time.Minute, now: time.Now}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			l.terminal, l.every = true, time.Second
		}
	}
	seen := map[string]bool{}
	for _, r := range todo {
		work := make([]float64, len(r.Plan.Cells))
		for i, key := range r.X.Registration.CellKeys {
			if !slices.Contains(r.Finished, i) {
				continue // a partial directory's missing cell: not computed
			}
			if !seen[key] {
				cfg := &r.Plan.Cells[i].Config
				work[i] = float64(cfg.Rounds) * cellWork(cfg)
				l.total += work[i]
			}
			seen[key] = true
		}
		l.work = append(l.work, work)
	}
	l.Cells = len(seen)
	return l
}

// Estimate sets the wall time the work takes at jobs cells at once, by
// the compute its rounds recorded where they ran (seconds), and returns
// it: the ETA until this machine has measured its own rate.
func (l *Line) Estimate(seconds float64, jobs int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.estimate = time.Duration(seconds / float64(max(1, jobs)) * float64(time.Second))
	return l.estimate
}

// measuring is how long this machine computes before its own rate stands
// in for the recorded estimate, and smoothing the weight a new measure of
// the time left gets against the last ETA printed, so that the ETA moves
// with the work done and does not swing with one cell's pace.
const (
	measuring = 2 * time.Minute
	smoothing = 0.2
)

// cellWork is what one round of a cell computes, in local steps of one
// sample (a task without samples counts a step as one).
func cellWork(cfg *manifests.Manifest) float64 {
	work := float64(cfg.Workers * cfg.LocalSteps)
	if cfg.Task.Kind().Samples {
		work *= float64(cfg.BatchSize)
	}
	return work
}

func (l *Line) Directory(k int, r *Dir) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.k, l.name = k, fmt.Sprintf("%s (%d cells)", r.Path, len(r.Plan.Cells))
	l.print()
}

// Count is pipeline.Runner.Counted.
func (l *Line) Count(c *manifests.Cell, rounds int, computed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	work := l.work[l.k][c.Index] * float64(rounds) / float64(c.Config.Rounds)
	l.done += work
	if computed {
		if l.ran == 0 {
			l.firstRan = l.now()
		}
		l.ran += work
	}
	if l.now().Sub(l.last) >= l.every {
		l.print()
	}
}

func (l *Line) print() {
	now := l.now()
	since := now.Sub(l.last)
	l.last = now
	share := 100.0
	if l.total > 0 {
		share = 100 * l.done / l.total
	}
	text := fmt.Sprintf("reproduce: directory %d of %d, %s; %.1f%% of the work, %s", l.k+1, l.dirs, l.name, share,
		l.timeLeft(now, since))
	if l.terminal {
		fmt.Fprintf(l.w, "\r%s\033[K", text)
		return
	}
	fmt.Fprintln(l.w, text)
}

// timeLeft says how long the work left takes: at first by the recorded
// estimate, once this machine has computed for measuring by its own rate
// since then, smoothed against the last ETA (less the time since it was
// printed).
func (l *Line) timeLeft(now time.Time, since time.Duration) string {
	left := l.total - l.done
	switch {
	case left <= 0:
		return "took " + now.Sub(l.began).Round(time.Second).String()
	case l.ran > 0 && now.Sub(l.firstRan) >= measuring:
		measured := time.Duration(float64(now.Sub(l.firstRan)) * left / l.ran)
		if l.eta > 0 {
			measured = time.Duration(smoothing*float64(measured) + (1-smoothing)*float64(max(0, l.eta-since)))
		}
		l.eta = measured
		return "ETA " + measured.Round(time.Second).String()
	case l.estimate > 0 && l.total > 0:
		l.eta = time.Duration(float64(l.estimate) * left / l.total)
		return "ETA about " + l.eta.Round(time.Minute).String() + " (by the recorded compute; measuring this machine)"
	}
	return "ETA after the first rounds"
}

// End prints the line a last time, finished or not.
func (l *Line) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.print()
	if l.terminal {
		fmt.Fprintln(l.w)
	}
}
