package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotWritesCurvesAndHeatMaps(t *testing.T) {
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(tableManifest, "lr: [0.02, 0.05, 5]", "lr: [0.05]", 1))
	hash := hashOf(t, ump(t, store, "run", m))
	out := t.TempDir()
	r := ump(t, store, "plot", "--out", out, hash[:8])
	if r.code != 0 {
		t.Fatalf("plot: %d %s", r.code, r.stderr)
	}
	for _, name := range []string{"curves-1-topology.kind=ring", "curves-2-topology.kind=full"} {
		f, err := os.Open(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatalf("%v; plot wrote:\n%s", err, r.stdout)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", name, err)
		} else if img.Bounds().Dx() < 500 {
			t.Errorf("%s.png: %v, want at least 500 pixels wide", name, img.Bounds())
		}
		svg, _ := os.ReadFile(filepath.Join(out, name+".svg"))
		if !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "d-sum(alpha=0,beta=0.9) (3 seeds)") {
			t.Errorf("%s.svg lacks the drawing or the legend", name)
		}
	}
	bits := t.TempDir()
	if r := ump(t, store, "plot", "--x", "bits", "--format", "svg", "--out", bits, hash[:8]); r.code != 0 {
		t.Errorf("--x bits: exit %d %s", r.code, r.stderr)
	}
	if svg, _ := os.ReadFile(filepath.Join(bits, "curves-1-topology.kind=ring.svg")); !strings.Contains(string(svg), "bits_sent_per_worker") {
		t.Errorf("--x bits: the figure's x axis is not bits_sent_per_worker")
	}
	if r := ump(t, store, "plot", "--y", "no_such_column", "--out", out, hash[:8]); r.code != 2 || !strings.Contains(r.stderr, `no column "no_such_column"`) {
		t.Errorf("--y of a missing column: exit %d %s", r.code, r.stderr)
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
