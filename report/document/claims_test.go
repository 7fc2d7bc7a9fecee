package document

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ump-lab/ump/report/resultsdir"
)

// TestDecideAClaimOfOurOwn decides claims REPRODUCING.md could make on
// Table 1 MNIST under engine v3, against verdicts worked out by hand from
// final.csv (lr 10^-1.5 for Local SGD w/ momentum and QG-DSGDm, 10^-1 for
// SlowMo, three seeds each).
func TestDecideAClaimOfOurOwn(t *testing.T) {
	x, err := resultsdir.ReadExportedFinals(
		filepath.Join("..", "..", "results", "engine-v3", "table1-mnist-2c03d21133b3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ claim, want string }{
		// 98.66 against 94.33: difference 4.33, Welch 95% interval about [+0.56, +8.10].
		{`{claim: Local ahead of QG-DSGDm at 0.1, order: [Local SGD w/ momentum, QG-DSGDm], columns: ["0.1"]}`,
			"Local ahead of QG-DSGDm at 0.1: holds"},
		// At non-IID 10, 99.07 against 98.99: the interval holds 0.
		{`{claim: Local ahead of SlowMo everywhere, order: [Local SGD w/ momentum, SlowMo]}`,
			"Local ahead of SlowMo everywhere: not decided"},
		// GT-DSUM as written diverges at every degree.
		{`{claim: GT-DSUM ahead of D-SUM, order: [GT-DSUM, D-SUM]}`,
			"GT-DSUM ahead of D-SUM: cannot be decided: GT-DSUM diverged in all 3 cells"},
		// Rows the paper does not have, by the names the tables print:
		// 95.48 ± 1.00 against 93.79 ± 0.72, interval about [-0.37, +3.75].
		{`{claim: restarted, columns: ["0.1"],
			order: [GT-DSUM (momentum restarted every step), D-SUM (momentum restarted every step)]}`,
			"restarted: not decided"},
	} {
		got, err := Decide(x, "", []byte(c.claim))
		if err != nil {
			t.Errorf("%s: %v", c.claim, err)
			continue
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q...", c.claim, got, c.want)
		}
	}
	// A manifest the paper has no table for: Fashion-MNIST at 10 rounds,
	// Local SGD w/ momentum (lr 10^-1) against QG-DSGDm (lr 10^-1), whose
	// Welch intervals lie above 0 in every column (the smallest lower end,
	// about +5.3 points, at non-IID 10).
	fashion, err := resultsdir.ReadExportedFinals(
		filepath.Join("..", "..", "results", "engine-v3", "table1-fashion-mnist-54843b674257"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decide(fashion, "", []byte(`{claim: c, order: [Local SGD w/ momentum, QG-DSGDm], strict: true}`))
	if err != nil || !strings.HasPrefix(got, "c: holds") {
		t.Errorf("Fashion-MNIST: %q, %v; want %q...", got, err, "c: holds")
	}
	for _, c := range []struct{ scope, claim, want string }{
		{"", `{claim: c, order: [Local SGD, QG-DSGDm]}`, "has no row Local SGD"},
		{"", `{claim: c, line: 443, order: [Local SGD w/ momentum, QG-DSGDm]}`, "leave out line, quote and tables"},
		{"", `{claim: c}`, "give exactly one of order"},
		{"", `{order: [Local SGD w/ momentum, QG-DSGDm]}`, "give its words"},
		{"", `{claim: c, ordre: [Local SGD w/ momentum, QG-DSGDm]}`, "field ordre not found"},
		{"column", `{claim: c, order: [Local SGD w/ momentum, QG-DSGDm]}`, `declares no select scope "column"`},
	} {
		if _, err := Decide(x, c.scope, []byte(c.claim)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (scope %q): %v, want an error saying %q", c.claim, c.scope, err, c.want)
		}
	}
}
