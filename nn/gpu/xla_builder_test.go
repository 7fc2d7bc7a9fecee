//go:build xla

package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/nn/nntest"
)

// buildOnlyRecorded starts the error of every compilation the build-only
// plugin (testdata/pjrt_build_only.c) refuses after recording it.
const buildOnlyRecorded = "build-only PJRT plugin: recorded "

// buildOnlyDevice builds testdata/pjrt_build_only.c against go-xla's
// pjrt_c_api.h and opens it as a device whose programs go into dir. Its
// file name says "cuda", so GoMLX and ump treat it as a CUDA plugin, as on
// a GPU host (float32 products with precision HIGHEST).
func buildOnlyDevice(t *testing.T, dir string) *Device {
	t.Helper()
	goXLA, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		t.Fatalf("finding go-xla's module (its pkg/pjrt/pjrt_c_api.h): go list: %v", err)
	}
	header := filepath.Join(strings.TrimSpace(string(goXLA)), "pkg", "pjrt")
	plugin := filepath.Join(t.TempDir(), "pjrt_cuda_build_only.so")
	build := exec.Command(
		"gcc",
		"-std=c11",
		"-Wall",
		"-Werror",
		"-shared",
		"-fPIC",
		"-O1",
		"-I",
		header,
		"-o",
		plugin,
		filepath.Join("testdata", "pjrt_build_only.c"),
	)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the build-only PJRT plugin: %v\n%s", err, out)
	}
	t.Setenv("UMP_PJRT_RECORD", dir)
	return NewDevice("xla:" + plugin)
}

// built checks that a program went through XLA's builder: its compilation
// reached the build-only plugin, which recorded it and refused it.
func built(t *testing.T, program string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: compiled on the build-only plugin, which compiles nothing", program)
	case !strings.Contains(err.Error(), buildOnlyRecorded):
		t.Errorf("%s: XLA's builder refused it: %v", program, err)
	}
}

// TestXLABuilderAcceptsEveryProgram builds every program the GPU engine
// compiles through go-xla's StableHLO builder — the code that refuses a
// program on a GPU host, where GoMLX's Go backend accepts it — by opening
// the build-only PJRT plugin: the round program of every algorithm at
// K = 1 and K = 3 (LeNet, with dropout) and of D-SUM for every model, each
// cohort's evaluation programs and state transfers, the per-step engine's
// programs for every model, doctor's check programs, and an Exact
// cohort's programs (GT-DSUM, K = 3: loops within loops). Then every float32
// DotGeneral of the recorded programs must carry precision HIGHEST, as a
// CUDA plugin needs (XLA's DEFAULT lets cuBLAS round products to TF32).
func TestXLABuilderAcceptsEveryProgram(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("TMPREC"); d != "" {
		dir = d
	}
	dev := buildOnlyDevice(t, dir)
	if _, err := dev.Backend(); err != nil {
		t.Fatal(err)
	}
	models := []struct {
		name, model string
		data        *datasets.Dataset
	}{
		{"lenet-mnist", "lenet", cohortData()},
		{"lenet-cifar10", "lenet", nntest.WithTest(nntest.RandomData([]int{3, 32, 32}, 10, 96, 0, 0), 40)},
		{"cnn-emnist", "cnn", nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 62, 96, 0, 0), 40)},
		{"embedding-bag-agnews", "embedding-bag", nntest.WithTest(textData(500, 4, 96), 40)},
		{"mlp-mnist", "mlp", nntest.WithTest(nntest.RandomData([]int{1, 28, 28}, 10, 96, 0, 0), 40)},
	}
	for _, name := range algorithms.Family.Names() {
		for _, k := range []int{1, 3} {
			cc := algorithmCases()[name]
			if cc.k < k {
				continue // defined for one local step only
			}
			cc.k = k
			buildCohort(t, dev, "lenet", models[0].data, cc, false)
		}
	}
	for _, m := range models {
		buildCohort(t, dev, m.model, m.data, algorithmCases()["d-sum"], false)
		gpu, err := New(m.model, m.data, 7, dev)
		if err != nil {
			t.Fatal(err)
		}
		x, g := [][]float32{make([]float32, gpu.Params())}, [][]float32{make([]float32, gpu.Params())}
		err = gpu.Gradients(nn.Step{Round: 1, Local: 1}, x, g, [][]int{{0, 1, 2}}, make([]float64, 1))
		built(t, m.name+": the per-step gradients", err)
		_, err = gpu.Evaluate(x, &m.data.Test)
		built(t, m.name+": the per-step evaluation", err)
	}
	_, err := runCheck(dev, checkInputs())
	built(t, "doctor's check program", err)
	_, err = dev.CheckExactOrder(cpuReference)
	built(t, "doctor's exact-order check", err)
	buildCohort(t, dev, "lenet", models[0].data, algorithmCases()["gt-dsum"], true)

	recorded, err := filepath.Glob(filepath.Join(dir, "program-*.mlir"))
	if err != nil || len(recorded) == 0 {
		t.Fatalf("the build-only plugin recorded no program in %s (%v)", dir, err)
	}
	dots := 0
	for _, file := range recorded {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range dotGeneral.FindAllStringSubmatch(string(text), -1) {
			if !strings.HasSuffix(op[2], "f32") {
				continue // a float64 product (the gossip's) or an integer one
			}
			dots++
			if !strings.Contains(
				op[1],
				"precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
			) {
				t.Errorf("%s: a float32 DotGeneral without precision HIGHEST:\n%s", filepath.Base(file), op[0])
			}
		}
	}
	if dots == 0 {
		t.Errorf(
			"no float32 DotGeneral in the %d recorded programs: the precision check checked nothing",
			len(recorded),
		)
	}
	t.Logf(
		"%d programs went through XLA's builder; %d float32 DotGenerals, each with precision HIGHEST",
		len(recorded),
		dots,
	)
}

