package report

import (
	"slices"
	"testing"
)

// TestShortenLabels drops the parameters at their declared defaults and
// those every row shares, keeping what tells the rows apart.
func TestShortenLabels(t *testing.T) {
	got := shorten([]string{"d-sum(alpha=2,beta=0.9)", "d-sum(alpha=0,beta=0.9)", "gt-dsum(alpha=2,beta=0.9,lambda=0.8,momentum_restart=step,tracker_init=paper)", "dpsgd()", "ring"})
	want := []string{"d-sum", "d-sum (alpha=0)", "gt-dsum (momentum_restart=step)", "dpsgd", "ring"}
	if !slices.Equal(got, want) {
		t.Errorf("shorten: %q, want %q", got, want)
	}
	if got := shorten([]string{"qg-dsgdm(beta=0.5,mu=0.8)", "qg-dsgdm(beta=0.5,mu=0.9)"}); !slices.Equal(got, []string{"qg-dsgdm (mu=0.8)", "qg-dsgdm (mu=0.9)"}) {
		t.Errorf("shorten drops only what all rows share: %q", got)
	}
	// qg-dsgdm's mu defaults to its beta: at that default it is dropped,
	// elsewhere kept.
	got = shorten([]string{"qg-dsgdm(beta=0.9,mu=0.9,nesterov=false)", "qg-dsgdm(beta=0.5,mu=0.9,nesterov=false)", "slowmo(base_beta=0,slow_alpha=1,slow_beta=0.5)"})
	if want := []string{"qg-dsgdm", "qg-dsgdm (beta=0.5, mu=0.9)", "slowmo"}; !slices.Equal(got, want) {
		t.Errorf("shorten with a default computed from beta: %q, want %q", got, want)
	}
}
