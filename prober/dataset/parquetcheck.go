package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go allocates what a file declares before it reads what is there: a
// buffer of the footer length, a list's elements on reading its length, a
// page's compressed and uncompressed sizes, num_values levels and values,
// every level of a run of levels, a snappy or zstd block's stated size.
// checkParquet reads those declarations (the footer, each page header, the
// levels of a page that has them uncompressed and the first bytes of
// compressed data, seeking over the rest) and refuses a file whose
// declarations cannot be true or would need more memory than the bounds
// below, before parquet-go is given the file.
const (
	// maxThriftDepth bounds the nesting of thrift structs and containers:
	// parquet-go skips unknown fields recursively, a stack frame a level, and
	// a footer nesting millions of structs would overflow the stack, which
	// cannot be recovered. Parquet's own metadata nests about 8 deep.
	maxThriftDepth = 32
	// maxMetadataMemory bounds what decoding the footer, or a page header,
	// may take: the footer of about 100,000 column chunks, far beyond a
	// trace's tens of row groups of ten columns.
	maxMetadataMemory = 64 << 20
	// maxRowGroupMemory bounds what decoding a row group's pages may take at
	// once (a page and a dictionary per column; see page). Writers cut
	// pages at 1 MiB (pyarrow, parquet-mr) or 256 KiB (parquet-go), larger
	// only to fit one value such as a long prompt (2^20 tokens are a few
	// MiB): a trace's row group needs tens of MiB at most.
	maxRowGroupMemory = 256 << 20
	// valueMemory is what parquet-go allocates per value a page declares:
	// levels (1 byte each), offsets (4) and the value or dictionary index
	// (4 to 12).
	valueMemory = 16
)

// structMemory is what a decoded thrift struct in a list may cost: the
// largest the footer lists hold is a column chunk.
const structMemory = int64(unsafe.Sizeof(format.ColumnChunk{}))

// errShort says that thrift data ran past the bytes at hand.
var errShort = errors.New("runs past its end")

// errOverBudget ends the message of a page or row group over
// maxRowGroupMemory, which a genuine file with very long prompts can be.
var errOverBudget = fmt.Errorf("over the %d MiB limit; if the file is genuine, write it with smaller row groups (pyarrow: row_group_size) or without a dictionary for long prompts (use_dictionary=False)", maxRowGroupMemory>>20)

// pqColumn is a leaf column of the schema, in row group order.
type pqColumn struct {
	path           string
	maxRep, maxDef int
	// valueMemory is the memory per declared value (fixed-length byte
	// arrays are allocated at their length).
	valueMemory int64
	// codec is the column's first chunk's, with which parquet-go
	// decompresses all its chunks.
	codec format.CompressionCodec
}

type pqCheck struct {
	r     io.ReaderAt
	proto thrift.CompactProtocol
	buf   []byte
}

