package pool

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr makes the kernel kill a worker when its parent dies, even by
// SIGKILL, so that no worker outlives the daemon.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// unreadBytes is how many bytes written to the pipe f no reader has taken
// (FIONREAD, which Linux answers on either end of a pipe).
func unreadBytes(f *os.File) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ioctlErr error
	if err := raw.Control(func(fd uintptr) { n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		return 0, err
	}
	return n, ioctlErr
}
