package dataset

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/parquet-go/parquet-go"
)

// FormatBaseten is Baseten's trace, in Parquet.
const FormatBaseten = "baseten"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatBaseten, AIPerfName: "baseten_trace", Timestamps: scenarios.TimestampsAlways, WallClock: true}, newBaseten)
}

// basetenRow is the part of a Baseten trace row that is replayed. Columns
// the file lacks read as absent (nil).
type basetenRow struct {
	Timestamp    *int64  `parquet:"timestamp_start_unix_ms,optional"`
	Prompt       *string `parquet:"prompt,optional"`
	InputTokens  *int64  `parquet:"input_tokens,optional"`
	OutputTokens *int64  `parquet:"output_tokens,optional"`
	TotalHashes  []int64 `parquet:"total_hashes,list"`
	SessionID    *string `parquet:"provided_session_id,optional"`
	BlockSize    *int64  `parquet:"block_size,optional"`
	Canceled     *int64  `parquet:"request_canceled,optional"`
	DurationMs   *int64  `parquet:"duration_e2e_ms,optional"`
}

// basetenRequired are the columns a Baseten trace must have.
var basetenRequired = []string{"timestamp_start_unix_ms", "prompt", "input_tokens", "output_tokens"}

// baseten reads a Baseten trace (Parquet) a batch of rows at a time. A row
// with a prompt sends it as written; one without sends input_tokens of hash
// blocks (total_hashes, block_size). A row marked request_canceled is
// cancelled after its recorded duration_e2e_ms (divided by the speed-up).
type baseten struct {
	name string
	r    *parquet.GenericReader[basetenRow]
	buf  []basetenRow
	row  int
}

func newBaseten(in input, name string) (r reader, err error) {
	defer recoverParquet(name, 0, &err)
	size, err := in.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := checkParquet(in, size); err != nil {
		return nil, &LineError{File: name, Reason: err.Error()}
	}
	// The rows are read in order: the page index and bloom filters, whose
	// sizes checkParquet does not check, are not needed.
	f, err := parquet.OpenFile(in, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &LineError{File: name, Reason: "not a Parquet file: " + err.Error()}
	}
	for _, col := range basetenRequired {
		if _, ok := f.Schema().Lookup(col); !ok {
			return nil, &LineError{File: name, Reason: fmt.Sprintf("has no column %s; a Baseten trace has %v", col, basetenRequired)}
		}
	}
	return &baseten{name: name, r: parquet.NewGenericReader[basetenRow](f)}, nil
}

// recoverParquet turns a panic of the Parquet decoder on a corrupt file into
// an error.
func recoverParquet(name string, row int, err *error) {
	if v := recover(); v != nil {
		*err = &LineError{File: name, Line: row, Reason: fmt.Sprintf("corrupt Parquet data: %v", v)}
	}
}

func (b *baseten) next() (rec record, err error) {
	if len(b.buf) == 0 {
		if err := b.fill(); err != nil {
			return record{}, err
		}
	}
	r := b.buf[0]
	b.buf = b.buf[1:]
	b.row++
	bad := func(format string, args ...any) error {
		return &LineError{File: b.name, Line: b.row, Reason: fmt.Sprintf(format, args...)}
	}
	if r.Timestamp == nil || r.InputTokens == nil || r.OutputTokens == nil {
		return record{}, bad("timestamp_start_unix_ms, input_tokens and output_tokens must not be null")
	}
	rec = record{line: b.row, ts: float64(*r.Timestamp), hasTS: true}
	if *r.InputTokens > int64(maxTokens) || *r.OutputTokens > int64(maxTokens) || *r.InputTokens < 0 || *r.OutputTokens < 0 {
		return record{}, bad("input_tokens %d or output_tokens %d out of range (0 to %d)", *r.InputTokens, *r.OutputTokens, maxTokens)
	}
	rec.in, rec.out = int(*r.InputTokens), int(*r.OutputTokens)
	if r.Prompt != nil {
		rec.text = *r.Prompt
	}
	for _, h := range r.TotalHashes {
		rec.hashIDs = append(rec.hashIDs, uint64(h))
	}
	if r.SessionID != nil {
		rec.session = *r.SessionID
	}
	if r.BlockSize != nil {
		if *r.BlockSize < 1 || *r.BlockSize > int64(maxTokens) {
			return record{}, bad("block_size %d; it must be 1 to %d", *r.BlockSize, maxTokens)
		}
		rec.block = int(*r.BlockSize)
	}
	if r.Canceled != nil && *r.Canceled != 0 {
		rec.cancel = true
		if r.DurationMs != nil {
			rec.duration = float64(max(*r.DurationMs, 0))
		}
	}
	return rec, nil
}

// fill reads the next batch of rows.
func (b *baseten) fill() (err error) {
	defer recoverParquet(b.name, b.row+1, &err)
	if cap(b.buf) == 0 {
		b.buf = make([]basetenRow, 256)
	}
	n, err := b.r.Read(b.buf[:cap(b.buf)])
	b.buf = b.buf[:n]
	switch {
	case n > 0:
		return nil
	case errors.Is(err, io.EOF) || err == nil:
		return io.EOF
	}
	return &LineError{File: b.name, Line: b.row + 1, Reason: "reading row " + strconv.Itoa(b.row+1) + ": " + err.Error()}
}
