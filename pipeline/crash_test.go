package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ump-lab/ump/artifacts"
)

// errInjected is the failure faults inject.
var errInjected = errors.New("injected write failure")

// faults fails the k-th write to a store (events and blobs counted
// together) and every write after it, as a disk or process that dies
// there would. With lost the k-th write does not happen; without, it
// happens but its caller hears it failed (the process died before the
// acknowledgement).
type faults struct {
	k, n int
	lost bool
}

func (f *faults) before() error {
	f.n++
	if f.n > f.k || (f.n == f.k && f.lost) {
		return fmt.Errorf("write %d: %w", f.n, errInjected)
	}
	return nil
}

func (f *faults) after() error {
	if f.n == f.k && !f.lost {
		return fmt.Errorf("write %d (done): %w", f.n, errInjected)
	}
	return nil
}

// faultyBlobs routes a blob store's writes through faults.
type faultyBlobs struct {
	artifacts.Store
	f *faults
}

func (b faultyBlobs) Put(ctx context.Context, data []byte) (artifacts.Ref, error) {
	if err := b.f.before(); err != nil {
		return artifacts.Ref{}, err
	}
	ref, err := b.Store.Put(ctx, data)
	if err == nil {
		err = b.f.after()
	}
	return ref, err
}

// crashManifest is a small sweep whose cells checkpoint, evaluate and
// share their partition and topology stages.
const crashManifest = `version: 1
name: crash
task: {dataset: quadratic, quadratic: {dim: 20, sigma: 0.1}}
workers: 4
rounds: 4
local_steps: 2
lr: 0.05
algorithm: {name: gt-dsum}
sweep:
  seed: [1, 2]
evaluate: {every: 1}
checkpoint: {every: 2}
`

// TestEveryCrashPointResumes fails the k-th write of a run, for every k
// and both ways a write can fail (lost, or done but unacknowledged), then
// reopens the store and reruns: the rerun must complete every cell with
// the uninterrupted run's output digests.
func TestEveryCrashPointResumes(t *testing.T) {
	plan := parse(t, crashManifest)
	run := func(dir string, f *faults) error {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if f != nil {
			s.Log.fault = func(committed bool) error {
				if committed {
					return f.after()
				}
				return f.before()
			}
			s.Blobs = faultyBlobs{Store: s.Blobs, f: f}
		}
		_, err = (&Runner{Store: s, Stages: DefaultStages()}).Run(context.Background(), plan)
		return err
	}
	digests := func(dir string) map[string]string {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return outputDigests(t, s, plan.Hash)
	}

	clean := t.TempDir()
	count := &faults{k: 1 << 30}
	if err := run(clean, count); err != nil {
		t.Fatal(err)
	}
	want, writes := digests(clean), count.n
	if writes < 20 {
		t.Fatalf("the sweep made only %d writes; too few to exercise crash points", writes)
	}
	for _, lost := range []bool{true, false} {
		for k := 1; k <= writes; k++ {
			dir := t.TempDir()
			if err := run(dir, &faults{k: k, lost: lost}); !errors.Is(err, errInjected) {
				t.Fatalf("write %d of %d failing (lost %v): run returned %v; want the injected failure", k, writes, lost, err)
			}
			if err := run(dir, nil); err != nil {
				t.Fatalf("rerun after write %d failed (lost %v): %v", k, lost, err)
			}
			got := digests(dir)
			for name, d := range want {
				if got[name] != d {
					t.Errorf("rerun after write %d failed (lost %v): %s is %s, want %s", k, lost, name, got[name], d)
				}
			}
			if len(got) != len(want) {
				t.Errorf("rerun after write %d failed (lost %v): %d outputs, want %d", k, lost, len(got), len(want))
			}
		}
	}
	t.Logf("%d crash points, each lost and unacknowledged, all resumed to the same digests", writes)
}
