package reproduction

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ump-lab/ump/manifests"
)

// TestETADoesNotSwingWithOnePace: until this machine has computed for
// `measuring`, the line's ETA is the recorded estimate's; after, a burst of
// fast work moves it by less than half from one line to the next.
func TestETADoesNotSwingWithOnePace(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	l := &Line{w: &out, dirs: 1, name: "d", work: [][]float64{{1000}}, total: 1000, began: clock,
		now: func() time.Time { return clock }}
	l.Estimate(100*60, 1) // the rounds record 100 minutes
	cell := &manifests.Cell{Index: 0, Config: manifests.Manifest{Rounds: 1000}}
	for minute, work := range []int{10, 10, 10, 300, 10} {
		clock = clock.Add(time.Minute)
		l.Count(cell, work, true)
		if minute < 2 && !strings.Contains(out.String(), "(by the recorded compute; measuring this machine)") {
			t.Fatalf("minute %d: %q, want the recorded estimate while measuring", minute+1, out.String())
		}
	}
	var etas []time.Duration
	for _, m := range regexp.MustCompile(`, ETA ([0-9hms.]+)\n`).FindAllStringSubmatch(out.String(), -1) {
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		etas = append(etas, d)
	}
	if len(etas) != 3 {
		t.Fatalf("measured ETAs %v in\n%s; want 3 (minutes 3 to 5)", etas, out.String())
	}
	for i := 1; i < len(etas); i++ {
		if was := etas[i-1] - time.Minute; etas[i] < was/2 || etas[i] > was*3/2 {
			t.Errorf("ETA %v after %v a minute earlier: it swings by half or more\n%s",
				etas[i], etas[i-1], out.String())
		}
	}
	first := regexp.MustCompile(`ETA about (\S+)`).FindStringSubmatch(out.String())
	if first == nil || first[1] != "1h39m0s" {
		t.Errorf("the first ETA: %v, want the recorded 100 minutes less the 1%% done\n%s", first, out.String())
	}
}
