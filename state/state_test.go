package state

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/eventlog"
	"github.com/ump-lab/ump/internal/datadriven"
	"github.com/ump-lab/ump/manifests"
)

var rewrite = flag.Bool(
	"rewrite",
	false,
	"rewrite the expected outputs of testdata/fold.txt from what the code gives (then read the diff)",
)

// TestFoldGolden folds given events (one JSON event per line, numbered
// in order) into a cell's view and compares it with testdata/fold.txt:
// the status, where its events came from, and each stage's status, round,
// restarts, cache hit and error. A payload that does not decode is an
// error naming the event.
func TestFoldGolden(t *testing.T) {
	datadriven.Run(t, *rewrite, "testdata/fold.txt", func(t *testing.T, at string, c datadriven.Case) string {
		if c.Command != "fold" {
			t.Fatalf("%s: command %q; want fold", at, c.Command)
		}
		evs := make([]eventlog.Event, len(c.Input))
		for i, line := range c.Input {
			if err := json.Unmarshal([]byte(line), &evs[i]); err != nil {
				t.Fatalf("%s: event %d: %v", at, i+1, err)
			}
			evs[i].Seq = uint64(i + 1)
		}
		v, err := FoldCell("c1", evs)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		out := fmt.Sprintf("status: %s\n", v.Status)
		for _, p := range v.Imported {
			out += fmt.Sprintf("imported from %s, attempt %s, signed by %q\n", p.From, p.Attempt, p.Signer)
		}
		for _, st := range v.Stages {
			out += fmt.Sprintf(
				"stage %s: %s, key %s, round %d/%d, restarts %d, cached %v",
				st.Name,
				st.Status,
				st.Key,
				st.Round,
				st.Rounds,
				st.Restarts,
				st.Cached,
			)
			if st.Error != "" {
				out += ", error " + strconv.Quote(st.Error)
			}
			if st.Result != nil && st.Result.Diverged {
				out += ", diverged"
			}
			out += "\n"
		}
		return out
	})
}

// TestFindInWantsFourDigits: a manifest is found by a unique prefix of at
// least MinPrefix digits; a shorter one is refused even when it matches
// one manifest alone, saying how many digits to give.
func TestFindInWantsFourDigits(t *testing.T) {
	regs := []Registration{{Plan: manifests.Plan{Hash: "0b4f57f9aa"}}, {Plan: manifests.Plan{Hash: "a9318d514f"}}}
	for prefix, want := range map[string]string{"0b4f": "0b4f57f9aa", "a9318d514f": "a9318d514f", "0": "", "a93": "",
		"": "", "0b4e": ""} {
		reg, err := FindIn(regs, prefix, "store")
		switch {
		case want != "" && (err != nil || reg.Plan.Hash != want):
			t.Errorf("FindIn(%q) = %v, %v; want %s", prefix, reg, err, want)
		case want == "" && err == nil:
			t.Errorf("FindIn(%q) found %s; want an error", prefix, reg.Plan.Hash)
		case len(prefix) > 0 && len(prefix) < MinPrefix && !strings.Contains(fmt.Sprint(err), "at least 4"):
			t.Errorf("FindIn(%q): %v; want it to ask for at least 4 digits", prefix, err)
		}
	}
}
