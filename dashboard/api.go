package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ump-lab/ump/figure"
	"github.com/ump-lab/ump/stages"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report"
	"github.com/ump-lab/ump/state"
)

// num is a figure in JSON: null where it is NaN or infinite (a diverged
// run), which JSON has no number for.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

// progress is how far a manifest's cells are.
type progress struct {
	Cells        int            `json:"cells"`
	Counts       map[string]int `json:"counts"`
	RoundsDone   int            `json:"rounds_done"`
	RoundsTotal  int            `json:"rounds_total"`
	First        *time.Time     `json:"first,omitempty"` // the first and last event its own runs recorded (Report.Span)
	Last         *time.Time     `json:"last,omitempty"`
	Reused       int            `json:"reused,omitempty"`        // cells whose results another manifest's run computed
	Running      bool           `json:"running"`                 // the store's writer is running it now
	RunningCells []int          `json:"running_cells,omitempty"` // the cells it runs (1-based), when Running
	ETASeconds   float64        `json:"eta_seconds,omitempty"`   // the run's estimate, when Running
}

// progressOf is how far rep's cells are; snap is the store's running
// writer's snapshot, or nil.
func progressOf(rep *state.Report, snap *eventlog.Snapshot) progress {
	p := progress{Cells: len(rep.Cells), Counts: rep.Counts()}
	for i, cell := range rep.Cells {
		rounds := rep.Plan.Cells[i].Config.Rounds
		p.RoundsTotal += rounds
		switch cell.Status {
		case eventlog.Completed, eventlog.Diverged, eventlog.Failed: // nothing left to run
			p.RoundsDone += rounds
		case eventlog.Incomplete:
			if st := cell.Stage(stages.Train); st != nil {
				p.RoundsDone += min(st.Round, rounds)
			}
		}
	}
	p.Reused = rep.Reused()
	if first, last := rep.Span(); !first.IsZero() {
		p.First, p.Last = &first, &last
	}
	if snap != nil && snap.Manifest == rep.Plan.Hash && snap.State == "running" {
		p.Running, p.RunningCells, p.ETASeconds = true, snap.Running, snap.ETASeconds
	}
	return p
}

// storeView is the home page: the store, its writer and its manifests.
func (s *Server) storeView(r *http.Request) (any, error) {
	regs, err := s.registrations()
	if err != nil {
		return nil, err
	}
	type manifest struct {
		Hash string `json:"hash"`
		Name string `json:"name"`
		// Best is its table's best entry: mean ± std, row and column, tuned
		// value ("" before any result); BestOf names its figure in words.
		Best   string `json:"best,omitempty"`
		BestOf string `json:"best_of,omitempty"`
		about
		progress
	}
	out := struct {
		Dir       string             `json:"dir"`
		State     storeState         `json:"state"`
		Note      string             `json:"note,omitempty"`
		Run       *eventlog.Snapshot `json:"run,omitempty"`
		Manifests []manifest         `json:"manifests"`
	}{Dir: s.o.Dir, State: s.state, Note: s.dir.Note, Run: s.snapshot(), Manifests: []manifest{}}
	for i := range regs {
		rep, err := s.store.Report(&regs[i])
		if err != nil {
			return nil, err
		}
		a, err := s.about(&regs[i])
		if err != nil {
			return nil, err
		}
		best, of, err := s.best(r, rep)
		if err != nil {
			return nil, err
		}
		out.Manifests = append(
			out.Manifests,
			manifest{regs[i].Plan.Hash, regs[i].Plan.Manifest.Name, best, of, a, progressOf(rep, out.Run)},
		)
	}
	slices.Reverse(out.Manifests) // the newest first
	return out, nil
}

// best is the best entry of rep's table (mean ± std, row and column,
// tuned value) and its figure in words; "" before any result, or when
// its table block cannot lay its results out.
func (s *Server) best(r *http.Request, rep *state.Report) (best, of string, err error) {
	spec := report.Layout(&rep.Plan)
	grid, err := report.ReadGrid(r.Context(), s.store, rep, spec)
	if errors.Is(err, state.ErrBadArgument) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return bestOf(grid), report.Label(spec, spec.Value), nil
}