// checkParquet returns what is wrong with the sizes the Parquet file r
// declares, or nil. A file that does not start with PAR1 is left to
// parquet.OpenFile to refuse, as it does before allocating anything.
func checkParquet(r io.ReaderAt, size int64) error {
	c := &pqCheck{r: r}
	if size < 4 {
		return nil
	}
	head, err := c.read(0, 4)
	if err != nil || string(head) != "PAR1" {
		return nil
	}
	if size < 12 {
		return fmt.Errorf("not a Parquet file: %d bytes is too short", size)
	}
	tail, err := c.read(size-8, 8)
	if err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		// PARE, an encrypted footer, is not supported either.
		return fmt.Errorf("not a Parquet file: it ends with %q, not PAR1", tail[4:])
	}
	// The footer and its length come last; the data lies between the
	// leading magic and the footer.
	footerLen := int64(binary.LittleEndian.Uint32(tail))
	if footerLen > size-12 {
		return fmt.Errorf("corrupt Parquet file: its footer of %d bytes does not fit in the file's %d bytes", footerLen, size)
	}
	dataEnd := size - 8 - footerLen
	footer, err := c.read(dataEnd, int(footerLen))
	if err != nil {
		return err
	}
	footer = append([]byte(nil), footer...)
	w := thriftWalk{r: c.proto.NewReaderFromBytes(footer), n: len(footer)}
	if err := w.structure(0); err != nil {
		return fmt.Errorf("corrupt Parquet file: footer %w", err)
	}
	var md format.FileMetaData
	if err := thrift.NewDecoder(c.proto.NewReaderFromBytes(footer)).Decode(&md); err != nil {
		return fmt.Errorf("corrupt Parquet file: footer: %v", err)
	}
	cols, paths, err := pqColumns(md.Schema)
	if err != nil {
		return fmt.Errorf("corrupt Parquet file: schema: %w", err)
	}
	// parquet-go keeps a path element per schema element and level.
	if err := w.alloc(16 * int64(paths)); err != nil {
		return fmt.Errorf("corrupt Parquet file: footer %w", err)
	}
	if len(md.RowGroups) > 0 && len(md.RowGroups[0].Columns) == len(cols) {
		for j := range cols {
			cols[j].codec = md.RowGroups[0].Columns[j].MetaData.Codec
		}
	}
	for i := range md.RowGroups {
		if err := c.rowGroup(&md.RowGroups[i], i+1, cols, dataEnd); errors.Is(err, errOverBudget) {
			//lint:ignore ST1005 Parquet is the format's name, a proper noun; README quotes this message.
			return fmt.Errorf("Parquet file too large to decode: %w", err)
		} else if err != nil {
			return fmt.Errorf("corrupt Parquet file: %w", err)
		}
	}
	return nil
}

// rowGroup checks the column chunks of a row group and their pages.
func (c *pqCheck) rowGroup(rg *format.RowGroup, n int, cols []pqColumn, dataEnd int64) error {
	if rg.NumRows < 0 {
		return fmt.Errorf("row group %d has %d rows", n, rg.NumRows)
	}
	// parquet-go allocates (columns × row groups) before it compares them.
	if len(rg.Columns) != len(cols) {
		return fmt.Errorf("row group %d has %d column chunks; the schema has %d columns", n, len(rg.Columns), len(cols))
	}
	var memory int64
	for j := range rg.Columns {
		mem, err := c.chunk(rg, &rg.Columns[j].MetaData, cols[j], dataEnd)
		if err != nil {
			return fmt.Errorf("row group %d, column %s: %w", n, cols[j].path, err)
		}
		if memory += mem; memory > maxRowGroupMemory {
			return fmt.Errorf("row group %d would take %d MiB to decode (with columns up to %s), %w", n, memory>>20, cols[j].path, errOverBudget)
		}
	}
	return nil
}

