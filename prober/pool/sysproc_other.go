//go:build !linux

package pool

import "syscall"

// sysProcAttr: without a parent-death signal, a worker relies on its stdin
// closing, which happens when its parent dies.
func sysProcAttr() *syscall.SysProcAttr { return nil }
