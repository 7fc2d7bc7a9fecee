package train

import (
	"fmt"
	"sync"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// Lockstep runs the training of concurrently running GPU cells that share
// their shapes as one device cohort (nn.Cohort, DESIGN.md "Cohorts"): a
// round executes when every member has asked for it and no reserved cell
// is still on its way, so the device computes every slot once per round.
// A cell's numbers do not depend on the others in its cohort (frozen and
// empty slots keep their state), so cohorts change speed, never results.
type Lockstep struct {
	size      int
	mu        sync.Mutex
	groups    map[string]*group
	newCohort NewCohort
}

// NewLockstep returns a Lockstep whose cohorts hold size cells, each
// cohort built by newCohort (the device's engine; tests pass a fake).
func NewLockstep(size int, newCohort NewCohort) *Lockstep {
	return &Lockstep{size: max(1, size), groups: map[string]*group{}, newCohort: newCohort}
}

// Seat is a cell's reserved place in its cohort: the runner reserves it
// before the cell's stages run (Engines.NewCohort), hands it to the train
// stage as Env.Seat, and releases it after; the train stage joins with it.
type Seat struct {
	g      *group
	joined bool
}

// Reserve announces a cell of cohort key key (CohortKey) that will run
// (nil for key "": a cell that trains outside cohorts); the cohort's
// rounds wait for it until it joins or is released.
func (l *Lockstep) Reserve(key string) *Seat {
	if key == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.groups[key]
	if !ok {
		g = &group{l: l, key: key, slots: make([]bool, l.size)}
		g.cond = sync.NewCond(&l.mu)
		l.groups[key] = g
	}
	g.reserved++
	return &Seat{g: g}
}

// Size is the number of cells of the seat's cohort.
func (s *Seat) Size() int { return s.g.l.size }

// Release gives the seat up (after the cell's stages, whether or not it
// joined).
func (s *Seat) Release() {
	l := s.g.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !s.joined {
		s.g.reserved--
		s.joined = true // released: never again
		s.g.settle()
	}
}

// Member is a cell training in a cohort: its slot.
type Member struct {
	g    *group
	slot int
	left bool
}

// Join takes a slot in the seat's cohort, building the cohort on first
// use, and uploads the cell's initial state (its optimizer's, or a
// checkpoint's).
func (s *Seat) Join(data *datasets.Dataset, shape nn.CohortShape, state map[string][][]float32) (*Member, error) {
	g := s.g
	l := g.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.joined {
		return nil, fmt.Errorf("gpu engine: a seat joined twice")
	}
	if g.cohort == nil {
		shape.Cells = l.size
		co, err := l.newCohort(data, shape)
		if err != nil {
			return nil, err
		}
		g.cohort = co
		g.requests = make([]nn.CellRound, l.size)
		g.evaluate = make([]bool, l.size)
	}
	slot := -1
	for i, used := range g.slots {
		if !used {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, fmt.Errorf("gpu engine: a cohort of %d cells is full", l.size)
	}
	if err := g.cohort.SetState(slot, state); err != nil {
		return nil, err
	}
	s.joined = true
	g.reserved--
	g.live++
	g.slots[slot] = true
	return &Member{g: g, slot: slot}, nil
}

// Round submits the member's round and waits for the cohort to run it;
// with evaluate, the scores of its models after the round come back too.
func (m *Member) Round(
	req nn.CellRound,
	evaluate bool,
) (losses []float64, finite bool, scores *nn.CellScores, err error) {
	g := m.g
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	req.Active = true
	g.requests[m.slot], g.evaluate[m.slot] = req, evaluate
	g.submitted++
	gen := g.gen
	g.settle()
	for g.gen == gen {
		g.cond.Wait()
	}
	if g.err != nil {
		return nil, false, nil, g.err
	}
	if evaluate {
		scores = &g.scores[m.slot]
	}
	return g.losses[m.slot], g.finite[m.slot], scores, nil
}

// Evaluate scores the member's models now (between its rounds).
func (m *Member) Evaluate() (*nn.CellScores, error) {
	m.g.l.mu.Lock()
	defer m.g.l.mu.Unlock()
	scores, err := m.g.cohort.EvaluateCell(m.slot)
	if err != nil {
		return nil, err
	}
	return &scores, nil
}

// State downloads the member's state vectors (between its rounds).
func (m *Member) State() (map[string][][]float32, error) {
	m.g.l.mu.Lock()
	defer m.g.l.mu.Unlock()
	return m.g.cohort.State(m.slot)
}

// Leave frees the member's slot (the cell finished, diverged, failed or
// was interrupted); the last member out frees the device.
func (m *Member) Leave() {
	g := m.g
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	if m.left {
		return
	}
	m.left = true
	g.slots[m.slot] = false
	g.live--
	g.settle()
}

// group is one cohort and its members; its fields are guarded by the
// Lockstep's mutex.
type group struct {
	l         *Lockstep
	key       string
	cond      *sync.Cond
	cohort    nn.Cohort
	slots     []bool // in use
	reserved  int    // seats announced, not yet joined or released
	live      int    // members
	submitted int    // members waiting for this round
	requests  []nn.CellRound
	evaluate  []bool
	gen       int // rounds run
	losses    [][]float64
	finite    []bool
	scores    []nn.CellScores
	err       error
}

// settle runs the round once every member has submitted and no reserved
// cell is on its way, and frees the group once nobody is left.
func (g *group) settle() {
	if g.live == 0 && g.reserved == 0 {
		if g.cohort != nil {
			g.cohort.Close()
		}
		delete(g.l.groups, g.key)
		return
	}
	if g.submitted == 0 || g.submitted < g.live || g.reserved > 0 {
		return
	}
	cells := make([]nn.CellRound, len(g.requests))
	evaluate := false
	for i := range cells {
		if g.slots[i] && g.requests[i].Active {
			cells[i] = g.requests[i]
			evaluate = evaluate || g.evaluate[i]
		}
	}
	g.losses, g.finite, g.err = g.cohort.Round(cells)
	if g.err == nil && evaluate {
		g.scores, g.err = g.cohort.Evaluate()
	}
	for i := range g.requests {
		g.requests[i], g.evaluate[i] = nn.CellRound{}, false
	}
	g.submitted = 0
	g.gen++
	g.cond.Broadcast()
}