// chunk walks the page headers of a column chunk, seeking over the page
// data, and returns the memory its largest page and its dictionary take.
func (c *pqCheck) chunk(rg *format.RowGroup, md *format.ColumnMetaData, col pqColumn, dataEnd int64) (int64, error) {
	if col.codec == format.Lz4Raw {
		// parquet-go retries a corrupt LZ4_RAW page with ever larger
		// buffers, without end.
		return 0, errors.New("is compressed with LZ4_RAW, which is not supported; use SNAPPY, ZSTD, GZIP or none")
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	if start < 4 || md.TotalCompressedSize < 0 || start > dataEnd || md.TotalCompressedSize > dataEnd-start {
		return 0, fmt.Errorf("has %d bytes at offset %d, outside the file's data (offsets 4 to %d)", md.TotalCompressedSize, start, dataEnd)
	}
	end := start + md.TotalCompressedSize
	var dict, largest int64
	for pos, p := start, 1; pos < end; p++ {
		h, hlen, err := c.pageHeader(pos, end)
		if err != nil {
			return 0, fmt.Errorf("page %d: %w", p, err)
		}
		mem, err := c.page(rg, md, col, &h, pos+hlen, end)
		if err != nil {
			return 0, fmt.Errorf("page %d %w", p, err)
		}
		if h.Type == format.DictionaryPage {
			dict = max(dict, mem)
		} else {
			largest = max(largest, mem)
		}
		pos += hlen + int64(h.CompressedPageSize)
	}
	return dict + largest, nil
}

// page checks the sizes a page header declares against its column chunk and
// row group, and returns the memory parquet-go takes to decode it. body is
// where the page data starts, end where the chunk ends.
func (c *pqCheck) page(rg *format.RowGroup, md *format.ColumnMetaData, col pqColumn, h *format.PageHeader, body, end int64) (int64, error) {
	size, usize := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if size < 0 || usize < 0 {
		return 0, fmt.Errorf("declares %d bytes (%d uncompressed)", size, usize)
	}
	if size > end-body {
		return 0, fmt.Errorf("declares %d bytes; %d are left in its column chunk", size, end-body)
	}
	// A page cannot hold more than its column chunk, whose total includes
	// the page headers.
	if usize > md.TotalUncompressedSize {
		return 0, fmt.Errorf("declares %d bytes uncompressed; its column chunk declares %d in all", usize, md.TotalUncompressedSize)
	}
	// parquet-go reads the header that the type names, and a data page's
	// dictionary from the first page's dictionary header whatever its
	// type: a page carries exactly the header of its type.
	headers := 0
	for _, ok := range [...]bool{h.DataPageHeader.Valid, h.IndexPageHeader.Valid, h.DictionaryPageHeader.Valid, h.DataPageHeaderV2.Valid} {
		if ok {
			headers++
		}
	}
	own := h.Type == format.DataPage && h.DataPageHeader.Valid ||
		h.Type == format.IndexPage && h.IndexPageHeader.Valid ||
		h.Type == format.DictionaryPage && h.DictionaryPageHeader.Valid ||
		h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid
	if !own || headers != 1 {
		return 0, fmt.Errorf("is of type %s but does not carry just that type's header", h.Type)
	}
	values := int64(pageValues(h))
	var levels int64
	decompress := col.codec != format.Uncompressed
	switch h.Type {
	case format.DataPage:
		if values < 0 || col.maxRep == 0 && values > rg.NumRows {
			return 0, fmt.Errorf("declares %d values; its row group has %d rows", values, rg.NumRows)
		}
	case format.DataPageV2:
		v := &h.DataPageHeaderV2.V
		if values < 0 || col.maxRep == 0 && values > rg.NumRows || v.NumRows < 0 || int64(v.NumRows) > rg.NumRows || v.NumNulls < 0 || v.NumNulls > v.NumValues {
			return 0, fmt.Errorf("declares %d values, %d nulls and %d rows; its row group has %d rows", values, v.NumNulls, v.NumRows, rg.NumRows)
		}
		rep, def := int64(v.RepetitionLevelsByteLength), int64(v.DefinitionLevelsByteLength)
		if rep < 0 || def < 0 || rep+def > size || rep+def > usize {
			return 0, fmt.Errorf("declares %d bytes of levels in %d bytes (%d uncompressed)", rep+def, size, usize)
		}
		levels = rep + def
		decompress = decompress && (!v.IsCompressed.Valid || v.IsCompressed.V)
	}
	if values < 0 {
		return 0, fmt.Errorf("declares %d values", values)
	}
	// The page data read, decompressed, and its values decoded.
	memory := size + values*col.valueMemory
	if decompress {
		memory += usize
	}
	if memory > maxRowGroupMemory {
		return 0, fmt.Errorf("(%d bytes, %d uncompressed, %d values) would take %d MiB to decode, %w", size, usize, values, memory>>20, errOverBudget)
	}
	switch {
	case h.Type == format.DataPageV2:
		// Levels of a v2 page are never compressed.
		v := &h.DataPageHeaderV2.V
		rep := int64(v.RepetitionLevelsByteLength)
		if err := c.levels("repetition", col.maxRep, values, body, rep); err != nil {
			return 0, err
		}
		if err := c.levels("definition", col.maxDef, values, body+rep, int64(v.DefinitionLevelsByteLength)); err != nil {
			return 0, err
		}
	case h.Type == format.DataPage && !decompress:
		if err := c.levelsV1(&h.DataPageHeader.V, col, values, body, size); err != nil {
			return 0, err
		}
	}
	if decompress {
		if err := c.codecSize(col.codec, body+levels, size-levels, usize-levels); err != nil {
			return 0, err
		}
	}
	return memory, nil
}

// pageValues is the number of values a page header declares.
func pageValues(h *format.PageHeader) int32 {
	switch h.Type {
	case format.DictionaryPage:
		return h.DictionaryPageHeader.V.NumValues
	case format.DataPage:
		return h.DataPageHeader.V.NumValues
	case format.DataPageV2:
		return h.DataPageHeaderV2.V.NumValues
	}
	return 0
}

// codecSize checks the size that compressed page data states for itself
// (snappy's length preamble, a zstd frame's content size), which the
// decoder allocates when it exceeds the page's uncompressed size.
func (c *pqCheck) codecSize(codec format.CompressionCodec, at, size, usize int64) error {
	b, err := c.read(at, int(min(size, 18)))
	if err != nil || len(b) == 0 {
		return err
	}
	var stated uint64
	switch codec {
	case format.Snappy:
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("has a corrupt snappy length")
		}
		stated = v
	case format.Zstd:
		if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
			return nil
		}
		fhd := b[4]
		single := fhd>>5&1 == 1
		i := 5 + [4]int{0, 1, 2, 4}[fhd&3]
		if !single {
			i++ // window descriptor
		}
		var fcs int
		switch fhd >> 6 {
		case 0:
			if single {
				fcs = 1
			}
		case 1:
			fcs = 2
		case 2:
			fcs = 4
		case 3:
			fcs = 8
		}
		if fcs == 0 {
			return nil
		}
		if len(b) < i+fcs {
			return errors.New("has a truncated zstd frame header")
		}
		var v [8]byte
		copy(v[:], b[i:i+fcs])
		stated = binary.LittleEndian.Uint64(v[:])
		if fcs == 2 {
			stated += 256
		}
	default:
		return nil
	}
	if stated > uint64(usize) {
		return fmt.Errorf("holds %s data of %d bytes uncompressed; the page declares %d", codec, stated, usize)
	}
	return nil
}

