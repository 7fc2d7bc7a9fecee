package eventlog

import (
	"os"
	"syscall"
)

// allocate reserves n bytes of disk for f (fallocate).
func allocate(f *os.File, n int64) error { return syscall.Fallocate(int(f.Fd()), 0, 0, n) }