// bestOf is a grid's best entry in words: mean ± std, its row and column,
// and the value its select path was tuned to; "" before any result.
func bestOf(grid *report.Grid) string {
	label, e, ok := grid.Best()
	if !ok {
		return ""
	}
	best := grid.Text(e, "±") + ", " + label
	if e.Select != "" {
		best += ", " + grid.Spec.Select + "=" + e.Select
	}
	return best
}

var hashPattern = regexp.MustCompile(`^[0-9a-f]{1,64}$`)

// report finds the manifest the URL names, by its hash or a unique prefix.
func (s *Server) report(r *http.Request) (*state.Report, error) {
	hash := r.PathValue("hash")
	if !hashPattern.MatchString(hash) {
		return nil, badRequest("%q is not a manifest hash (up to 64 lowercase hex digits)", hash)
	}
	regs, err := s.registrations()
	if err != nil {
		return nil, err
	}
	reg, err := state.FindIn(regs, hash, s.o.Dir)
	if err != nil {
		return nil, notFound("%v", err)
	}
	return s.store.Report(reg)
}

// cellIndex is the cell the URL names (from 1, as ump counts), as a plan index.
func cellIndex(rep *state.Report, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > len(rep.Cells) {
		return 0, notFound("manifest %.12s has cells 1 to %d, not %q", rep.Plan.Hash, len(rep.Cells), v)
	}
	return n - 1, nil
}

// oneOf checks a query parameter against the values it may take; "" takes
// the default.
func oneOf(r *http.Request, name, def string, allowed []string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	if !slices.Contains(allowed, v) {
		return "", badRequest("%s=%q: use one of %s", name, v, strings.Join(allowed, ", "))
	}
	return v, nil
}

// cellSummary is a cell in lists.
type cellSummary struct {
	N      int    `json:"n"`
	Label  string `json:"label"`
	Status string `json:"status"`
	Round  int    `json:"round"`
	Rounds int    `json:"rounds"`
	Key    string `json:"key"`
	// Values are its swept paths' values (manifests.Cell.Label).
	Values map[string]string `json:"values"`
	// Figures are a finished cell's report.HeadlineFigures, on the
	// manifest's page.
	Figures map[string]num `json:"figures,omitempty"`
}

func summarise(rep *state.Report, i int) cellSummary {
	cell := rep.Cells[i]
	c := cellSummary{N: i + 1, Label: rep.Plan.Cells[i].LabelString(), Status: cell.Status,
		Rounds: rep.Plan.Cells[i].Config.Rounds, Key: cell.Key, Values: rep.Plan.Cells[i].Label}
	if st := cell.Stage(stages.Train); st != nil {
		c.Round = st.Round // a diverged cell's last: where it stopped
		if st.Status == eventlog.Completed && !st.Result.Diverged {
			c.Round = c.Rounds
		}
	}
	return c
}

// manifestView is a manifest's page: progress, layout, the choices its
// figures offer, its cells and the normalised manifest.
func (s *Server) manifestView(r *http.Request) (any, error) {
	rep, err := s.report(r)
	if err != nil {
		return nil, err
	}
	spec := report.Layout(&rep.Plan)
	cells := make([]cellSummary, len(rep.Cells))
	for i := range cells {
		cells[i] = summarise(rep, i)
	}
	final, _, err := report.Export(r.Context(), s.store, []*state.Report{rep}, "final", false)
	if err != nil {
		return nil, err
	}
	shown := report.HeadlineFigures(spec)
	if n := final.Column("cell"); n != nil {
		for row, cell := range n.Ints { // from 1
			figs := map[string]num{}
			for _, name := range shown {
				if c := final.Column(name); c != nil && c.Floats != nil {
					figs[name] = num(c.Floats[row])
				}
			}
			cells[cell-1].Figures = figs
		}
	}
	var incomplete bool
	for _, c := range rep.Cells {
		incomplete = incomplete || c.Status == eventlog.Incomplete || c.Status == eventlog.Failed
	}
	a, err := s.about(&rep.Registration)
	if err != nil {
		return nil, err
	}
	swept := sweptPaths(&rep.Plan)
	return struct {
		Hash       string             `json:"hash"`
		Name       string             `json:"name"`
		About      about              `json:"about"`
		Progress   progress           `json:"progress"`
		Layout     manifests.Table    `json:"layout"`
		Figures    []string           `json:"figures"`     // final-table figures the table can show
		Columns    []string           `json:"columns"`     // rounds-table columns the curves can show
		SelectPath string             `json:"select_path"` // the path the table tunes (Layout.Select), "" for none
		Choices    []string           `json:"choices"`     // the select path's values
		Tables     []string           `json:"tables"`      // exportable tables
		Formats    []string           `json:"formats"`     // export formats
		Unfinished bool               `json:"unfinished"`  // some cell has rounds but no rounds table
		Cells      []cellSummary      `json:"cells"`
		CellFigs   []string           `json:"cell_figures"` // the figures each finished cell shows
		Swept      []string           `json:"swept"`        // the swept paths, sorted
		Words      map[string]string  `json:"words"`        // columns and paths in words, as figures name them
		Palette    []string           `json:"palette"`      // the figures' colours, in order (figure.Palette)
		Manifest   manifests.Manifest `json:"manifest"`
	}{rep.Plan.Hash, rep.Plan.Manifest.Name, a, progressOf(rep, s.snapshot()), spec, figures(&rep.Plan), roundsColumns(
		&rep.Plan),
		spec.Select, choices(&rep.Plan,
			spec.Select), report.TableNames(), artifacts.Formats, incomplete, cells, shown, swept,
		words(spec, roundsColumns(&rep.Plan), swept), figure.Palette, rep.Plan.Manifest}, nil
}

