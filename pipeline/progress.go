package pipeline

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/stages"
)

// progress prints human progress lines and publishes the status snapshot.
// Round lines and snapshots are throttled; stage and cell transitions are
// always shown.
type progress struct {
	w          io.Writer
	dir        string
	snap       Snapshot
	start      time.Time
	total      int // rounds over all cells
	done       int // rounds accounted for (run, resumed or cached)
	ran        int // rounds computed by this process
	lastLine   time.Time
	lastSnap   time.Time
	cellRounds int // rounds of the current cell already counted
}

func newProgress(w io.Writer, dir string, plan *manifests.Plan) *progress {
	p := &progress{w: w, dir: dir, start: time.Now()}
	for _, c := range plan.Cells {
		p.total += c.Config.Rounds
	}
	p.snap = Snapshot{PID: os.Getpid(), State: "running", Manifest: plan.Hash, Name: plan.Manifest.Name,
		Started: time.Now().UTC(), Cells: len(plan.Cells)}
	p.printf("%s: %d cells, %d rounds in all\n", plan.Manifest.Name, len(plan.Cells), p.total)
	p.publish(true)
	return p
}

func (p *progress) printf(format string, args ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, format, args...)
	}
}

func (p *progress) publish(force bool) {
	if !force && time.Since(p.lastSnap) < 500*time.Millisecond {
		return
	}
	p.lastSnap = time.Now()
	if eta, ok := p.eta(); ok {
		p.snap.ETASeconds = eta.Seconds()
	}
	writeSnapshot(p.dir, &p.snap) // best effort: status is advisory
}

// eta extrapolates from the rounds this process computed.
func (p *progress) eta() (time.Duration, bool) {
	if p.ran == 0 {
		return 0, false
	}
	per := time.Since(p.start) / time.Duration(p.ran)
	return per * time.Duration(p.total-p.done), true
}

func (p *progress) cellStart(c *manifests.Cell) {
	p.snap.Cell, p.snap.Label, p.snap.Stage, p.snap.Round, p.snap.Rounds = c.Index+1, c.LabelString(), "", 0, c.Config.Rounds
	p.cellRounds = 0
	p.printf("cell %d/%d %s\n", c.Index+1, p.snap.Cells, c.LabelString())
	p.publish(true)
}

func (p *progress) stageStart(name string, resume *stages.Checkpoint) {
	p.snap.Stage = name
	if resume != nil {
		p.printf("  %s: resuming from the checkpoint after round %d\n", name, resume.Round)
		p.count(resume.Round, false)
	}
	p.publish(true)
}

func (p *progress) stageCached(name string) {
	p.printf("  %s: cached\n", name)
	if name == "train" {
		p.count(p.snap.Rounds, false)
	}
}

func (p *progress) stageDone(name string, res *stages.Result) {
	if res.Diverged {
		p.printf("  %s: done, diverged\n", name)
	} else {
		p.printf("  %s: done\n", name)
	}
	p.publish(true)
}

func (p *progress) stageFailed(name string, err error) {
	p.printf("  %s: FAILED: %v\n", name, err)
	p.publish(true)
}

// count marks the current cell's rounds up to round as accounted for.
func (p *progress) count(round int, computed bool) {
	if round > p.cellRounds {
		if computed {
			p.ran += round - p.cellRounds
		}
		p.done += round - p.cellRounds
		p.cellRounds = round
	}
}

// headlineMetrics are the figures a progress line shows when a round
// reports them.
var headlineMetrics = []string{"train_loss", "test_acc_mean", "objective_gap"}

func (p *progress) round(rep stages.RoundReport) {
	p.count(rep.Round, true)
	p.snap.Round = rep.Round
	if time.Since(p.lastLine) >= time.Second || rep.Round == rep.Rounds {
		p.lastLine = time.Now()
		eta := ""
		if d, ok := p.eta(); ok {
			eta = fmt.Sprintf(", ETA %s", d.Round(time.Second))
		}
		figures := ""
		for _, name := range headlineMetrics {
			if v, ok := rep.Metrics[name]; ok {
				figures += fmt.Sprintf(" %s %.4g", name, float64(v))
			}
		}
		p.printf("  train: round %d/%d%s (sweep %d%%%s)\n", rep.Round, rep.Rounds, figures, 100*p.done/max(p.total, 1), eta)
	}
	p.publish(false)
}

func (p *progress) cellDone(status string, cached bool) {
	p.count(p.snap.Rounds, false)
	p.snap.CellsDone++
	if cached {
		status += " (cached)"
	}
	p.printf("  -> %s\n", status)
	p.publish(true)
}

func (p *progress) state(s string) { p.snap.State = s }

func (p *progress) finish() {
	p.snap.Stage = ""
	if p.snap.State == "running" {
		p.snap.State = "failed"
	}
	p.publish(true)
}
