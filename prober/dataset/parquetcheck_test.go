package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// checkRows are a trace of 50 rows; timestamp_start_unix_ms, the first
// column, is required and takes 400 bytes PLAIN.
func checkRows() []basetenExport {
	rows := make([]basetenExport, 50)
	for i := range rows {
		rows[i] = basetenExport{Timestamp: int64(1_700_000_000_000 + i), Prompt: strings.Repeat("w ", 5+i%7), InputTokens: 3, OutputTokens: 7, TotalHashes: []int64{int64(i), int64(i + 1)}, ModelName: "m"}
	}
	return rows
}

// TestParquetCheck loads Parquet files whose declared sizes were corrupted.
// Most made parquet-go allocate from 256 MiB to all the memory there is (or
// retry without end) before it found the file corrupt, if it did: each is
// refused, having allocated little.
func TestParquetCheck(t *testing.T) {
	rows := checkRows()
	v2 := writeParquet(t, rows) // parquet-go writes v2 pages, uncompressed
	snappy := writeParquetWith(t, rows, parquet.Compression(&parquet.Snappy))
	zstd := writeParquetWith(t, rows, parquet.DataPageVersion(1), parquet.Compression(&parquet.Zstd))
	lz4 := writeParquetWith(t, rows, parquet.DataPageVersion(1), parquet.Compression(&parquet.Lz4Raw))
	dict := writeParquetWith(t, rows, parquet.DataPageVersion(1), parquet.DefaultEncoding(&parquet.RLEDictionary))
	const big = 1 << 30
	var left int // the bytes left in a column chunk, for "page header string"
	first := func(edit func(h *format.PageHeader)) func(rg, col, p int, h *format.PageHeader) {
		return func(rg, col, p int, h *format.PageHeader) {
			if rg == 0 && col == 0 && p == 0 {
				edit(h)
			}
		}
	}
	// footer replaces the footer of a file.
	footer := func(data []byte, write func(w thrift.Writer)) []byte {
		var b bytes.Buffer
		write(new(thrift.CompactProtocol).NewWriter(&b))
		n := len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		out := binary.LittleEndian.AppendUint32(append(data[:n:n], b.Bytes()...), uint32(b.Len()))
		return append(out, "PAR1"...)
	}
	for _, tc := range []struct {
		name string
		data func() []byte
		want string
	}{
		{"footer length", func() []byte {
			b := rewriteParquet(t, v2, pqEdit{})
			binary.LittleEndian.PutUint32(b[len(b)-8:], 0xFFFFFFF0)
			return b
		}, "its footer of 4294967280 bytes does not fit in the file's %[1]d bytes"},
		{"footer list length", func() []byte {
			return footer(v2, func(w thrift.Writer) {
				w.WriteField(thrift.Field{ID: 4, Type: thrift.LIST})
				w.WriteList(thrift.List{Size: math.MaxInt32, Type: thrift.STRUCT})
				w.WriteField(thrift.Field{Type: thrift.STOP})
			})
		}, "footer has a list of 2147483647 elements in the 1 bytes left"},
		{"footer nesting", func() []byte {
			return footer(v2, func(w thrift.Writer) {
				for range 1 << 20 {
					w.WriteField(thrift.Field{ID: 100, Type: thrift.STRUCT})
				}
			})
		}, "footer nests deeper than 32"},
		{"schema", func() []byte {
			return rewriteParquet(t, v2, pqEdit{footer: func(m *format.FileMetaData) { m.Schema[0].NumChildren.V = 1000 }})
		}, "schema: ends 990 elements short of its groups"},
		{"column chunks", func() []byte {
			return rewriteParquet(t, v2, pqEdit{footer: func(m *format.FileMetaData) { m.RowGroups[0].Columns = m.RowGroups[0].Columns[1:] }})
		}, "row group 1 has 9 column chunks; the schema has 10 columns"},
		{"column chunk size", func() []byte {
			return rewriteParquet(t, v2, pqEdit{footer: func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].MetaData.TotalCompressedSize = 1 << 31 }})
		}, "row group 1, column timestamp_start_unix_ms: has 2147483648 bytes at offset 4, outside the file's data (offsets 4 to %[2]d)"},
		{"page size", func() []byte {
			return rewriteParquet(t, v2, pqEdit{page: first(func(h *format.PageHeader) { h.CompressedPageSize = big })})
		}, "row group 1, column timestamp_start_unix_ms: page 1 declares 1073741824 bytes; 400 are left in its column chunk"},
		{"uncompressed page size", func() []byte {
			return rewriteParquet(t, snappy, pqEdit{
				page:   first(func(h *format.PageHeader) { h.UncompressedPageSize = big }),
				footer: func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].MetaData.TotalUncompressedSize = 1000 },
			})
		}, "row group 1, column timestamp_start_unix_ms: page 1 declares 1073741824 bytes uncompressed; its column chunk declares 1000 in all"},
		{"uncompressed page memory", func() []byte {
			return rewriteParquet(t, snappy, pqEdit{
				body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
					if col != 0 {
						return body
					}
					h.UncompressedPageSize = big
					return binary.AppendUvarint(nil, big)
				},
				footer: func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].MetaData.TotalUncompressedSize = 1 << 31 },
			})
		}, "Parquet file too large to decode: row group 1, column timestamp_start_unix_ms: page 1 (5 bytes, 1073741824 uncompressed, 50 values) would take 1024 MiB to decode, " + errOverBudget.Error()},
		{"page header string", func() []byte {
			b := rewriteParquet(t, v2, pqEdit{page: first(func(h *format.PageHeader) {
				h.DataPageHeaderV2.V.Statistics.MaxValue = []byte("ZZZZZZZZZZZZZZZZZZZZ")
			})})
			// The length 20 becomes 2^30-2 in as many bytes, 5.
			i := bytes.Index(b, []byte("\x14ZZZZZZZZZZZZZZZZZZZZ"))
			copy(b[i:], binary.AppendUvarint(nil, big-2))
			md := parquetFooter(t, b).RowGroups[0].Columns[0].MetaData
			left = int(md.DataPageOffset+md.TotalCompressedSize) - (i + 5)
			return b
		}, "row group 1, column timestamp_start_unix_ms: page 1: header has a string of 1073741822 bytes in the %[3]d bytes left"},
		{"page type", func() []byte {
			return rewriteParquet(t, v2, pqEdit{page: first(func(h *format.PageHeader) { h.Type = format.DictionaryPage })})
		}, "row group 1, column timestamp_start_unix_ms: page 1 is of type DICTIONARY_PAGE but does not carry just that type's header"},
		{"page values", func() []byte {
			return rewriteParquet(t, dict, pqEdit{page: func(rg, col, p int, h *format.PageHeader) {
				if col == 0 && h.Type == format.DataPage {
					h.DataPageHeader.V.NumValues = big
				}
			}})
		}, "row group 1, column timestamp_start_unix_ms: page 2 declares 1073741824 values; its row group has 50 rows"},
		{"dictionary values", func() []byte {
			return rewriteParquet(t, dict, pqEdit{page: first(func(h *format.PageHeader) { h.DictionaryPageHeader.V.NumValues = big })})
		}, "Parquet file too large to decode: row group 1, column timestamp_start_unix_ms: page 1 (400 bytes, 400 uncompressed, 1073741824 values) would take 16384 MiB to decode, " + errOverBudget.Error()},
		{"levels", func() []byte {
			return rewriteParquet(t, v2, pqEdit{body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
				v := &h.DataPageHeaderV2.V
				if col != 5 { // provided_session_id, optional
					return body
				}
				// A run of 2^29 levels of 1.
				levels := append(binary.AppendUvarint(nil, 1<<30), 1)
				body = append(levels, body[v.DefinitionLevelsByteLength:]...)
				v.DefinitionLevelsByteLength = int32(len(levels))
				return body
			}})
		}, "row group 1, column provided_session_id: page 1 holds more definition levels than its 50 values"},
		{"snappy length", func() []byte {
			return rewriteParquet(t, snappy, pqEdit{body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
				if col != 0 {
					return body
				}
				_, n := binary.Uvarint(body)
				return append(binary.AppendUvarint(nil, math.MaxUint32), body[n:]...)
			}})
		}, "row group 1, column timestamp_start_unix_ms: page 1 holds SNAPPY data of 4294967295 bytes uncompressed; the page declares 400"},
		{"codec of the first chunk", func() []byte {
			// parquet-go decompresses the second row group with snappy too.
			two := writeParquetWith(t, rows, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(25))
			return rewriteParquet(t, two, pqEdit{
				body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
					if rg != 1 || col != 0 {
						return body
					}
					_, n := binary.Uvarint(body)
					return append(binary.AppendUvarint(nil, math.MaxUint32), body[n:]...)
				},
				footer: func(m *format.FileMetaData) { m.RowGroups[1].Columns[0].MetaData.Codec = format.Uncompressed },
			})
		}, "row group 2, column timestamp_start_unix_ms: page 1 holds SNAPPY data of 4294967295 bytes uncompressed; the page declares 200"},
		{"zstd content size", func() []byte {
			return rewriteParquet(t, zstd, pqEdit{body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
				if col != 0 {
					return body
				}
				// A single-segment frame stating 256 MiB, with one empty
				// last raw block.
				b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
				b = binary.LittleEndian.AppendUint64(append(b, 0xe0), 1<<28)
				return append(b, 1, 0, 0)
			}})
		}, "row group 1, column timestamp_start_unix_ms: page 1 holds ZSTD data of 268435456 bytes uncompressed; the page declares 400"},
		{"lz4", func() []byte {
			return rewriteParquet(t, lz4, pqEdit{body: func(rg, col, p int, h *format.PageHeader, body []byte) []byte {
				return bytes.Repeat([]byte{0xff}, len(body))
			}})
		}, "row group 1, column timestamp_start_unix_ms: is compressed with LZ4_RAW, which is not supported; use SNAPPY, ZSTD, GZIP or none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data()
			footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
			want := "f: corrupt Parquet file: " + tc.want
			if strings.HasPrefix(tc.want, "Parquet file too large") {
				want = "f: " + tc.want
			}
			if strings.Contains(want, "%") {
				want = fmt.Sprintf(want, len(data), len(data)-8-footerLen, left)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := load("baseten", "arrival", 1, data, nil)
			runtime.ReadMemStats(&after)
			if err == nil || err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestParquetCheckValid checks that files of each kind parquet-go writes
// load, and that checking a file reads its page headers, not its pages.
func TestParquetCheckValid(t *testing.T) {
	rows := checkRows()
	for range 8 {
		rows = append(rows, rows...) // 12,800 rows
	}
	// Prompts of random words, which do not compress: pages of 256 KiB.
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		rows[i].Timestamp = int64(1_700_000_000_000 + i)
		var b strings.Builder
		for range 100 + i%50 {
			fmt.Fprintf(&b, "%x ", r.Uint32())
		}
		rows[i].Prompt = b.String()
	}
	for _, tc := range []struct {
		name string
		opts []parquet.WriterOption
	}{
		// Page headers hold statistics, the least and greatest prompt
		// (but gzip's).
		{"v2", nil},
		{"v1", []parquet.WriterOption{parquet.DataPageVersion(1)}},
		{"dictionary", []parquet.WriterOption{parquet.DataPageVersion(1), parquet.DefaultEncoding(&parquet.RLEDictionary)}},
		{"snappy", []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}},
		{"zstd v1", []parquet.WriterOption{parquet.DataPageVersion(1), parquet.Compression(&parquet.Zstd)}},
		{"gzip", []parquet.WriterOption{parquet.Compression(&parquet.Gzip), parquet.MaxRowsPerRowGroup(1000), parquet.DataPageStatistics(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := writeParquetWith(t, rows, tc.opts...)
			r := &countingReader{r: bytes.NewReader(data)}
			if err := checkParquet(r, int64(len(data))); err != nil {
				t.Fatal(err)
			}
			if r.n > int64(len(data))/20 {
				t.Errorf("checking read %d bytes of a file of %d", r.n, len(data))
			}
			s, err := load("baseten", "replay", 1, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.count != uint64(len(rows)) {
				t.Errorf("loaded %d rows, want %d", s.count, len(rows))
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.n += int64(len(p))
	return c.r.ReadAt(p, off)
}

// pqEdit says how to corrupt a valid Parquet file: body replaces a page's
// body (of row group rg, column col, page p), page edits its header, footer
// the metadata.
type pqEdit struct {
	page   func(rg, col, p int, h *format.PageHeader)
	body   func(rg, col, p int, h *format.PageHeader, body []byte) []byte
	footer func(m *format.FileMetaData)
}

// rewriteParquet lays out a valid Parquet file again with edits applied: the
// column chunks' offsets and sizes are recomputed from the (edited) page
// headers, so that only the edited field is untrue. The page index and bloom
// filters are left out.
func rewriteParquet(t testing.TB, data []byte, e pqEdit) []byte {
	t.Helper()
	var proto thrift.CompactProtocol
	m := parquetFooter(t, data)
	out := []byte("PAR1")
	for i := range m.RowGroups {
		rg := &m.RowGroups[i]
		rgStart := int64(len(out))
		for j := range rg.Columns {
			cc := &rg.Columns[j]
			md := &cc.MetaData
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 {
				start = min(start, md.DictionaryPageOffset)
			}
			chunk := data[start : start+md.TotalCompressedSize]
			chunkStart := int64(len(out))
			md.DictionaryPageOffset, md.DataPageOffset = 0, 0
			for p := 0; len(chunk) > 0; p++ {
				r := proto.NewReaderFromBytes(chunk)
				var h format.PageHeader
				if err := thrift.NewDecoder(r).Decode(&h); err != nil {
					t.Fatal(err)
				}
				body := chunk[r.BytesRead() : r.BytesRead()+int(h.CompressedPageSize)]
				chunk = chunk[r.BytesRead()+len(body):]
				if h.Type == format.DictionaryPage {
					md.DictionaryPageOffset = int64(len(out))
				} else if md.DataPageOffset == 0 {
					md.DataPageOffset = int64(len(out))
				}
				if e.body != nil {
					body = e.body(i, j, p, &h, bytes.Clone(body))
					h.CompressedPageSize = int32(len(body))
					h.CRC = 0
				}
				if e.page != nil {
					e.page(i, j, p, &h)
				}
				hb, err := thrift.Marshal(&proto, &h)
				if err != nil {
					t.Fatal(err)
				}
				out = append(append(out, hb...), body...)
			}
			md.TotalCompressedSize = int64(len(out)) - chunkStart
			md.BloomFilterOffset, md.BloomFilterLength = 0, 0
			cc.FileOffset = chunkStart
			cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0
			cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
		}
		rg.FileOffset = rgStart
		rg.TotalCompressedSize = int64(len(out)) - rgStart
	}
	if e.footer != nil {
		e.footer(m)
	}
	fb, err := thrift.Marshal(&proto, m)
	if err != nil {
		t.Fatal(err)
	}
	out = binary.LittleEndian.AppendUint32(append(out, fb...), uint32(len(fb)))
	out = append(out, "PAR1"...)
	return out
}

// parquetFooter decodes the footer of a Parquet file.
func parquetFooter(t testing.TB, data []byte) *format.FileMetaData {
	t.Helper()
	n := len(data)
	footerLen := int(binary.LittleEndian.Uint32(data[n-8:]))
	var m format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[n-8-footerLen:n-8], &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// writeParquetWith is writeParquet with writer options.
func writeParquetWith[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParquetCheckPyarrow loads a trace written by pyarrow (see
// testdata/pyarrow_v2_lists.py) whose levels end in a padded group that an
// earlier check took for too many levels.
func TestParquetCheckPyarrow(t *testing.T) {
	data, err := os.ReadFile("testdata/pyarrow_v2_lists.parquet")
	if err != nil {
		t.Fatal(err)
	}
	s, err := load("baseten", "replay", 1, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.count != 1000 {
		t.Errorf("%d rows loaded, want 1000", s.count)
	}
}
