package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateTour = flag.Bool("update-tour", false, "TestTourFigureIsTheQuickstarts: rewrite docs/tour-curves.png")

// TestTourFigureIsTheQuickstarts: the README's figure, docs/tour-curves.png,
// is what ump report draws of the quickstart's results
// (testdata/quickstart-ef21f4c91ee7, written by ump report from make run's
// store; ump plot draws the same bytes), so that a change to the figures
// shows up there: go test ./cmd/ump -run TourFigure -update-tour draws it
// again.
func TestTourFigureIsTheQuickstarts(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	if r := ump(t, t.TempDir(), "report", filepath.Join("testdata", "quickstart-ef21f4c91ee7"), "--out",
		out); r.code != 0 {
		t.Fatalf("report of the quickstart's results: exit %d %s", r.code, r.stderr)
	}
	drawn, err := os.ReadFile(filepath.Join(out, "quickstart-ef21f4c91ee7", "curves-1-test_acc_mean.png"))
	if err != nil {
		t.Fatal(err)
	}
	const tour = "../../docs/tour-curves.png"
	if *updateTour {
		if err := os.WriteFile(tour, drawn, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if committed, err := os.ReadFile(tour); err != nil || !bytes.Equal(committed, drawn) {
		t.Errorf(
			"docs/tour-curves.png is not the figure ump report draws of the quickstart (%v); draw it again: go test "+
				"./cmd/ump -run TourFigure -update-tour",
			err,
		)
	}
}