// levelsV1 checks the levels of an uncompressed v1 page: each is prefixed by
// its length in 4 bytes.
func (c *pqCheck) levelsV1(v *format.DataPageHeader, col pqColumn, values, body, size int64) error {
	for _, l := range []struct {
		name string
		max  int
		enc  format.Encoding
	}{{"repetition", col.maxRep, v.RepetitionLevelEncoding}, {"definition", col.maxDef, v.DefinitionLevelEncoding}} {
		if l.max == 0 || l.enc != format.RLE {
			continue
		}
		if size < 4 {
			return fmt.Errorf("has no room for its %s levels", l.name)
		}
		b, err := c.read(body, 4)
		if err != nil {
			return err
		}
		n := int64(binary.LittleEndian.Uint32(b))
		if n > size-4 {
			return fmt.Errorf("declares %d bytes of %s levels; the page has %d", n, l.name, size-4)
		}
		if err := c.levels(l.name, l.max, values, body+4, n); err != nil {
			return err
		}
		body, size = body+4+n, size-4-n
	}
	return nil
}

// levels checks an RLE/bit-packed run of levels: parquet-go decodes all of
// its runs before it cuts them to the page's values, and a run of 2^31
// levels takes 5 bytes.
func (c *pqCheck) levels(name string, maxLevel int, values, at, n int64) error {
	if maxLevel == 0 || n == 0 {
		return nil
	}
	b, err := c.read(at, int(n))
	if err != nil {
		return err
	}
	width := int64(bits.Len(uint(maxLevel)))
	// The last bit-packed group of 8 may be padded, wherever the runs
	// before it left it to start.
	limit := values + 7
	var count int64
	for len(b) > 0 {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("has corrupt %s levels", name)
		}
		b = b[k:]
		if h>>1 > 1<<31 {
			return fmt.Errorf("holds a run of %d %s levels", h>>1, name)
		}
		skip := (width + 7) / 8
		if h&1 == 1 {
			// Bit-packed: groups of 8 levels, width bytes a group.
			count += int64(h>>1) * 8
			skip = int64(h>>1) * width
		} else {
			count += int64(h >> 1)
		}
		if count > limit {
			return fmt.Errorf("holds more %s levels than its %d values", name, values)
		}
		b = b[min(skip, int64(len(b))):]
	}
	return nil
}

