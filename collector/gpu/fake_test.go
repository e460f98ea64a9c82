package gpu

import (
	"errors"
	"fmt"
	"sync"
)

// fakeEngine stands in for a GPU library: while down, opening it and
// reading from it fail, as with a hostengine that went away.
type fakeEngine struct {
	mu      sync.Mutex
	down    bool
	opens   int
	block   chan struct{} // when set, open waits for it to close
	devices []Device
	values  map[string][]float64 // field name -> value per device; NaN or absent: no value
}

func (e *fakeEngine) setDown(down bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.down = down
}

func (e *fakeEngine) openCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.opens
}

func (e *fakeEngine) open(fields []Field) (Backend, error) {
	e.mu.Lock()
	e.opens++
	block := e.block
	e.mu.Unlock()
	if block != nil {
		<-block
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		return nil, errors.New("connection refused")
	}
	return &fakeBackend{e: e, fields: fields}, nil
}

type fakeBackend struct {
	e      *fakeEngine
	fields []Field
}

func (b *fakeBackend) Name() string      { return "dcgm" }
func (b *fakeBackend) Summary() string   { return fmt.Sprintf("fake, %d GPUs", len(b.e.devices)) }
func (b *fakeBackend) Devices() []Device { return b.e.devices }
func (b *fakeBackend) Close()            {}

func (b *fakeBackend) Read() ([][]float64, error) {
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	if b.e.down {
		return nil, errors.New("connection to nv-hostengine lost")
	}
	rows := nanRows(len(b.e.devices), len(b.fields))
	for j, f := range b.fields {
		for i, v := range b.e.values[f.Name] {
			rows[i][j] = v
		}
	}
	return rows, nil
}
