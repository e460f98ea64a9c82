package report

import (
	"fmt"
	"iter"
	"slices"

	"github.com/inferprobe/inferprobe/record"
)

// ShardRecords is what one shard of a sharded run sent: its records, in any
// order, and whether it says it finished (sent its whole share and saw
// every request end). A bench shard's record file (ReadShardFile) and the
// records one replica sends another both arrive as this.
type ShardRecords struct {
	Shard    record.Shard
	Finished bool
	Records  iter.Seq2[*record.Record, error]
}

// RecordsOf yields recs, for a ShardRecords held in memory.
func RecordsOf(recs []*record.Record) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Merged is a sharded run put together: one report over every shard's
// records, so its percentiles are exact over all their samples, and the
// digest the run would have had unsharded (record.FoldDigest).
type Merged struct {
	Report *Report
	Digest record.Digest
	// Missing are the shards no records came from and Incomplete those
	// that came but did not say they finished, by index: either makes the
	// run partial.
	Missing, Incomplete []int
}

// Partial reports whether some shard is missing or incomplete: the report
// then covers only part of the run, and its digest is not the run's.
func (m *Merged) Partial() bool { return len(m.Missing) > 0 || len(m.Incomplete) > 0 }

// Merge feeds the records of the shards of one run of count shards into one
// report (built with opts) and folds their digest entries. Shards not given
// are Missing, shards given unfinished Incomplete. It fails on a shard
// given twice or not of count, on a request recorded twice, and, when every
// shard finished, on a request missing below the last one each shard sent
// (shards that end by the clock, as a closed loop with a duration does, may
// each stop at their own point, so the sequence's end may be ragged).
func Merge(count int, shards []ShardRecords, opts ...ReportOption) (Merged, error) {
	if count < 1 {
		return Merged{}, fmt.Errorf("merge of %d shards: want at least 1", count)
	}
	m := Merged{Report: NewReport(opts...)}
	given := make([]bool, count)
	var entries []record.DigestEntry
	seqs := map[uint64]bool{}
	lowestLast := ^uint64(0)
	for _, sh := range shards {
		label := sh.Shard.String()
		if max(sh.Shard.Count, 1) != count {
			return Merged{}, fmt.Errorf("shard %s is not one of %d shards: were shards of different runs given?", label, count)
		}
		if given[sh.Shard.Index] {
			return Merged{}, fmt.Errorf("shard %s is given twice: give each shard's records once", label)
		}
		given[sh.Shard.Index] = true
		if !sh.Finished {
			m.Incomplete = append(m.Incomplete, sh.Shard.Index)
		}
		var last uint64
		for rec, err := range sh.Records {
			if err != nil {
				return Merged{}, fmt.Errorf("shard %s: %w", label, err)
			}
			if !rec.Digest.Folded() {
				// A request never sent (the dataset could not go on):
				// every shard meets the same end of the dataset, and the
				// run unsharded records it once.
				if !seqs[rec.Seq] {
					seqs[rec.Seq] = true
					m.Report.Observe(rec)
				}
				continue
			}
			if rec.Digest.Seq() != rec.Seq {
				return Merged{}, fmt.Errorf("shard %s: request %d carries the digest entry of request %d: the records are corrupt", label, rec.Seq, rec.Digest.Seq())
			}
			if seqs[rec.Seq] {
				return Merged{}, fmt.Errorf("shard %s: request %d was recorded twice (by two shards, or twice by one): were two shards given the same index?", label, rec.Seq)
			}
			seqs[rec.Seq] = true
			entries = append(entries, rec.Digest)
			last = max(last, rec.Seq)
			m.Report.Observe(rec)
		}
		lowestLast = min(lowestLast, last)
	}
	for i, ok := range given {
		if !ok {
			m.Missing = append(m.Missing, i)
		}
	}
	slices.Sort(m.Incomplete)
	var err error
	if m.Digest, err = record.FoldDigest(entries); err != nil {
		return Merged{}, err
	}
	if !m.Partial() && len(entries) > 0 {
		for seq := range lowestLast {
			if !seqs[seq] {
				return Merged{}, fmt.Errorf("request %d is in no shard, although every shard finished and sent requests after it: the shards are not of one run", seq)
			}
		}
	}
	return m, nil
}
