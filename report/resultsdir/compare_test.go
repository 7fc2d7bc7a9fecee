package resultsdir

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/report/paper"
)

// committed is a results directory of this repository: Table 1 of MNIST
// at full scale, 252 cells.
const committed = "../../results/table1-mnist-2c03d21133b3"

// TestCompareFindsWhatDiffers compares committed results with themselves
// (nothing differs) and with a copy in which one completed cell diverged
// and another's accuracy rose by 0.2: the cells, the table entries and
// the counts say so.
func TestCompareFindsWhatDiffers(t *testing.T) {
	a, err := ReadExported(committed)
	if err != nil {
		t.Fatal(err)
	}
	same, err := Compare("A", "B", a, a)
	if err != nil {
		t.Fatal(err)
	}
	md := same.Markdown()
	for _, want := range []string{"252 cells finished in both (0 in A alone, 0 in B alone). The status " +
		"agrees in 252; it differs in 0.",
		"largest 0.0000", "Entries both have that differ by 0.001 or more, or in status (0): none.",
		"Choices of lr that differ (0): none.",
		"Verdicts on the paper's claims that differ (0 of the 3 that both sides can decide; " +
			"1 that a side cannot decide left out;",
		"each entry reads test_acc_mean / consensus_acc, each the mean ± std over its seeds"} {
		if !strings.Contains(md, want) {
			t.Errorf("A against itself lacks %q:\n%s", want, md)
		}
	}
	if strings.HasSuffix(strings.TrimSpace(md), ":") || strings.Contains(md, "(0):\n") {
		t.Errorf("a heading ends in a colon with nothing after it:\n%s", md)
	}
	// B: a copy with D-SUM's first completed cell at its chosen lr (10^-2)
	// diverged and the next one's value raised.
	b := *a
	final := &artifacts.Table{Metadata: a.Final.Metadata}
	for _, c := range a.Final.Columns {
		c.Strings, c.Floats, c.Null = slices.Clone(c.Strings), slices.Clone(c.Floats), slices.Clone(c.Null)
		final.Columns = append(final.Columns, c)
	}
	b.Final = final
	b.Registration.Plan.Cells = slices.Clone(a.Registration.Plan.Cells) // as another engine computed them
	for i := range b.Registration.Plan.Cells {
		b.Registration.Plan.Cells[i].Config.Engine = "gpu"
	}
	status, value, cells := final.Column("status"), final.Column("test_acc_mean"), final.Column("cell")
	label := func(r int) string { return a.Registration.Plan.Cells[cells.Ints[r]-1].LabelString() }
	var changed []int
	for r := range status.Strings {
		if status.Strings[r] == "completed" &&
			strings.HasPrefix(label(r), "algorithm=d-sum(alpha=2,beta=0.9) lr=0.01 ") &&
			len(changed) < 2 {
			changed = append(changed, r)
		}
	}
	status.Strings[changed[0]] = "diverged"
	value.Floats[changed[1]] += 0.2
	cmp, err := Compare("A", "B", a, &b)
	if err != nil {
		t.Fatal(err)
	}
	md = cmp.Markdown()
	for _, want := range []string{"The status agrees in 251; it differs in 1.", "- " + label(changed[0]) + ": A " +
		"completed, B diverged",
		"Cells that differ by 0.01 or more (1, largest first):\n- " + label(changed[1]) + ": +0.2000"} {
		if !strings.Contains(md, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "Entries both have that differ by 0.001 or more, or in status (") ||
		strings.Contains(md, "or in status (0)") {
		t.Errorf("no table entry differs:\n%s", md)
	}
	other := b
	other.Registration.Plan.Manifest.Name = "table2-mnist"
	if _, err := Compare("A", "C", a, &other); err == nil ||
		!strings.Contains(err.Error(), "compare two computations of one manifest") {
		t.Errorf("two manifests compared: %v", err)
	}
}

// TestReadExportedFinalsNamesWhatIsAbsent: a results directory shipped
// without files its record lists that the tables give (the rounds' CSV
// copy, the manifest) and without its figures is read by ReadExported,
// which writes them again, and by ReadExportedFinals, which names them;
// an edited file is refused by both.
func TestReadExportedFinalsNamesWhatIsAbsent(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{RegistrationFile, FinalFile, RoundsFile, RecordFile, "final.csv"} {
		data, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadExported(dir); err != nil {
		t.Fatalf("ReadExported of a directory without its figures, rounds' CSV copy and manifest: %v", err)
	}
	x, err := ReadExportedFinals(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"manifest.yaml", RoundsCSVFile}; !slices.Equal(x.Absent, want) {
		t.Errorf("absent %v, want %v", x.Absent, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "final.csv"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(string) (*Exported, error){"ReadExported": ReadExported,
		"ReadExportedFinals": ReadExportedFinals} {
		if _, err := read(dir); err == nil || !strings.Contains(err.Error(), "was changed after ump report wrote it") {
			t.Errorf("%s read an edited file: %v", name, err)
		}
	}
}

// TestCompareSaysWhichSideFinishedAndEachSidesVerdicts: a cell finished
// in one computation alone is counted on its side; and each side's
// verdicts on the paper's claims are its own: with D-SUM's accuracies
// raised by 0.05 in B (to 1 at most), the claims that differ say A's
// verdict as A alone gives it and B's as B alone gives it.
func TestCompareSaysWhichSideFinishedAndEachSidesVerdicts(t *testing.T) {
	a, err := ReadExported(committed)
	if err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(final *artifacts.Table, label func(r int) string) *artifacts.Table) *Exported {
		x := *a
		final := &artifacts.Table{Metadata: a.Final.Metadata}
		for _, c := range a.Final.Columns {
			c.Strings, c.Floats, c.Null, c.Ints = slices.Clone(
				c.Strings,
			), slices.Clone(
				c.Floats,
			), slices.Clone(
				c.Null,
			), slices.Clone(
				c.Ints,
			)
			final.Columns = append(final.Columns, c)
		}
		cells := final.Column("cell")
		x.Final = edit(final, func(r int) string { return a.Registration.Plan.Cells[cells.Ints[r]-1].LabelString() })
		return &x
	}
	// partial: the first row's cell not finished (its row dropped)
	partial := edited(func(final *artifacts.Table, _ func(int) string) *artifacts.Table {
		for i := range final.Columns {
			c := &final.Columns[i]
			if c.Strings != nil {
				c.Strings = c.Strings[1:]
			}
			if c.Floats != nil {
				c.Floats = c.Floats[1:]
			}
			if c.Ints != nil {
				c.Ints = c.Ints[1:]
			}
			if c.Null != nil {
				c.Null = c.Null[1:]
			}
		}
		return final
	})
	for _, c := range []struct {
		a, b *Exported
		want string
	}{{a, partial, "251 cells finished in both (1 in A alone, 0 in B alone)"}, {partial, a, "251 cells finished in " +
		"both (0 in A alone, 1 in B alone)"}} {
		cmp, err := Compare("A", "B", c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if md := cmp.Markdown(); !strings.Contains(md, c.want) {
			t.Errorf("the comparison lacks %q:\n%s", c.want, md)
		}
	}
	raised := edited(func(final *artifacts.Table, label func(r int) string) *artifacts.Table {
		value := final.Column("test_acc_mean")
		for r := range value.Floats {
			if strings.HasPrefix(label(r), "algorithm=d-sum(") {
				value.Floats[r] = min(1, value.Floats[r]+0.05)
			}
		}
		return final
	})
	alone := func(x *Exported) map[string]string {
		cmp, err := Compare("A", "B", x, x)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, v := range cmp.VerdictsA {
			out[v.Claim.Claim] = v.Ours
		}
		return out
	}
	raised.Signer = "ed25519:a-key-of-bob"
	va, vb := alone(a), alone(raised)
	cmp, err := Compare("A", "B", a, raised)
	if err != nil {
		t.Fatal(err)
	}
	md, differ := cmp.Markdown(), 0
	for claim, v := range va {
		if paper.VerdictWord(v) == paper.VerdictWord(vb[claim]) {
			continue
		}
		differ++
		if want := fmt.Sprintf("- %s: A %s; B %s\n", claim, v, vb[claim]); !strings.Contains(md, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, md)
		}
	}
	if differ == 0 {
		t.Fatalf("raising D-SUM by 0.05 changed no verdict: the test cannot tell the sides apart\n%s", md)
	}
	for _, want := range []string{"- A: A (manifest 2c03d21133b3; go-cpu-float32/v2 ", "; results unsigned: no key " +
		"vouches for them)\n- B: B (manifest 2c03d21133b3; ",
		"; results signed by ed25519:a-key-of-bob)\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("the comparison does not say who vouches for each side (%q):\n%s", want, md)
		}
	}
}

// TestCompareOfASampleSaysTheSeedsDiffer: a one-seed sample of committed
// results (its cells identical) against the committed three seeds says
// first that the cells match and that the entries differ because the
// seeds do, and gives only the verdicts both sides can decide.
func TestCompareOfASampleSaysTheSeedsDiffer(t *testing.T) {
	full, err := ReadExported(committed)
	if err != nil {
		t.Fatal(err)
	}
	// the sample: the manifest run with sweep.seed=[1], its cells as the
	// committed ones of seed 1
	sample := *full
	plan := full.Registration.Plan
	plan.Manifest.Sweep = maps.Clone(plan.Manifest.Sweep)
	plan.Manifest.Sweep["seed"] = []json.RawMessage{json.RawMessage("1")}
	plan.Cells = nil
	renumbered := map[int64]int64{}
	for _, c := range full.Registration.Plan.Cells {
		if c.Config.Seed == 1 {
			renumbered[int64(c.Index)+1] = int64(len(plan.Cells)) + 1
			c.Index = len(plan.Cells)
			plan.Cells = append(plan.Cells, c)
		}
	}
	sample.Registration.Plan = plan
	var rows []int
	for r, cell := range full.Final.Column("cell").Ints {
		if _, ok := renumbered[cell]; ok {
			rows = append(rows, r)
		}
	}
	sample.Final = full.Final.Select(rows)
	cells := sample.Final.Column("cell")
	cells.Ints = slices.Clone(cells.Ints)
	for r, cell := range cells.Ints {
		cells.Ints[r] = renumbered[cell]
	}
	cmp, err := Compare("sample", "committed", &sample, full)
	if err != nil {
		t.Fatal(err)
	}
	md := cmp.Markdown()
	head, _, _ := strings.Cut(md, "**Cells.**")
	want := fmt.Sprintf(
		"**In short.** %d cells are in both, matched by their settings (the engine aside); %d of them have the same "+
			"status and test_acc_mean. "+
			"The table's entries differ because their seeds differ: each of A's is a mean over 1 seed, each of B's "+
			"over 3 seeds; compare the cells, not the entries.",
		len(rows),
		len(rows),
	)
	if !strings.Contains(head, want) {
		t.Errorf("the comparison's first lines lack %q:\n%s", want, head)
	}
	// GT-DSUM's claim cannot be decided on either side (it diverged in
	// every cell): left out, and counted
	_, verdicts, ok := strings.Cut(md, "Verdicts on the paper's claims")
	if !ok ||
		!strings.HasPrefix(
			verdicts,
			" that differ (1 of the 3 that both sides can decide; 1 that a side cannot decide left out;",
		) ||
		strings.Contains(verdicts, "not run") ||
		strings.Contains(verdicts, "cannot be decided") {
		t.Errorf("the verdicts do not leave out, and count, the claim a side cannot decide:%s", verdicts)
	}
	if same, _ := Compare("A", "B", full, full); !strings.Contains(same.Markdown(), "on both sides (3 seeds each)") {
		t.Errorf("the committed results against themselves do not say the seeds are the same:\n%s", same.Markdown())
	}
}

// TestCompareWritesLargeDifferencesShort: an objective's gap that differs
// by 10^9 is written with 4 significant digits, not 4 decimals.
func TestCompareWritesLargeDifferencesShort(t *testing.T) {
	a, b := twoCells(t), twoCells(t)
	b.Final.Column("objective_gap").Floats[0] += 1e9
	b.Rounds.Column("objective_gap").Floats[1] += 1e9
	cmp, err := Compare("A", "B", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if md, want := cmp.Markdown(), "median +1e+09; |B − A| median 1e+09, 90th percentile 1e+09, largest 1e+09; 0 "+
		"identical."; !strings.Contains(
		md,
		want,
	) {
		t.Errorf("the comparison lacks %q:\n%s", want, md)
	}
}
