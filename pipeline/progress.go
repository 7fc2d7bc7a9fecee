package pipeline

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/display"
	"github.com/ump-lab/ump/record"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// progress prints human progress lines and publishes the status snapshot.
// Round lines and snapshots are throttled; stage and cell transitions are
// always shown. Cells may run concurrently (GPU cohorts): then every line
// names its cell, and the snapshot shows the latest one reported.
type progress struct {
	mu         sync.Mutex
	concurrent bool
	w          io.Writer
	dir        string
	snap       eventlog.Snapshot
	start      time.Time
	total      int // rounds over all cells
	done       int // rounds accounted for (run, resumed or cached)
	ran        int // rounds computed by this process
	lastLine   time.Time
	lastSnap   time.Time
	cellRounds map[int]int // per running cell: its rounds already counted
	// roundStart: per training cell, when its round's first local step began.
	roundStart map[int]time.Time
	counted    func(c *manifests.Cell, rounds int, computed bool) // Runner.Counted; nil for none
}

func newProgress(w io.Writer, dir string, plan *manifests.Plan, todo []int,
	counted func(*manifests.Cell, int, bool)) *progress {
	p := &progress{
		w:          w,
		dir:        dir,
		start:      time.Now(),
		cellRounds: map[int]int{},
		roundStart: map[int]time.Time{},
		counted:    counted,
	}
	for _, i := range todo { // the cells this run computes (verify --cells: those alone), for its share and ETA
		p.total += plan.Cells[i].Config.Rounds
	}
	p.snap = eventlog.Snapshot{PID: os.Getpid(), State: "running", Manifest: plan.Hash, Name: plan.Manifest.Name,
		Started: time.Now().UTC(), Cells: len(plan.Cells)}
	cells := fmt.Sprintf("%d cells", len(todo))
	if len(todo) == 1 {
		cells = "1 cell"
	}
	p.printf("%s: %s, %d rounds in all\n", plan.Manifest.Name, cells, p.total)
	p.publish(true)
	return p
}

func (p *progress) printf(format string, args ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, format, args...)
	}
}

func (p *progress) publish(force bool) {
	if p.dir == "" || (!force && time.Since(p.lastSnap) < 500*time.Millisecond) {
		return
	}
	p.lastSnap = time.Now()
	if eta, ok := p.eta(); ok {
		p.snap.ETASeconds = eta.Seconds()
	}
	eventlog.WriteSnapshot(p.dir, &p.snap) // best effort: status is advisory
}

// eta extrapolates from the rounds this process computed.
func (p *progress) eta() (time.Duration, bool) {
	if p.ran == 0 {
		return 0, false
	}
	per := time.Since(p.start) / time.Duration(p.ran)
	return per * time.Duration(p.total-p.done), true
}

// setConcurrent says whether the next cells run concurrently.
func (p *progress) setConcurrent(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.concurrent = on
}

// cellf prints a line about a running cell: indented under its cell line,
// or naming the cell when cells run concurrently.
func (p *progress) cellf(c *manifests.Cell, format string, args ...any) {
	if p.concurrent {
		p.printf("  cell %d: "+format, append([]any{c.Index + 1}, args...)...)
		return
	}
	p.printf("  "+format, args...)
}

func (p *progress) cellStart(c *manifests.Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap.Cell, p.snap.Label, p.snap.Stage, p.snap.Round, p.snap.Rounds = c.Index+1, c.LabelString(), "", 0,
		c.Config.Rounds
	p.cellRounds[c.Index] = 0
	p.listRunning()
	p.printf("cell %d/%d %s\n", c.Index+1, p.snap.Cells, c.LabelString())
	p.publish(true)
}

func (p *progress) stageStart(c *manifests.Cell, name string, resume *stages.Checkpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap.Stage = name
	if resume != nil {
		p.cellf(c, "%s: resuming from the checkpoint after round %d\n", name, resume.Round)
		p.count(c, resume.Round, false)
	}
	p.publish(true)
}

// stageCached says a stage's result was found; former says under the key
// an earlier ump gave the stage (stages.FormerlyKeyed).
func (p *progress) stageCached(c *manifests.Cell, name string, former bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if former {
		p.cellf(
			c,
			"%s: cached (recorded by an earlier ump under the stage's former key: the same bits, recorded again "+
				"under today's)\n",
			name,
		)
	} else {
		p.cellf(c, "%s: cached\n", name)
	}
	if name == stages.Train {
		p.count(c, c.Config.Rounds, false)
	}
}

