package paper

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/published"
	"github.com/ump-lab/ump/report"
)

// TestClaimsOnTiesFlatStepsAndProvisionalEntries: a strict column_order
// fails on a tie and a plain one holds; falls holds on a flat step and
// rises (strict) fails on it; a claim whose entries are provisional is not
// decided ("not run") on ours.
func TestClaimsOnTiesFlatStepsAndProvisionalEntries(t *testing.T) {
	p, err := published.Parse([]byte(`
tables:
  - manifest: toy
    paper: Toy
    columns: ["1", "10"]
    rows:
      - {row: "a(x=1)", name: A, values: ["60.0", "60.0"]}
claims:
  - {claim: strict, tables: [toy], column_order: [["10"], ["1"]], strict: true}
  - {claim: plain, tables: [toy], column_order: [["10"], ["1"]]}
  - {claim: falls, tables: [toy], falls: true}
  - {claim: rises, tables: [toy], rises: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	g := &report.Grid{
		Spec: manifests.Table{
			Rows:    []string{"algorithm"},
			Columns: []string{"partition.alpha"},
			Value:   "test_acc_mean",
		},
		RowLabels: [][]string{{"a(x=1)"}},
		ColLabels: [][]string{{"1"}, {"10"}},
		Entries: [][]report.Entry{
			{{Mean: 0.6, Std: 0.01, Seeds: 3, Provisional: true}, {Mean: 0.7, Std: 0.01, Seeds: 3}},
		},
	}
	pc := ComparePaper(p, nil, g, p.Table("toy"), nil)
	want := []string{
		"fails (A: partition.alpha=10 60.00, partition.alpha=1 60.00)",
		"holds",
		"holds",
		"fails (A: partition.alpha=1 60.00, partition.alpha=10 60.00)",
	}
	for i, v := range pc.Claims {
		if v.Paper != want[i] {
			t.Errorf("claim %s on the paper's numbers: %q, want %q", v.Claim.Claim, v.Paper, want[i])
		}
		if v.Ours != "not run (1 entry missing, e.g. A at partition.alpha=1)" {
			t.Errorf("claim %s on a provisional entry: ours %q, want not run", v.Claim.Claim, v.Ours)
		}
	}
}

// TestWelchIntervalAgainstScipy checks the interval claims are decided
// with (the difference of two means over seeds, Welch–Satterthwaite's
// degrees of freedom) against the same formula in Python with scipy's t
// quantile, at two confidences.
func TestWelchIntervalAgainstScipy(t *testing.T) {
	a, b := []float64{98.58, 98.51, 98.65}, []float64{96.97, 96.51, 97.43, 97.02}
	fa, fb := report.StatOf(a), report.StatOf(b)
	ea := estimate{mean: fa.Mean, terms: []varTerm{{fa.Std * fa.Std / 3, 3}}}
	eb := estimate{mean: fb.Mean, terms: []varTerm{{fb.Std * fb.Std / 4, 4}}}
	script := `import json, sys
from scipy import stats
import statistics as s
a, b, conf = json.load(sys.stdin)
va, vb = s.variance(a)/len(a), s.variance(b)/len(b)
df = (va+vb)**2/(va**2/(len(a)-1) + vb**2/(len(b)-1))
half = stats.t.ppf(1-(1-conf)/2, df)*(va+vb)**0.5
d = s.mean(a) - s.mean(b)
print(json.dumps([d-half, d+half]))`
	for _, conf := range []float64{0.95, 0.8} {
		cmd := exec.Command("/usr/bin/python3", "-c", script)
		in, _ := json.Marshal([]any{a, b, conf})
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("Debian's python3-scipy is not installed (.ci/run installs it): %v", err)
		}
		var want [2]float64
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatalf("python printed %q", out)
		}
		lo, hi := ea.minus(eb).welchInterval(conf)
		if math.Abs(lo-want[0]) > 1e-9 || math.Abs(hi-want[1]) > 1e-9 {
			t.Errorf("at %g: [%v, %v], scipy's [%v, %v]", conf, lo, hi, want[0], want[1])
		}
	}
}