// sweptPaths are the paths the plan's cells take different values at,
// sorted (as cell labels list them).
func sweptPaths(plan *manifests.Plan) []string {
	var out []string
	for i := range plan.Cells {
		for _, p := range slices.Sorted(maps.Keys(plan.Cells[i].Label)) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// words names columns and paths as figures do (report.Label): the
// page's axis labels and choices.
func words(spec manifests.Table, names ...[]string) map[string]string {
	out := map[string]string{}
	for _, list := range names {
		for _, n := range list {
			out[n] = report.Label(spec, n)
		}
	}
	return out
}

// about is what tells a manifest apart besides its hash: the overrides
// it was run with, the user's notes (ump note).
type about struct {
	Overrides []string     `json:"overrides,omitempty"`
	Notes     []state.Note `json:"notes,omitempty"`
}

func (s *Server) about(reg *state.Registration) (about, error) {
	notes, err := s.store.Notes(reg.Plan.Hash)
	return about{reg.Overrides, notes}, err
}

// roundsColumns are the rounds-table columns of the manifest's cells (the
// first cell's: the columns depend only on the task and the exchange).
func roundsColumns(plan *manifests.Plan) []string {
	if len(plan.Cells) == 0 {
		return nil
	}
	return stages.Columns(plan.Cells[0].Config.Task, plan.Cells[0].Config.Validation != nil)
}

// figures are the final-table figures a table can show: the rounds
// columns but round, the accuracies first.
func figures(plan *manifests.Plan) []string {
	var first, rest []string
	for _, c := range roundsColumns(plan) {
		switch c {
		case "round":
		case "test_acc_mean", "consensus_acc":
			first = append(first, c)
		default:
			rest = append(rest, c)
		}
	}
	return append(first, rest...)
}

// choices are the values the plan's cells take at the select path, in
// plan order.
func choices(plan *manifests.Plan, path string) []string {
	if path == "" {
		return []string{}
	}
	out := []string{}
	for i := range plan.Cells {
		if v := plan.Cells[i].ValueAt(path); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// layoutFor is the manifest's layout showing the figure ?value= names.
func layoutFor(r *http.Request, plan *manifests.Plan) (manifests.Table, error) {
	spec := report.Layout(plan)
	value, err := oneOf(r, "value", spec.Value, figures(plan))
	if err != nil {
		return spec, err
	}
	if value != spec.Value {
		spec.Value, spec.Best = value, manifests.BestFor(value)
		spec.Also = slices.DeleteFunc(slices.Clone(spec.Also), func(a string) bool { return a == value })
	}
	return spec, nil
}

// grid is the manifest the URL names and its table, showing the figure
// ?value= names.
func (s *Server) grid(r *http.Request) (*state.Report, manifests.Table, *report.Grid, error) {
	rep, err := s.report(r)
	if err != nil {
		return nil, manifests.Table{}, nil, err
	}
	spec, err := layoutFor(r, &rep.Plan)
	if err != nil {
		return nil, spec, nil, err
	}
	grid, err := report.ReadGrid(r.Context(), s.store, rep, spec)
	return rep, spec, grid, err
}

// tableView is the manifest's table as `ump table` lays it out (--value:
// ?value=), each entry with its cells.
func (s *Server) tableView(r *http.Request) (any, error) {
	_, spec, grid, err := s.grid(r)
	if err != nil {
		return nil, err
	}
	type entry struct {
		Text     string `json:"text"`
		Note     string `json:"note"`
		Best     bool   `json:"best"`
		Diverged bool   `json:"diverged"`
		Missing  bool   `json:"missing"`
		// Provisional: other values of the select path still run (marked †).
		Provisional bool  `json:"provisional"`
		Mean        num   `json:"mean"`
		Cells       []int `json:"cells"`
	}
	type row struct {
		Label   string  `json:"label"`
		Color   string  `json:"color"` // its curves' (figure.Colour)
		Entries []entry `json:"entries"`
	}
	out := struct {
		RowHeader string          `json:"row_header"`
		Columns   []string        `json:"columns"`
		Rows      []row           `json:"rows"`
		Legend    string          `json:"legend"`
		Layout    manifests.Table `json:"layout"`
	}{RowHeader: grid.RowsTitle(), Legend: grid.Legend(), Layout: spec}
	for c := range grid.ColLabels {
		out.Columns = append(out.Columns, grid.ColumnTitle(c))
	}
	best := grid.BestRows()
	for r := range grid.RowLabels {
		rw := row{Label: grid.RowTitle(r), Color: figure.Colour(r)}
		for c, e := range grid.Entries[r] {
			cells := make([]int, len(grid.Cells[r][c]))
			for k, i := range grid.Cells[r][c] {
				cells[k] = i + 1
			}
			rw.Entries = append(rw.Entries, entry{Text: grid.Text(e, "±"), Note: grid.SelectNote(e), Best: best[c] == r,
				Diverged: e.Diverged, Missing: e.Missing, Provisional: e.Provisional, Mean: num(e.Mean), Cells: cells})
		}
		out.Rows = append(out.Rows, rw)
	}
	return out, nil
}

// entryView is one table entry: its cells grouped by the select path's
// value, each with its final figure, the chosen group marked.
func (s *Server) entryView(r *http.Request) (any, error) {
	rep, spec, grid, err := s.grid(r)
	if err != nil {
		return nil, err
	}
	row, err1 := strconv.Atoi(r.PathValue("row")) // from 1, as cells count
	col, err2 := strconv.Atoi(r.PathValue("column"))
	row, col = row-1, col-1
	if err1 != nil || err2 != nil || row < 0 || row >= len(grid.RowLabels) || col < 0 || col >= len(grid.ColLabels) {
		return nil, notFound("manifest %.12s's table has rows 1 to %d and columns 1 to %d, not %q, %q",
			rep.Plan.Hash, len(grid.RowLabels), len(grid.ColLabels), r.PathValue("row"), r.PathValue("column"))
	}
	e := grid.Entries[row][col]
	type cell struct {
		cellSummary
		Value num `json:"value"`
	}
	type choice struct {
		Value    string `json:"value"`
		Selected bool   `json:"selected"`
		Cells    []cell `json:"cells"`
	}
	out := struct {
		Row    string   `json:"row"`
		Column string   `json:"column"`
		Value  string   `json:"value"`
		Select string   `json:"select"`
		Text   string   `json:"text"`
		Note   string   `json:"note"`
		Groups []choice `json:"groups"`
	}{Row: grid.RowTitle(row), Column: grid.ColumnTitle(col), Value: spec.Value, Select: spec.Select,
		Text: grid.Text(e, "±"), Note: grid.SelectNote(e)}
	for _, i := range grid.Cells[row][col] {
		v := grid.Choices[i]
		k := slices.IndexFunc(out.Groups, func(g choice) bool { return g.Value == v })
		if k < 0 {
			out.Groups = append(out.Groups, choice{Value: v, Selected: !e.Missing && v == e.Select})
			k = len(out.Groups) - 1
		}
		value, err := s.finalFigure(r, rep, i, spec.Value)
		if err != nil {
			return nil, err
		}
		out.Groups[k].Cells = append(out.Groups[k].Cells, cell{summarise(rep, i), num(value)})
	}
	return out, nil
}

// finalFigure is a cell's figure in its final table, NaN when it has none.
func (s *Server) finalFigure(r *http.Request, rep *state.Report, i int, name string) (float64, error) {
	ref, ok := rep.Cells[i].Output(stages.Final)
	if !ok {
		return math.NaN(), nil
	}
	t, err := s.table(r, ref)
	if err != nil {
		return 0, fmt.Errorf("cell %d: %w", i+1, err)
	}
	if c := t.Column(name); c != nil && len(c.Floats) > 0 {
		return c.Floats[0], nil
	}
	return math.NaN(), nil
}

// table reads a table blob.
func (s *Server) table(r *http.Request, ref artifacts.Ref) (*artifacts.Table, error) {
	data, err := s.store.Blobs.Get(r.Context(), ref)
	if err != nil {
		return nil, err
	}
	return artifacts.ReadArrow(data)
}

// curvesView is the manifest's figures as `ump plot` draws them, with the
// rounds that unfinished cells reported so far: ?x= (round or
// bits_sent_per_worker), ?y= (a rounds column), ?choice= (a value of the
// select path instead of the tuned one).
func (s *Server) curvesView(r *http.Request) (any, error) {
	rep, err := s.report(r)
	if err != nil {
		return nil, err
	}
	spec := report.Layout(&rep.Plan)
	cols := roundsColumns(&rep.Plan)
	o := report.CurveOptions{Live: true}
	if o.X, err = oneOf(r, "x", "round", []string{"round", "bits_sent_per_worker"}); err != nil {
		return nil, err
	}
	if o.Y, err = oneOf(r, "y", spec.Value, cols); err != nil {
		return nil, err
	}
	if o.Choice, err = oneOf(r, "choice", "", choices(&rep.Plan, spec.Select)); err != nil {
		return nil, err
	}
	figs, err := report.Curves(r.Context(), s.store, rep, spec, o)
	if err != nil {
		return nil, err
	}
	type series struct {
		Label    string `json:"label"`
		Select   string `json:"select"`
		Untuned  bool   `json:"untuned"`
		X        []num  `json:"x"`
		Mean     []num  `json:"mean"`
		Std      []num  `json:"std"`
		Seeds    int    `json:"seeds"`
		Diverged int    `json:"diverged"`
		Running  int    `json:"running"`
		Color    string `json:"color"`  // figure.Colour, as ump plot draws it
		Dashed   bool   `json:"dashed"` // figure.Dashed
	}
	type chart struct {
		Name   string   `json:"name"`
		Title  string   `json:"title"`
		X      string   `json:"x"`
		Y      string   `json:"y"`
		Series []series `json:"series"`
	}
	out := []chart{}
	for _, f := range figs {
		fig := chart{Name: f.Name, Title: f.Title, X: f.X, Y: f.Y}
		for i, sr := range f.Series {
			fig.Series = append(
				fig.Series,
				series{sr.Label, sr.Select, sr.Untuned, nums(sr.X), nums(sr.Mean), nums(sr.Std),
					sr.Seeds, sr.DivergedSeeds, sr.Running, figure.Colour(i), figure.Dashed(i)},
			)
		}
		out = append(out, fig)
	}
	return out, nil
}

// column is a numeric table column in JSON.
type column struct {
	Name   string `json:"name"`
	Values []num  `json:"values"`
}

// cellPage is a cell's page (cellView).
type cellPage struct {
	cellSummary
	Manifest    string            `json:"manifest"`
	Name        string            `json:"name"`
	Config      json.RawMessage   `json:"config"`
	Fingerprint map[string]string `json:"fingerprint"`
	Stages      []stageView       `json:"stages"`
	Histogram   *histogramView    `json:"histogram"`
	Mixing      []mixingView      `json:"mixing"`
	Value       string            `json:"value"`        // the layout's figure: the one the page shows first
	RoundsTable []column          `json:"rounds_table"` // the rounds table, finished or so far
	Color       string            `json:"color"`        // its curve's: figure.Colour(0)
	Words       map[string]string `json:"words"`        // its columns and paths in words (report.Label)
	Tables      []string          `json:"tables"`       // exportable for this cell
	Formats     []string          `json:"formats"`      // export formats
}

// stageView is a stage of a cell's page.
type stageView struct {
	Name     string          `json:"name"`
	Status   string          `json:"status"`
	Key      string          `json:"key"`
	Cached   bool            `json:"cached"`
	Restarts int             `json:"restarts"`
	Inputs   []string        `json:"inputs"`
	Outputs  []outputView    `json:"outputs"`
	Summary  json.RawMessage `json:"summary,omitempty"`
	Diverged bool            `json:"diverged"`
	Error    string          `json:"error,omitempty"`
	Round    int             `json:"round"`
	Rounds   int             `json:"rounds"`
}

// outputView is an output of a stage.
type outputView struct {
	Name string        `json:"name"`
	Ref  artifacts.Ref `json:"ref"`
}

// histogramView is a cell's partition: class counts per worker.
type histogramView struct {
	Workers int     `json:"workers"`
	Classes int     `json:"classes"`
	Counts  []int64 `json:"counts"` // worker-major
}

// mixingView is one of a cell's mixing matrices, from the round it
// starts at.
type mixingView struct {
	From  int     `json:"from_round"`
	Edges int     `json:"edges"`
	Gap   float64 `json:"spectral_gap"`
}

// cellView is a cell's page: its configuration, fingerprint, stages with
// their keys, inputs and outputs, its partition and mixing matrices, and
// its rounds so far.
func (s *Server) cellView(r *http.Request) (any, error) {
	rep, err := s.report(r)
	if err != nil {
		return nil, err
	}
	i, err := cellIndex(rep, r.PathValue("cell"))
	if err != nil {
		return nil, err
	}
	cell := rep.Cells[i]
	out := cellPage{
		cellSummary: summarise(rep, i),
		Manifest:    rep.Plan.Hash,
		Name:        rep.Plan.Manifest.Name,
		Value:       report.Layout(&rep.Plan).Value,
		Color: figure.Colour(
			0,
		),
		Words: words(report.Layout(&rep.Plan), roundsColumns(&rep.Plan), sweptPaths(&rep.Plan)),
		Config: manifests.CanonicalJSON(
			rep.Plan.Cells[i].Config,
		),
		Fingerprint: cell.Fingerprint(),
		Stages:      []stageView{},
		Tables:      []string{},
		Formats:     artifacts.Formats,
	}
	for _, st := range cell.Stages {
		v := stageView{
			Name:     st.Name,
			Status:   st.Status,
			Key:      st.Key,
			Cached:   st.Cached,
			Restarts: st.Restarts,
			Inputs:   st.Inputs,
			Outputs:  []outputView{},
			Error:    st.Error,
			Round:    st.Round,
			Rounds:   st.Rounds,
		}
		if st.Result != nil {
			for _, name := range slices.Sorted(maps.Keys(st.Result.Outputs)) {
				v.Outputs = append(v.Outputs, outputView{name, st.Result.Outputs[name]})
			}
			v.Summary, v.Diverged = st.Result.Summary, st.Result.Diverged
		}
		out.Stages = append(out.Stages, v)
	}
	if out.Histogram, err = s.histogram(r, cell); err != nil {
		return nil, err
	}
	if out.Mixing, err = s.mixings(r, cell); err != nil {
		return nil, err
	}
	if out.RoundsTable, err = s.roundsTable(r, rep, i); err != nil {
		return nil, err
	}
	for _, name := range report.CellTableNames() {
		if _, ok := cell.Output(report.TableSource(name)); ok {
			out.Tables = append(out.Tables, name)
		}
	}
	return out, nil
}

// histogram is a cell's partition, nil where it has none.
func (s *Server) histogram(r *http.Request, cell *state.CellView) (*histogramView, error) {
	ref, ok := cell.Output(stages.Histogram)
	if !ok {
		return nil, nil
	}
	t, err := s.table(r, ref)
	if err != nil {
		return nil, err
	}
	w, c, counts := t.Column("worker"), t.Column("class"), t.Column("count")
	if w == nil || c == nil || counts == nil || len(counts.Ints) == 0 {
		return nil, nil
	}
	return &histogramView{int(slices.Max(w.Ints)) + 1, int(slices.Max(c.Ints)) + 1, counts.Ints}, nil
}

// mixings are a cell's mixing matrices, in the order they start.
func (s *Server) mixings(r *http.Request, cell *state.CellView) ([]mixingView, error) {
	ref, ok := cell.Output(stages.Mixing)
	if !ok {
		return nil, nil
	}
	t, err := s.table(r, ref)
	if err != nil {
		return nil, err
	}
	var out []mixingView
	rounds, gaps := t.Column("round").Ints, t.Column("spectral_gap").Floats
	is, js := t.Column("i").Ints, t.Column("j").Ints
	for k := 0; k < len(rounds); {
		m := mixingView{From: int(rounds[k]), Gap: gaps[k]}
		for ; k < len(rounds) && rounds[k] == int64(m.From); k++ {
			if is[k] < js[k] {
				m.Edges++
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// roundsTable is cell i's rounds table: the finished one, or the rounds
// its train stage reported so far.
func (s *Server) roundsTable(r *http.Request, rep *state.Report, i int) ([]column, error) {
	cell := rep.Cells[i]
	var rounds *artifacts.Table
	if ref, ok := cell.Output(stages.Rounds); ok {
		var err error
		if rounds, err = s.table(r, ref); err != nil {
			return nil, err
		}
	} else if st := cell.Stage(stages.Train); st != nil {
		rounds = report.PartialRounds(&rep.Plan.Cells[i].Config, cell, st)
	}
	if rounds == nil {
		return nil, nil
	}
	var out []column
	for _, c := range rounds.Columns {
		col := column{Name: c.Name, Values: nums(c.Floats)}
		if c.Ints != nil {
			col.Values = make([]num, len(c.Ints))
			for k, v := range c.Ints {
				col.Values[k] = num(v)
			}
		}
		out = append(out, col)
	}
	return out, nil
}

// export answers a table of the manifest (?table=, ?format=) as `ump
// export` writes it: every cell, or ?cell=N alone; ?incomplete=1 adds
// the rounds unfinished cells reported so far (--include-incomplete).
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	data, name, err := s.exportData(r)
	s.mu.RUnlock()
	if err != nil {
		writeError(w, err)
		return
	}
	types := map[string]string{
		"csv":     "text/csv; charset=utf-8",
		"arrow":   "application/vnd.apache.arrow.file",
		"parquet": "application/vnd.apache.parquet",
	}
	w.Header().Set("Content-Type", types[r.URL.Query().Get("format")])
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}

func (s *Server) exportData(r *http.Request) ([]byte, string, error) {
	rep, err := s.report(r)
	if err != nil {
		return nil, "", err
	}
	q := r.URL.Query()
	table, err := oneOf(r, "table", "", report.TableNames())
	if err == nil && table == "" {
		err = badRequest("table=: say which, one of %s", strings.Join(report.TableNames(), ", "))
	}
	if err != nil {
		return nil, "", err
	}
	format, err := oneOf(r, "format", "", artifacts.Formats)
	if err == nil && format == "" {
		err = badRequest("format=: say which, one of %s", strings.Join(artifacts.Formats, ", "))
	}
	if err != nil {
		return nil, "", err
	}
	incomplete := q.Get("incomplete") == "1"
	if incomplete && table != "rounds" {
		return nil, "", badRequest(
			"incomplete=1: only the rounds table has rows before a cell finishes (not %s)",
			table,
		)
	}
	name := fmt.Sprintf("%s-%.12s-%s", fileSafe(rep.Plan.Manifest.Name), rep.Plan.Hash, table)
	if v := q.Get("cell"); v != "" {
		i, err := cellIndex(rep, v)
		if err != nil {
			return nil, "", err
		}
		one := *rep
		one.Plan.Cells, one.CellKeys, one.Cells = rep.Plan.Cells[i:i+1], rep.CellKeys[i:i+1], rep.Cells[i:i+1]
		rep = &one
		name += fmt.Sprintf("-cell%d", i+1)
	}
	t, _, err := report.Export(r.Context(), s.store, []*state.Report{rep}, table, incomplete)
	if err != nil {
		return nil, "", err
	}
	data, err := artifacts.Encode(t, format)
	return data, name + "." + format, err
}

// fileSafe keeps letters, digits, '-', '_' and '.' of a name for a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
