//go:build !linux

package durable

// writeUnnamed is Linux's (O_TMPFILE); elsewhere WriteFile's named
// temporary file writes.
func writeUnnamed(string, []byte) (bool, error) { return false, nil }
