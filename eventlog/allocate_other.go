//go:build !linux

package eventlog

import (
	"errors"
	"os"
)

// allocate is Linux's fallocate; elsewhere holdSpare writes the bytes.
func allocate(*os.File, int64) error { return errors.ErrUnsupported }
