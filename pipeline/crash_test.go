package pipeline

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/eventlog"

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

// faultyLog routes an event log's writes through faults.
type faultyLog struct {
	eventlog.Log
	f *faults
}

func (l faultyLog) Append(ev *eventlog.Event) error {
	return l.write(func() error { return l.Log.Append(ev) })
}

func (l faultyLog) Import(evs []eventlog.Event) error {
	return l.write(func() error { return l.Log.Import(evs) })
}

func (l faultyLog) write(commit func() error) error {
	if err := l.f.before(); err != nil {
		return err
	}
	if err := commit(); err != nil {
		return err
	}
	return l.f.after()
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
		r := &Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil), Engines: engines.Set{}}
		if f != nil {
			r.Log, r.Blobs = faultyLog{Log: s.Log, f: f}, faultyBlobs{Store: s.Blobs, f: f}
		}
		_, err = r.Run(context.Background(), plan)
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
				t.Fatalf(
					"write %d of %d failing (lost %v): run returned %v; want the injected failure",
					k,
					writes,
					lost,
					err,
				)
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

// fullDisk fails every blob write from the k-th on as a full disk does.
type fullDisk struct {
	artifacts.Store
	k, n int
}

func (b *fullDisk) Put(ctx context.Context, data []byte) (artifacts.Ref, error) {
	if b.n++; b.n >= b.k {
		return artifacts.Ref{}, fmt.Errorf("writing blob %d: %w", b.n, syscall.ENOSPC)
	}
	return b.Store.Put(ctx, data)
}

// TestStoreFailureStopsTheRun: when the store cannot take a stage's
// outputs (a full disk), the run stops with that error instead of
// recording the cell as failed, and a rerun finishes every cell with the
// digests of a run that never stopped.
func TestStoreFailureStopsTheRun(t *testing.T) {
	plan := parse(t, crashManifest)
	run := func(dir string, k int) error {
		s, err := Open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if k > 0 {
			s.Blobs = &fullDisk{Store: s.Blobs, k: k}
		}
		_, err = (&Runner{Log: s.Log, Blobs: s.Blobs, Dir: s.Path, Stages: cellStages(nil),
			Engines: engines.Set{}}).Run(
			context.Background(),
			plan,
		)
		return err
	}
	clean := t.TempDir()
	if err := run(clean, 0); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(clean, "test")
	want := outputDigests(t, s, plan.Hash)
	s.Close()
	for _, k := range []int{1, 3, 6} {
		dir := t.TempDir()
		if err := run(dir, k); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("blob write %d failing with a full disk: run returned %v; want ENOSPC", k, err)
		}
		s, _ := Open(dir, "test")
		failed, _ := s.Log.ByKind(eventlog.StageFailed)
		s.Close()
		if len(failed) > 0 {
			t.Errorf(
				"blob write %d failing: %d stages recorded as failed; a full disk is not the cell's failure",
				k,
				len(failed),
			)
		}
		if err := run(dir, 0); err != nil {
			t.Fatalf("rerun: %v", err)
		}
		s, _ = Open(dir, "test")
		got := outputDigests(t, s, plan.Hash)
		s.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("blob write %d failing: the rerun's digests differ:\n%v\nwant\n%v", k, got, want)
		}
	}
}
