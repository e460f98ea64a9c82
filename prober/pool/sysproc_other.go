//go:build !linux

package pool

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr: without a parent-death signal, a worker relies on its stdin
// closing, which happens when its parent dies.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// unreadBytes cannot tell what a pipe holds here: every byte written to a
// worker counts as read, so every credit written counts as possibly started.
func unreadBytes(*os.File) (int, error) { return 0, errors.ErrUnsupported }
