package prober

// PrefillSlot is a request's hold on one of its probe's prefill slots
// (arrival.max_prefill_concurrency, AIPerf's --prefill-concurrency): the
// requests that hold one are those waiting for their first token. The
// executor calls Release when the first token comes; the scheduler calls
// it again when the request ended, which frees the slot of one that ended
// without a first token. Only the first call frees it.
type PrefillSlot interface {
	Release()
}

// prefillHold is the slot a request holds; it lives in the Request, so
// holding one allocates nothing. Its two releases never race: the first
// token is read (in process, or by the pool's reader from the worker's
// word) before the record that ends Do comes.
type prefillHold struct {
	slots chan struct{}
	held  bool
}

func (h *prefillHold) Release() {
	if h.held {
		h.held = false
		<-h.slots
	}
}

// FirstToken tells req's prefill slot, if it holds one, that its first
// token came.
func (req *Request) FirstToken() {
	if req.Prefill != nil {
		req.Prefill.Release()
	}
}

// acquirePrefill takes a prefill slot for req under the probe's prefill
// cap; it returns whether it had to wait for one (the caller takes the
// time), and false if the schedule ended first. A request that could not
// be built (req nil) frees its slot at once.
func (r *run) acquirePrefill(req *Request) (waited, ok bool) {
	if r.prefill == nil {
		return false, true
	}
	select {
	case r.prefill <- struct{}{}:
	default:
		select {
		case r.prefill <- struct{}{}:
			waited = true
		case <-r.ctx.Done():
			return false, false
		}
	}
	if req == nil {
		<-r.prefill
		return waited, true
	}
	req.hold.slots = r.prefill
	req.hold.held = true
	req.Prefill = &req.hold
	return waited, true
}

// startPrefill makes the probe's prefill slots, ramped from 1 over its
// prefillRampOver; stop ends the ramp.
func (r *run) startPrefill() (stop func()) {
	n := r.probe.maxPrefill
	if n <= 0 {
		return func() {}
	}
	r.prefill = make(chan struct{}, n)
	return rampSlots(r.prefill, r.start, n, r.probe.prefillRampOver)
}
