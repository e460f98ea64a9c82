package prober

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/inferprobe/inferprobe/record"
	"github.com/klauspost/compress/zstd"
)

// Compressed replies. The client never asks for compression (compressors
// buffer, which distorts chunk timing), but a proxy may compress anyway,
// flushing per event; such a reply is decoded as it arrives, and each event
// is stamped at the read that delivered its compressed bytes.

// contentEncoding reads a reply's Content-Encoding. Stacked encodings
// ("gzip, br") and unknown ones are refused.
func contentEncoding(h http.Header) (record.Encoding, error) {
	value := strings.Join(h.Values("Content-Encoding"), ",")
	enc := record.EncodingIdentity
	for token := range strings.SplitSeq(value, ",") {
		token = strings.ToLower(strings.TrimSpace(token))
		var e record.Encoding
		switch token {
		case "", "identity":
			continue
		case "gzip", "x-gzip":
			e = record.EncodingGzip
		case "deflate":
			e = record.EncodingDeflate
		case "br":
			e = record.EncodingBrotli
		case "zstd":
			e = record.EncodingZstd
		default:
			return record.EncodingIdentity, fmt.Errorf("Content-Encoding %q is not one inferprobe decodes (gzip, deflate, br, zstd); the server or a proxy compressed the reply unasked: turn compression off there", value)
		}
		if enc != record.EncodingIdentity {
			return record.EncodingIdentity, fmt.Errorf("Content-Encoding %q stacks encodings, which inferprobe does not decode; the server or a proxy compressed the reply unasked: turn compression off there", value)
		}
		enc = e
	}
	return enc, nil
}

// errUndecodable marks a compressed body the decoder refused: a protocol
// error, not a truncation.
var errUndecodable = errors.New("compressed body does not decode")

// arrivalReader notes when the compressed bytes arrive, so that a decoded
// event is stamped by the read that delivered it.
type arrivalReader struct {
	r    io.Reader
	now  func() time.Time
	last time.Time // the latest Read that returned data or an error (a cut is seen then)
	err  error     // the source's latest error
}

func (a *arrivalReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 || err != nil {
		a.last = a.now()
	}
	a.err = err
	return n, err
}

// stamp is the arrival time of the bytes read so far, or of the end or cut
// of the stream once it was read; the reader of the decoded stream calls it
// after each of its reads returns data or an error.
func (a *arrivalReader) stamp() time.Time {
	if a.last.IsZero() {
		return a.now()
	}
	return a.last
}

// decodedBody decodes src. The decoder is made on the first Read, since
// making it reads the format's header, which must wait under the stall
// timer like any other read.
type decodedBody struct {
	src *arrivalReader
	br  *bufio.Reader // src, buffered: gzip members and deflate's header check share it
	enc record.Encoding
	dec io.Reader
	// memberDone: a gzip member ended; the next Read starts the next one.
	// Members are read one at a time (no multistream), so that an event at
	// a member's end is returned before the next member's header arrives.
	memberDone bool
	err        error
}

func decodeBody(enc record.Encoding, src *arrivalReader) io.Reader {
	return &decodedBody{src: src, enc: enc}
}

func (d *decodedBody) Read(p []byte) (int, error) {
	for d.err == nil {
		if d.dec == nil || d.memberDone {
			if err := d.start(); err != nil {
				d.err = d.undecodable(err)
				break
			}
		}
		n, err := d.dec.Read(p)
		if err == io.EOF && d.enc == record.EncodingGzip {
			if d.memberDone, err = true, nil; n == 0 {
				continue
			}
		}
		if err != nil {
			d.err = d.undecodable(err)
		}
		return n, d.err
	}
	return 0, d.err
}

// start makes the decoder, or starts the next gzip member; io.EOF when the
// body ends cleanly between members.
func (d *decodedBody) start() error {
	if d.br == nil {
		d.br = bufio.NewReaderSize(d.src, 4<<10)
	}
	switch d.enc {
	case record.EncodingGzip:
		if d.dec != nil {
			if _, err := d.br.Peek(1); err != nil {
				return err // io.EOF: no further member
			}
			z := d.dec.(*gzip.Reader)
			d.memberDone = false
			if err := z.Reset(d.br); err != nil {
				return err
			}
			z.Multistream(false)
			return nil
		}
		z, err := gzip.NewReader(d.br)
		if err != nil {
			return err
		}
		z.Multistream(false)
		d.dec = z
	case record.EncodingDeflate:
		// "deflate" is zlib-wrapped (RFC 9110), but some servers send raw
		// deflate; a zlib header is two bytes whose value is a multiple of
		// 31 with compression method 8.
		h, err := d.br.Peek(2)
		if err != nil {
			return err
		}
		if h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			if d.dec, err = zlib.NewReader(d.br); err != nil {
				return err
			}
		} else {
			d.dec = flate.NewReader(d.br)
		}
	case record.EncodingBrotli:
		d.dec = brotli.NewReader(d.br)
	case record.EncodingZstd:
		z, _ := zstdDecoders.Get().(*zstd.Decoder)
		if z == nil {
			var err error
			if z, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow)); err != nil {
				return err
			}
		}
		if err := z.Reset(d.br); err != nil {
			zstdDecoders.Put(z)
			return err
		}
		d.dec = z
	}
	return nil
}

// undecodable turns a decoder's failure into the body's error: the
// source's own failure stays as it is (a reset, a cut), a body that ended
// inside the compressed data is truncated, and anything else is data the
// decoder refused.
func (d *decodedBody) undecodable(err error) error {
	switch {
	case err == io.EOF:
		return err
	case d.src.err != nil && d.src.err != io.EOF:
		return d.src.err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s body ended inside its compressed data: %w", d.enc, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%w: %s: %v", errUndecodable, d.enc, err)
}

// maxZstdWindow bounds a zstd frame's window, and so the decoder's memory:
// 8 MiB is what the format asks every decoder to support.
const maxZstdWindow = 8 << 20

// zstdDecoders keeps zstd decoders for reuse: one is costly to make.
var zstdDecoders sync.Pool

// releaseDecoder returns body's decoder for reuse, if it keeps one.
func releaseDecoder(body io.Reader) {
	d, ok := body.(*decodedBody)
	if !ok {
		return
	}
	if z, ok := d.dec.(*zstd.Decoder); ok {
		_ = z.Reset(nil)
		zstdDecoders.Put(z)
	}
}
