package main

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPlotWritesCurvesAndHeatMaps draws a manifest's figures as PNG (300
// dpi, the legend in a strip under the axes), SVG and PDF, with readable
// labels (parameters at their defaults left out, the tuned lr shown, the
// layout's labels map applied) and diverged curves marked.
func TestPlotWritesCurvesAndHeatMaps(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.NewReplacer("lr: [0.02, 0.05, 5]", "lr: [0.05, 5]",
		"select: lr}", "select: lr, labels: {objective_gap: optimality gap, ring: a ring}}").Replace(tableManifest))
	hash := hashOf(t, ump(t, store, "run", m))
	out := t.TempDir()
	r := ump(t, store, "plot", "--per-column", "--out", out, hash[:8])
	if r.code != 0 {
		t.Fatalf("plot: %d %s", r.code, r.stderr)
	}
	for _, name := range []string{"curves-1-topology-kind-ring", "curves-2-topology-kind-full"} {
		f, err := os.Open(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatalf("%v; plot wrote:\n%s", err, r.stdout)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", name, err)
		} else if img.Bounds().Dx() != 6*300 || img.Bounds().Dy() <= 4*300 {
			t.Errorf("%s.png: %v, want a 6 inch wide plot at 300 dpi, its axes 4 inches high and the legend under "+
				"them", name, img.Bounds())
		}
		svg, _ := os.ReadFile(filepath.Join(out, name+".svg"))
		for _, want := range []string{"<svg", "d-sum (alpha=0), lr=0.05 (3 seeds)", ">d-sum, " +
			"lr=0.05 (3 seeds)", "optimality gap"} {
			if !strings.Contains(string(svg), want) {
				t.Errorf("%s.svg lacks %q", name, want)
			}
		}
	}
	if svg, _ := os.ReadFile(filepath.Join(out, "curves-1-topology-kind-ring.svg")); !strings.Contains(
		string(svg),
		"topology.kind = a ring",
	) {
		t.Error("the figure's title does not use the labels map")
	}
	pdf := t.TempDir()
	if r := ump(t, store, "plot", hash, "--per-column", "--format", "pdf", "--out", pdf); r.code != 0 {
		t.Fatalf("--format pdf: exit %d %s", r.code, r.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(pdf, "curves-1-topology-kind-ring.pdf")); !strings.HasPrefix(
		string(data),
		"%PDF",
	) {
		t.Error("--format pdf did not write a PDF")
	}

	// Only a diverging lr: the curves stop, marked, and the legend says so.
	div := writeFile(t, "div.yaml", strings.Replace(tableManifest, "lr: [0.02, 0.05, 5]", "lr: [5]", 1))
	dh := hashOf(t, ump(t, store, "run", div))
	divOut := t.TempDir()
	if r := ump(t, store, "plot", dh, "--per-column", "--format", "svg", "--y", "train_loss", "--out",
		divOut); r.code != 0 {
		t.Fatalf("plot of diverged cells: exit %d %s", r.code, r.stderr)
	}
	if svg, _ := os.ReadFile(filepath.Join(divOut, "curves-1-topology-kind-ring.svg")); !strings.Contains(
		string(svg),
		"diverged (3 of 3 seeds) at ×",
	) {
		t.Errorf("the legend does not mark the diverged curves:\n%.2000s", svg)
	}
	bits := t.TempDir()
	if r := ump(t, store, "plot", "--per-column", "--x", "bits", "--format", "svg", "--out", bits,
		hash[:8]); r.code != 0 {
		t.Errorf("--x bits: exit %d %s", r.code, r.stderr)
	}
	if svg, _ := os.ReadFile(filepath.Join(bits, "curves-1-topology-kind-ring.svg")); !strings.Contains(
		string(svg),
		"bits sent per worker",
	) {
		t.Errorf("--x bits: the figure's x axis is not bits_sent_per_worker")
	}
	if r := ump(t, store, "plot", "--y", "no_such_column", "--out", out, hash[:8]); r.code != 2 ||
		!strings.Contains(r.stderr, `no column "no_such_column"`) {
		t.Errorf("--y of a missing column: exit %d %s", r.code, r.stderr)
	}

	// By default the columns are panels of one figure; --against draws
	// the final figure against a swept path; no file name has '='.
	panels := t.TempDir()
	if r := ump(t, store, "plot", hash, "--against", "topology.kind", "--format", "svg", "--out", panels); r.code != 0 {
		t.Fatalf("plot --against: exit %d %s", r.code, r.stderr)
	}
	names, _ := filepath.Glob(filepath.Join(panels, "*"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	if want := []string{"against-topology-kind.svg", "curves.svg"}; !slices.Equal(names, want) {
		t.Errorf("plot --against wrote %v, want %v", names, want)
	}
	svg, _ := os.ReadFile(filepath.Join(panels, "curves.svg"))
	for _, want := range []string{">topology.kind=ring<", ">topology.kind=full<", ">quad-table<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the panels lack %q", want)
		}
	}
	if svg, _ := os.ReadFile(filepath.Join(panels, "against-topology-kind.svg")); !strings.Contains(
		string(svg),
		">ring<",
	) ||
		!strings.Contains(string(svg), ">full<") {
		t.Errorf("the figure against topology.kind does not show its values on the x axis")
	}
	if r := ump(t, store, "plot", hash, "--against", "seed", "--out", panels); r.code != 2 ||
		!strings.Contains(r.stderr, "the manifest sweeps algorithm, lr, seed, topology.kind") {
		t.Errorf("--against seed: exit %d %s", r.code, r.stderr)
	}

	// The partition of a data set is drawn as a heat map, before training.
	syn := writeFile(t, "s.yaml", strings.Replace(inspectManifest, "DATASET", "synthetic", 1))
	sh := hashOf(t, ump(t, store, "run", "--until", "partition", syn))
	r = ump(t, store, "plot", "--format", "png", "--out", out, sh[:8])
	if r.code != 0 || !strings.Contains(r.stdout, "no completed training") {
		t.Fatalf("plot after --until partition: %d %s %s", r.code, r.stdout, r.stderr)
	}
	f, err := os.Open(filepath.Join(out, "partition-cell1.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("partition heat map: %v", err)
	}
}
