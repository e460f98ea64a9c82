package main

import (
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

func TestShardSpec(t *testing.T) {
	ahead := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		shard, startAt string
		want           record.Shard
		given          bool
		err            string
	}{
		{want: record.Shard{Count: 1}},
		{shard: "2/3", startAt: ahead.Format(time.RFC3339), want: record.Shard{Index: 2, Count: 3}, given: true},
		{shard: "3/3", err: "--shard: shard 3/3: the index must be 0 to 2"},
		{startAt: "tomorrow", err: `--start-at "tomorrow": want an RFC 3339 time`},
		{startAt: "2020-01-01T00:00:00Z", err: "give a time far enough ahead for every shard to be ready"},
	} {
		f := &benchFlags{shardFlags: shardFlags{shard: tc.shard, startAt: tc.startAt}}
		shard, startAt, given, err := f.shardSpec()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--shard %q --start-at %q: error %v, want %q", tc.shard, tc.startAt, err, tc.err)
			}
		case err != nil || shard != tc.want || given != tc.given || (tc.startAt != "" && !startAt.Equal(ahead)):
			t.Errorf("--shard %q --start-at %q: %v %v %v %v", tc.shard, tc.startAt, shard, startAt, given, err)
		}
	}
}
