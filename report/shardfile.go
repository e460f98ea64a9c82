package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync"

	"github.com/inferprobe/inferprobe/record"
)

// ShardFormat names the layout of a shard's record file: a header line,
// one line per record (record.Marshal), and an end line written once
// the shard ended. A file without its end line is a shard that died.
const ShardFormat = "inferprobe-shard/1"

// ShardHeader is the first line of a shard's record file.
type ShardHeader struct {
	Format string `json:"format"`
	Shard  string `json:"shard"` // i/n
	// Run identifies the run the shard is part of (its command and
	// scenario, less the shard): a merge refuses shards of different runs.
	Run string `json:"run"`
	// Meta is what the writer needs to report the merged run, which a
	// merge hands back untouched (bench: its export settings).
	Meta json.RawMessage `json:"meta,omitempty"`
}

// ShardEnd is the last line of a shard's record file.
type ShardEnd struct {
	// Finished says the shard sent its whole share and every request
	// ended; false when it was stopped.
	Finished bool `json:"finished"`
	// Digest and Requests are the shard's own digest of what it sent.
	Digest   string `json:"digest"`
	Requests uint64 `json:"requests"`
	// ClientBound says why the shard's client may have been the
	// bottleneck; empty when it kept up. A merge passes it on, so that one
	// overloaded machine does not hide in the whole run's figures.
	ClientBound string `json:"client_bound,omitempty"`
}

// shardEndLine starts the end line and no record line.
var shardEndLine = []byte(`{"end":`)

// ShardWriter writes a shard's records to its file as they finish: a
// prober.Recorder, so a shard that dies leaves the records it had.
type ShardWriter struct {
	f *os.File

	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

// CreateShardFile creates the record file at path and writes h, with the
// format set, as its first line.
func CreateShardFile(path string, h ShardHeader) (*ShardWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &ShardWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	h.Format = ShardFormat
	w.line(json.Marshal(h))
	if w.err != nil {
		f.Close()
		return nil, w.err
	}
	return w, nil
}

// line writes b and a newline unless an earlier write failed; the caller holds mu.
func (w *ShardWriter) line(b []byte, err error) {
	if w.err != nil {
		return
	}
	if w.err = err; err != nil {
		return
	}
	if _, w.err = w.w.Write(b); w.err == nil {
		w.err = w.w.WriteByte('\n')
	}
}

// Started is part of prober.Recorder.
func (w *ShardWriter) Started() {}

// Observe writes rec. A failed write is reported by Close.
func (w *ShardWriter) Observe(rec *record.Record) {
	b, err := record.Marshal(rec)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line(b, err)
}

// Close writes the end line and closes the file; it returns the first
// error of any write.
func (w *ShardWriter) Close(end ShardEnd) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := json.Marshal(struct {
		End ShardEnd `json:"end"`
	}{end})
	w.line(b, err)
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("record file %s: %w", w.f.Name(), w.err)
	}
	return nil
}

// ShardFile is a shard's record file opened for reading.
type ShardFile struct {
	Header ShardHeader
	Shard  record.Shard
	// End is the file's end line; nil when the shard died before writing it.
	End  *ShardEnd
	Path string
}

// OpenShardFile reads the header and the end of the record file at path;
// Records reads the records.
func OpenShardFile(path string) (*ShardFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf := &ShardFile{Path: path}
	r := bufio.NewReader(f)
	first, err := r.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf.Header); err != nil || sf.Header.Format != ShardFormat {
		return nil, fmt.Errorf("%s is not a shard's record file (%s): its first line does not say so", path, ShardFormat)
	}
	if sf.Shard, err = record.ParseShard(sf.Header.Shard); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The end line is the last; read the tail rather than every record.
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const tail = 4096
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 && bytes.HasPrefix(buf[i+1:], shardEndLine) {
		var end struct {
			End ShardEnd `json:"end"`
		}
		if err := json.Unmarshal(buf[i+1:], &end); err != nil {
			return nil, fmt.Errorf("%s: end line: %w", path, err)
		}
		sf.End = &end.End
	}
	return sf, nil
}

// Records yields the file's records.
func (sf *ShardFile) Records() iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		f, err := os.Open(sf.Path)
		if err != nil {
			yield(nil, err)
			return
		}
		defer f.Close()
		r := bufio.NewReaderSize(f, 1<<20)
		for n := 1; ; n++ {
			line, err := r.ReadBytes('\n')
			if len(line) == 0 && errors.Is(err, io.EOF) {
				return
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield(nil, err)
				return
			}
			if n == 1 || bytes.HasPrefix(line, shardEndLine) {
				continue
			}
			rec, derr := record.Unmarshal(line)
			if derr != nil {
				// A shard killed mid-write leaves a torn last line: its
				// records before it still count, and it is incomplete.
				if errors.Is(err, io.EOF) && sf.End == nil {
					return
				}
				derr = fmt.Errorf("%s line %d: %w", sf.Path, n, derr)
			}
			if !yield(rec, derr) || derr != nil {
				return
			}
		}
	}
}

// ShardRecords is the file as Merge takes it.
func (sf *ShardFile) ShardRecords() ShardRecords {
	return ShardRecords{Shard: sf.Shard, Finished: sf.End != nil && sf.End.Finished, Records: sf.Records()}
}
