//go:build !linux

package resultsdir

import "os"

// swap exchanges two directories: b moved aside, a put in its place, the
// old b left at a. Not one step: a kill between the two renames leaves b
// absent (its old version at a, which the next report removes).
func swap(a, b string) error {
	aside := a + "-old"
	if err := os.Rename(b, aside); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(aside, b)
		return err
	}
	return os.Rename(aside, a)
}