// importedCell says a cell is finished as a results directory brought
// it (ump import), and is not computed here.
func (p *progress) importedCell(c *manifests.Cell, from *eventlog.Provenance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	signer := "signed by " + from.Signer
	if from.Signer == "" {
		signer = "unsigned"
	}
	p.cellf(c, "imported from %s, %s: not computed here (ump verify computes it again)\n",
		display.Terminal(from.From), display.Terminal(signer))
}

func (p *progress) stageDone(c *manifests.Cell, name string, res *stages.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if res.Diverged {
		p.cellf(c, "%s: done, diverged\n", name)
	} else {
		p.cellf(c, "%s: done\n", name)
	}
	p.publish(true)
}

func (p *progress) stageFailed(c *manifests.Cell, name string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cellf(c, "%s: FAILED: %v\n", name, err)
	p.publish(true)
}

// count marks cell c's rounds up to round as accounted for.
func (p *progress) count(c *manifests.Cell, round int, computed bool) {
	if counted := p.cellRounds[c.Index]; round > counted {
		if computed {
			p.ran += round - counted
		}
		p.done += round - counted
		p.cellRounds[c.Index] = round
		if p.counted != nil {
			p.counted(c, round-counted, computed)
		}
	}
}

// headlineMetrics are the figures a progress line shows when a round
// reports them.
var headlineMetrics = []string{"train_loss", "test_acc_mean", "objective_gap"}

func (p *progress) round(c *manifests.Cell, rep record.RoundReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(c, rep.Round, true)
	p.snap.Cell, p.snap.Label, p.snap.Round = c.Index+1, c.LabelString(), rep.Round
	if time.Since(p.lastLine) >= time.Second || rep.Round == rep.Rounds {
		figures := ""
		for _, name := range headlineMetrics {
			if v, ok := rep.Metrics[name]; ok {
				figures += fmt.Sprintf(" %s %.4g", name, float64(v))
			}
		}
		p.roundLine(c, rep.Round, rep.Rounds, figures)
	}
	p.publish(false)
}

// tickEvery is how often a line reports training between the rounds that
// evaluate (and report figures).
const tickEvery = 2 * time.Second

// tick counts a round that reported nothing, and prints a line when none
// was printed for tickEvery.
func (p *progress) tick(c *manifests.Cell, round, rounds int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(c, round, true)
	p.snap.Cell, p.snap.Label, p.snap.Round = c.Index+1, c.LabelString(), round
	if time.Since(p.lastLine) >= tickEvery {
		p.roundLine(c, round, rounds, "")
	}
	p.publish(false)
}

// step reports a local step of a round in progress: a line once the round
// has run for tickEvery and none was printed for as long, so that a long
// round shows it is running (a short one prints nothing).
func (p *progress) step(c *manifests.Cell, round, step, steps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if step == 1 {
		p.roundStart[c.Index] = time.Now()
		return
	}
	if time.Since(p.roundStart[c.Index]) >= tickEvery && time.Since(p.lastLine) >= tickEvery {
		p.lastLine = time.Now()
		p.cellf(c, "train: round %d/%d, local step %d/%d\n", round, c.Config.Rounds, step, steps)
	}
}

// roundLine prints where training is: the round, its figures if any, the
// sweep's share done and the ETA.
func (p *progress) roundLine(c *manifests.Cell, round, rounds int, figures string) {
	p.lastLine = time.Now()
	eta := ""
	if d, ok := p.eta(); ok {
		eta = fmt.Sprintf(", ETA %s", d.Round(time.Second))
	}
	p.cellf(c, "train: round %d/%d%s (sweep %d%%%s)\n", round, rounds, figures, 100*p.done/max(p.total, 1), eta)
}

func (p *progress) cellDone(c *manifests.Cell, status string, cached bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(c, c.Config.Rounds, false)
	delete(p.cellRounds, c.Index)
	p.listRunning()
	p.snap.CellsDone++
	if cached {
		status += " (cached)"
	}
	if p.concurrent {
		p.printf("cell %d/%d -> %s\n", c.Index+1, p.snap.Cells, status)
	} else {
		p.printf("  -> %s\n", status)
	}
	p.publish(true)
}

// listRunning puts the cells running (those with rounds counted) in the
// snapshot.
func (p *progress) listRunning() {
	p.snap.Running = p.snap.Running[:0]
	for _, i := range slices.Sorted(maps.Keys(p.cellRounds)) {
		p.snap.Running = append(p.snap.Running, i+1)
	}
}

func (p *progress) state(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap.State = s
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap.Stage = ""
	if p.snap.State == "running" {
		p.snap.State = "failed"
	}
	p.publish(true)
}
