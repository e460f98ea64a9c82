package gpu

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// Device identifies one GPU with dcgm-exporter's labels.
type Device struct {
	GPU       uint // DCGM GPU ID, or NVML index: the gpu label
	UUID      string
	ModelName string
	Hostname  string
}

// Backend reads the fields it was opened with from one GPU library. It is
// used by one goroutine at a time.
type Backend interface {
	// Name is the backend label of inferprobe_gpu_telemetry_backend_info:
	// "dcgm" or "nvml".
	Name() string
	// Summary describes the connection for the log line that announces it.
	Summary() string
	Devices() []Device
	// Read returns one row per device, in Devices order, holding one value
	// per field, in the order the backend was opened with. NaN marks a value
	// the source does not have: blank, not supported, or not offered by this
	// backend. An error means the source is gone; the caller closes the
	// backend and opens a new one.
	Read() ([][]float64, error)
	Close()
}

// openLocal opens DCGM embedded in this process, else NVML, so a host with
// only the driver still gets the basic fields.
func openLocal(fields []Field, hostname string) (Backend, error) {
	b, dcgmErr := openDCGM(fields, "", hostname)
	if dcgmErr == nil {
		return b, nil
	}
	b, nvmlErr := openNVML(fields, hostname, dcgmErr)
	if nvmlErr == nil {
		return b, nil
	}
	return nil, fmt.Errorf("dcgm: %w; nvml: %w", dcgmErr, nvmlErr)
}

// openRemote connects to nv-hostengine at addr. There is no NVML fallback:
// the GPUs are on that host, not this one.
func openRemote(fields []Field, addr, hostname string) (Backend, error) {
	b, err := openDCGM(fields, addr, hostname)
	if err != nil {
		return nil, fmt.Errorf("nv-hostengine at %s: %w", addr, err)
	}
	return b, nil
}

// hostnameFor returns the Hostname label: the host the GPUs are on, which
// is the hostengine's host unless it runs on this one.
func hostnameFor(hostEngine string) string {
	addr := hostEngine
	if scheme, rest, ok := strings.Cut(addr, "://"); ok {
		if scheme == "unix" {
			return localHostname()
		}
		addr = rest
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if host == "" || host == "localhost" {
		return localHostname()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return localHostname()
	}
	return host
}

func localHostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// errNoGPUs is returned by a library that loads but sees no GPU.
var errNoGPUs = errors.New("no GPUs found")
