package pool

import "syscall"

// sysProcAttr makes the kernel kill a worker when its parent dies, even by
// SIGKILL, so that no worker outlives the daemon.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
