package report

import "testing"

func TestPlainLeavesNoMarkup(t *testing.T) {
	for in, want := range map[string]string{
		"go-cpu-float32/v2 openblas (OpenBLAS 0.3.21 NO_LAPACKE MAX_THREADS=64)":                 "go-cpu-float32/v2 openblas (OpenBLAS 0.3.21 NO_LAPACKE MAX_THREADS=64)",
		"v0.0.0-20261126222146-7fd2a91bf0c5 7fd2a91bf0c516c56b5c983743556f2412c43cf4 (modified)": "v0.0.0-20261126222146-7fd2a91bf0c5 7fd2a91bf0c516c56b5c983743556f2412c43cf4 (modified)",
		"<img src=x onerror=alert(1)>":              "?img src=x onerror=alert(1)?",
		"a | b\n[c](d) `e` *f* _g_ &amp;":           "a ? b?[c]?d) ?e? ?f? _g_ ?amp;",
		"gomlx-float32/v4 xla cuda:0 [processId=0]": "gomlx-float32/v4 xla cuda:0 [processId=0]",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
