package record

// Encoding is the Content-Encoding a reply came in. The set is bounded: it
// becomes a label.
type Encoding uint8

const (
	EncodingIdentity Encoding = iota
	EncodingGzip
	EncodingDeflate
	EncodingBrotli
	EncodingZstd
)

// Encodings are the encodings a reply can come compressed in, every one but identity.
var Encodings = []Encoding{EncodingGzip, EncodingDeflate, EncodingBrotli, EncodingZstd}

func (e Encoding) String() string {
	switch e {
	case EncodingGzip:
		return "gzip"
	case EncodingDeflate:
		return "deflate"
	case EncodingBrotli:
		return "br"
	case EncodingZstd:
		return "zstd"
	}
	return "identity"
}
