package prober

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// TestDoWaitsForSchedule checks that a request handed to Do ahead of its
// scheduled time is sent at that time, not before; that one far ahead (a
// clock stepped back) is not held; and that one cancelled while it waits
// comes back cancelled without reaching the server, and without a send time.
func TestDoWaitsForSchedule(t *testing.T) {
	var arrivals atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		io.WriteString(w, chat(" a")+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := testTarget(t, srv.URL+"/v1", nil)
	c := NewClient()
	newReq := func(at time.Time) *Request {
		req, err := NewRequest(tg, dataset.Prompt{Text: "hi", InputTokens: 1, OutputTokens: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Scheduled = at
		return req
	}

	at := time.Now().Add(30 * time.Millisecond)
	if rec := c.Do(context.Background(), tg, newReq(at)); rec.Outcome != record.OutcomeOK || rec.Sent.Before(at) || rec.Lag() < 0 {
		t.Errorf("early request: outcome %s, sent %v before its schedule", rec.Outcome, at.Sub(rec.Sent))
	}

	far := time.Now().Add(time.Hour)
	if rec := c.Do(context.Background(), tg, newReq(far)); rec.Outcome != record.OutcomeOK || !rec.Sent.Before(far) {
		t.Errorf("request an hour ahead: outcome %s, sent %v", rec.Outcome, rec.Sent)
	}

	before := arrivals.Load()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, cancel)
	rec := c.Do(ctx, tg, newReq(time.Now().Add(maxLead/2)))
	// Never sent, it has no send time: a lag from now to its scheduled
	// time would be negative.
	if rec.Outcome != record.OutcomeCancelled || !rec.Sent.IsZero() || len(rec.Chunks) != 0 {
		t.Errorf("cancelled while waiting: %+v", rec)
	}
	if arrivals.Load() != before {
		t.Error("a request cancelled while it waited reached the server")
	}
}