// dotGeneral matches a DotGeneral of StableHLO's generic text: its
// attributes, then its result's element type.
var dotGeneral = regexp.MustCompile(
	`(?s)"stablehlo\.dot_general"\([^)]*\) \{(.*?)\} : \([^)]*\) -> tensor<(?:[0-9]+x)*([a-z0-9]+)>`,
)

// buildCohort builds a cohort's programs through a device's compiler
// without running anything: the round program (on the state as zeros and
// a round's inputs), both evaluation programs and the state transfers;
// exact: an Exact cohort's.
func buildCohort(t *testing.T, dev *Device, model string, data *datasets.Dataset, cc cohortCase, exact bool) {
	t.Helper()
	what := model + " " + cc.cfgs[0].Name
	if cc.k > 1 {
		what += " K=3"
	}
	if exact {
		what += " (exact)"
	}
	co, err := NewCohort(
		dev,
		data,
		nn.CohortShape{Model: model, Algorithm: cc.cfgs[0].Name, Cells: len(cc.cfgs), Workers: cohortWorkers,
			LocalSteps: cc.k, Batch: cohortBatch, Exact: exact},
	)
	if err != nil {
		t.Fatal(err)
	}
	c := co.(*xlaCohort)
	cells := make([]nn.CellRound, len(cc.cfgs))
	for i := range cells {
		cells[i] = nn.CellRound{
			Active:  true,
			Config:  cc.cfgs[i],
			Seed:    cc.seeds[i],
			Round:   1,
			LR:      cc.lrs[i],
			Mix:     ringOf(cohortWorkers),
			Batches: builderBatches(cc.seeds[i], data.Train.Len(), cc.k),
		}
	}
	inputs, err := c.roundInputs(cells)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.roundArgs(inputs, false)
	if err != nil {
		t.Fatal(err)
	}
	built(t, what+": the round program", c.round.PreCompile(args...))
	built(t, what+": the evaluation program", c.eval.PreCompile(append([]any{c.state[0]}, c.test.args()...)...))
	one := tensors.FromFlatDataAndDimensions(
		make([]float32, cohortWorkers*c.model.Params),
		cohortWorkers,
		c.model.Params,
	)
	built(t, what+": one cell's evaluation program", c.evalOne.PreCompile(append([]any{one}, c.test.args()...)...))
	rows := tensors.FromFlatDataAndDimensions(make([]int32, cohortWorkers), cohortWorkers, 1)
	built(t, what+": the state's download", c.rows.PreCompile(c.state[0], rows))
	all := len(cc.cfgs) * cohortWorkers
	built(t, what+": the state's upload", c.setRows.PreCompile(
		c.state[0],
		one,
		tensors.FromFlatDataAndDimensions(
			make([]int32, all),
			all,
			1,
		),
		tensors.FromFlatDataAndDimensions(make([]bool, all), all, 1),
	))
}

// builderBatches are every worker's k batches of cohortBatch samples of n.
func builderBatches(seed uint64, n, k int) [][][]int {
	r := rng.New(seed, "builder-batches")
	out := make([][][]int, cohortWorkers)
	for i := range out {
		for range k {
			out[i] = append(out[i], r.Perm(n)[:cohortBatch])
		}
	}
	return out
}