// pageHeader decodes the page header at pos, reading more of the column
// chunk (which ends at end) until the header fits, and returns it and its
// length.
func (c *pqCheck) pageHeader(pos, end int64) (format.PageHeader, int64, error) {
	var h format.PageHeader
	for n := min(end-pos, 256); ; {
		b, err := c.read(pos, int(n))
		if err != nil {
			return h, 0, err
		}
		// Lengths are checked against the rest of the chunk, reads against
		// the bytes read so far.
		w := thriftWalk{r: c.proto.NewReaderFromBytes(b), n: int(end - pos)}
		err = w.structure(0)
		if errors.Is(err, errShort) && n < end-pos {
			// Statistics in a header can hold long strings (prompts).
			n = min(max(4*n, int64(w.need)+256), end-pos)
			continue
		}
		if errors.Is(err, errShort) {
			return h, 0, errors.New("header runs past the end of its column chunk")
		}
		if err != nil {
			return h, 0, fmt.Errorf("header %w", err)
		}
		r := c.proto.NewReaderFromBytes(b)
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			return h, 0, fmt.Errorf("corrupt header: %v", err)
		}
		return h, int64(r.BytesRead()), nil
	}
}

// read returns n bytes at off, in a buffer reused by the next read.
func (c *pqCheck) read(off int64, n int) ([]byte, error) {
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	if _, err := c.r.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading %d bytes at offset %d: %w", n, off, err)
	}
	return b, nil
}

// pqColumns returns the leaf columns of a schema (a depth-first list of
// elements, groups giving their number of children) and the number of path
// elements of all its elements.
func pqColumns(schema []format.SchemaElement) ([]pqColumn, int, error) {
	if len(schema) == 0 {
		return nil, 0, errors.New("is empty")
	}
	type group struct {
		left     int32
		rep, def int
		path     string
	}
	root := schema[0].NumChildren.V
	if root < 0 {
		return nil, 0, fmt.Errorf("root has %d children", root)
	}
	stack := []group{{left: root}}
	var cols []pqColumn
	paths := 1
	for i := 1; i < len(schema); i++ {
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return nil, 0, fmt.Errorf("has %d elements; its groups hold %d", len(schema), i)
		}
		if len(stack) > parquet.MaxColumnDepth {
			return nil, 0, fmt.Errorf("nests deeper than %d", parquet.MaxColumnDepth)
		}
		parent := &stack[len(stack)-1]
		parent.left--
		el := &schema[i]
		g := group{rep: parent.rep, def: parent.def, path: el.Name}
		if parent.path != "" {
			g.path = parent.path + "." + el.Name
		}
		paths += len(stack) + 1
		switch el.RepetitionType.V {
		case format.Optional:
			g.def++
		case format.Repeated:
			g.rep++
			g.def++
		}
		n := el.NumChildren.V
		switch {
		case n < 0 || el.Type.Valid && n > 0:
			return nil, 0, fmt.Errorf("element %s is a column with %d children", g.path, n)
		case el.Type.Valid:
			mem := int64(valueMemory)
			if el.Type.V == format.FixedLenByteArray {
				mem += int64(max(el.TypeLength.V, 0))
			}
			cols = append(cols, pqColumn{path: g.path, maxRep: g.rep, maxDef: g.def, valueMemory: mem})
		default:
			g.left = n
			stack = append(stack, g)
		}
	}
	for _, g := range stack {
		if g.left != 0 {
			return nil, 0, fmt.Errorf("ends %d elements short of its groups", g.left)
		}
	}
	return cols, paths, nil
}

