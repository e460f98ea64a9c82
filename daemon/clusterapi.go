package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// clusterControl is what the calls between replicas drive; *Daemon
// implements it.
type clusterControl interface {
	clusterInfo() (peerInfo, bool)
	startShare(id string, s clusterStart) error
	shareOf(ctx context.Context, id string, step int, wait time.Duration) (shareReply, error)
	stepShare(ctx context.Context, id string, s clusterStep) error
	cancelShare(id string) error
	acceptReport(info RunInfo) error
}

func (d *Daemon) clusterInfo() (peerInfo, bool) {
	c := d.bursts.cluster
	if c == nil {
		return peerInfo{}, false
	}
	s := d.bursts.shardOf()
	return peerInfo{Instance: c.instance, Shard: s.Index, Shards: s.Count}, true
}

func (d *Daemon) startShare(id string, s clusterStart) error { return d.bursts.startShare(id, s) }

func (d *Daemon) shareOf(ctx context.Context, id string, step int, wait time.Duration) (shareReply, error) {
	return d.bursts.shareOf(ctx, id, step, wait)
}

func (d *Daemon) stepShare(ctx context.Context, id string, s clusterStep) error {
	return d.bursts.stepShare(ctx, id, s)
}

func (d *Daemon) acceptReport(info RunInfo) error { return d.bursts.acceptReport(info) }

// cancelShare cancels this replica's share only: the replica the user
// called fans the cancel out.
func (d *Daemon) cancelShare(id string) error {
	m := d.bursts
	r := m.share(id)
	if r == nil {
		return ErrUnknownRun
	}
	m.mu.Lock()
	dequeued, ended := m.cancel(r, true)
	m.mu.Unlock()
	if ended {
		return ErrRunFinished
	}
	if dequeued {
		m.recordUnrun(r)
	}
	return nil
}

// maxWait bounds how long a share fetch may wait for the share to end.
const maxWait = 10 * time.Minute

// serveCluster serves the calls between replicas under /api/v1/cluster,
// authenticated as the burst API is.
func (a *burstAPI) serveCluster(c *call, ctl clusterControl) {
	info, ok := ctl.clusterInfo()
	if !ok {
		c.fail(http.StatusNotFound, "this replica runs without --cluster.peers, so it takes no part in cluster runs")
		return
	}
	if !a.authorized(c) {
		return
	}
	if err := a.csrf.Check(c.r); err != nil {
		c.fail(http.StatusForbidden, "cross-origin request refused: the cluster calls are for replicas, not web pages")
		return
	}
	rest := strings.TrimPrefix(c.r.URL.Path, clusterPath)
	id, sub, _ := strings.Cut(strings.TrimPrefix(rest, "/runs/"), "/")
	switch {
	case rest == "/info":
		if c.allow(http.MethodGet) {
			c.json(http.StatusOK, info)
		}
	case !strings.HasPrefix(rest, "/runs/") || id == "":
		c.fail(http.StatusNotFound, "no such cluster path")
	case sub == "":
		c.run = id
		if !c.allow(http.MethodPut, http.MethodDelete) {
			return
		}
		if c.r.Method == http.MethodDelete {
			a.clusterResult(c, ctl.cancelShare(id), nil)
			return
		}
		var s clusterStart
		if err := decodeJSON(c, &s); err == nil {
			a.clusterResult(c, ctl.startShare(id, s), nil)
		}
	case sub == "share":
		c.run = id
		if !c.allow(http.MethodGet) {
			return
		}
		wait, err := time.ParseDuration(c.r.URL.Query().Get("wait"))
		if err != nil || wait < 0 || wait > maxWait {
			c.fail(http.StatusBadRequest, "wait must be a duration up to "+maxWait.String())
			return
		}
		step := -1 // the whole run's
		if q := c.r.URL.Query().Get("step"); q != "" {
			if step, err = strconv.Atoi(q); err != nil || step < 0 {
				c.fail(http.StatusBadRequest, "step must be a search step's index, from 0")
				return
			}
		}
		reply, err := ctl.shareOf(c.r.Context(), id, step, wait)
		a.clusterResult(c, err, reply)
	case sub == "step":
		c.run = id
		if !c.allow(http.MethodPut) {
			return
		}
		var s clusterStep
		if err := decodeJSON(c, &s); err == nil {
			a.clusterResult(c, ctl.stepShare(c.r.Context(), id, s), nil)
		}
	case sub == "report":
		c.run = id
		if !c.allow(http.MethodPut) {
			return
		}
		var info RunInfo
		if err := decodeJSON(c, &info); err == nil {
			if info.ID != id {
				c.fail(http.StatusBadRequest, "the report is of another run")
				return
			}
			a.clusterResult(c, ctl.acceptReport(info), nil)
		}
	default:
		c.fail(http.StatusNotFound, "no such cluster path")
	}
}

// clusterResult answers a cluster call with v, or its error.
func (a *burstAPI) clusterResult(c *call, err error, v any) {
	switch {
	case errors.Is(err, errCluster):
		c.fail(http.StatusConflict, err.Error())
	case err != nil:
		a.controlError(c, err)
	case v == nil:
		c.json(http.StatusOK, map[string]string{})
	default:
		c.json(http.StatusOK, v)
	}
}

// decodeJSON reads a cluster call's body into v, answering 400 when it
// does not decode.
func decodeJSON(c *call, v any) error {
	err := json.NewDecoder(http.MaxBytesReader(c.w, c.r.Body, maxReport)).Decode(v)
	if err != nil {
		c.fail(http.StatusBadRequest, "body does not decode: "+err.Error())
	}
	return err
}

// maxReport bounds a cluster call's body: a run's report, with its GPU
// window, is kilobytes.
const maxReport = 4 << 20