// thriftWalk reads a thrift compact struct, checking what parquet-go's
// decoder trusts: the nesting, the lengths of strings and of lists, which
// must fit in the n bytes the struct has (a list element takes at least one),
// and the memory decoding takes, which it adds up: a list costs its
// elements' Go size even when they take one byte each in the file.
type thriftWalk struct {
	r      thrift.BytesReader
	n      int
	memory int64
	// need is the bytes needed to read a string that ran past the end.
	need int
}

func (w *thriftWalk) left() int { return w.n - w.r.BytesRead() }

// alloc adds to the memory decoding takes.
func (w *thriftWalk) alloc(n int64) error {
	if w.memory += n; w.memory > maxMetadataMemory {
		return fmt.Errorf("would take more than %d MiB to decode", maxMetadataMemory>>20)
	}
	return nil
}

func (w *thriftWalk) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("nests deeper than %d", maxThriftDepth)
	}
	for {
		f, err := w.r.ReadField()
		if err != nil {
			return w.short(err)
		}
		if f.Type == thrift.STOP {
			return nil
		}
		// A struct's bool field holds its value in its type.
		if f.Type == thrift.TRUE || f.Type == thrift.FALSE {
			continue
		}
		if err := w.value(f.Type, depth+1); err != nil {
			return err
		}
	}
}

func (w *thriftWalk) value(t thrift.Type, depth int) error {
	var err error
	switch t {
	case thrift.TRUE, thrift.FALSE, thrift.I8:
		_, err = w.r.ReadInt8()
	case thrift.I16, thrift.I32, thrift.I64:
		_, err = w.r.ReadInt64()
	case thrift.DOUBLE:
		_, err = w.r.ReadFloat64()
	case thrift.UUID:
		if _, err = w.r.ReadFloat64(); err == nil {
			_, err = w.r.ReadFloat64()
		}
	case thrift.BINARY:
		n, err := w.r.ReadLength()
		if err != nil {
			return w.short(err)
		}
		if n > w.left() {
			return fmt.Errorf("has a string of %d bytes in the %d bytes left", n, w.left())
		}
		// parquet-go copies a page header's strings, and the whole footer.
		if err := w.alloc(int64(n)); err != nil {
			return err
		}
		w.need = w.r.BytesRead() + n
		_, err = w.r.(interface{ Discard(int) (int, error) }).Discard(n)
		return w.short(err)
	case thrift.STRUCT:
		return w.structure(depth)
	case thrift.LIST, thrift.SET:
		l, err := w.r.ReadList()
		if err != nil {
			return w.short(err)
		}
		return w.elements(int64(l.Size), []thrift.Type{l.Type}, depth)
	case thrift.MAP:
		m, err := w.r.ReadMap()
		if err != nil {
			return w.short(err)
		}
		return w.elements(int64(m.Size), []thrift.Type{m.Key, m.Value}, depth)
	default:
		return fmt.Errorf("has a value of unknown thrift type %d", t)
	}
	return w.short(err)
}

func (w *thriftWalk) elements(n int64, types []thrift.Type, depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("nests deeper than %d", maxThriftDepth)
	}
	if n*int64(len(types)) > int64(w.left()) {
		return fmt.Errorf("has a list of %d elements in the %d bytes left", n, w.left())
	}
	for _, t := range types {
		size := int64(8)
		switch t {
		case thrift.STRUCT:
			size = structMemory
		case thrift.BINARY, thrift.LIST, thrift.SET, thrift.MAP:
			size = 24
		}
		if err := w.alloc(n * size); err != nil {
			return err
		}
	}
	for range n {
		for _, t := range types {
			if err := w.value(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// short marks a read past the end of the bytes at hand as errShort.
func (w *thriftWalk) short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errShort
	}
	return err
}
