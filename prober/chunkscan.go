package prober

import "encoding/json"

// chunk is one streamed event of either chat or completions; decoding both into
// one shape keeps a single parse on the hot path.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		Text string `json:"text"`
		// Completions carry reasoning on the choice, beside an empty text.
		ReasoningContent string  `json:"reasoning_content"`
		Reasoning        string  `json:"reasoning"`
		FinishReason     *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// reset clears c for reuse while keeping its choices' backing array.
func (c *chunk) reset() {
	// encoding/json decodes into existing elements without zeroing them, so a
	// field absent from this chunk would otherwise keep the last chunk's value.
	clear(c.Choices[:cap(c.Choices)])
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = nil
}

// content reports whether the chunk carries generated output text and reasoning text.
func (c *chunk) content() (output, reasoning bool) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		output = output || ch.Delta.Content != "" || ch.Text != ""
		reasoning = reasoning || ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != "" ||
			ch.ReasoningContent != "" || ch.Reasoning != ""
	}
	return output, reasoning
}

// appendText appends the chunk's reasoning and output text to b.
func (c *chunk) appendText(b []byte) []byte {
	for i := range c.Choices {
		ch := &c.Choices[i]
		b = append(b, ch.Delta.ReasoningContent...)
		b = append(b, ch.Delta.Reasoning...)
		b = append(b, ch.Delta.Content...)
		b = append(b, ch.ReasoningContent...)
		b = append(b, ch.Reasoning...)
		b = append(b, ch.Text...)
	}
	return b
}

func (c *chunk) finished() bool {
	for i := range c.Choices {
		if c.Choices[i].FinishReason != nil && *c.Choices[i].FinishReason != "" {
			return true
		}
	}
	return false
}

// decodeChunk decodes one event's JSON into info. The shapes servers send go
// through scanChunk, which allocates nothing; anything it does not handle
// (invalid JSON, a known field of an unexpected type, a repeated known key,
// an escaped or non-ASCII key, deep nesting) goes to encoding/json with fb,
// so that the outcome, errors included, is always what encoding/json gives.
// info.errValue may alias data.
func decodeChunk(data []byte, fb *chunk, info *chunkInfo) error {
	*info = chunkInfo{}
	s := chunkScanner{b: data}
	if s.chunk(info) {
		return nil
	}
	*info = chunkInfo{}
	fb.reset()
	if err := json.Unmarshal(data, fb); err != nil {
		return err
	}
	info.output, info.reasoning = fb.content()
	info.finished = fb.finished()
	if fb.Usage != nil {
		info.hasUsage, info.usage = true, *fb.Usage
	}
	info.errValue = fb.Error
	return nil
}

// chunkScanner validates JSON and picks out chunk fields as encoding/json
// would decode them into chunk. Each method reports false when the input is
// not valid JSON or not a shape it handles; the caller then falls back.
type chunkScanner struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of values the scanner skips; deeper input
// falls back to encoding/json, which allows far more.
const maxSkipDepth = 32

func (s *chunkScanner) chunk(info *chunkInfo) bool {
	if s.peek() != '{' {
		return false // null, which encoding/json accepts as no fields, or a type error
	}
	var seen uint8
	ok := s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "choices"):
			return once(&seen, 1) && s.choices(info)
		case keyIs(key, "usage"):
			return once(&seen, 2) && s.usage(info)
		case keyIs(key, "error"):
			if !once(&seen, 4) {
				return false
			}
			s.ws()
			start := s.i
			if !s.skip(1) {
				return false
			}
			info.errValue = s.b[start:s.i]
			return true
		}
		return s.skip(1)
	})
	s.ws()
	return ok && s.i == len(s.b)
}

// once marks bit in seen, and reports false if it was already set: a known
// key given twice, which encoding/json merges in ways not worth copying.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (s *chunkScanner) choices(info *chunkInfo) bool {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '[':
		return s.array(func() bool {
			switch s.peek() {
			case 'n': // a null element decodes to a zero choice
				return s.literal("null")
			case '{':
				return s.choice(info)
			}
			return false
		})
	}
	return false
}

// array scans a JSON array at s.i, calling elem at the start of each element.
func (s *chunkScanner) array(elem func() bool) bool {
	s.i++ // '['
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *chunkScanner) choice(info *chunkInfo) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		if keyIs(key, "delta") {
			if !once(&seen, 1) {
				return false
			}
			switch s.peek() {
			case 'n':
				return s.literal("null")
			case '{':
				return s.delta(info)
			}
			return false
		}
		var bit uint8
		var flag *bool
		switch {
		case keyIs(key, "text"):
			bit, flag = 2, &info.output
		case keyIs(key, "finish_reason"):
			bit, flag = 4, &info.finished
		case keyIs(key, "reasoning_content"): // completions' reasoning
			bit, flag = 8, &info.reasoning
		case keyIs(key, "reasoning"):
			bit, flag = 16, &info.reasoning
		default:
			return s.skip(1)
		}
		nonEmpty, ok := s.optString()
		*flag = *flag || nonEmpty
		return once(&seen, bit) && ok
	})
}

func (s *chunkScanner) delta(info *chunkInfo) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		var bit uint8
		var flag *bool
		switch {
		case keyIs(key, "content"):
			bit, flag = 1, &info.output
		case keyIs(key, "reasoning_content"):
			bit, flag = 2, &info.reasoning
		case keyIs(key, "reasoning"):
			bit, flag = 4, &info.reasoning
		default:
			return s.skip(1)
		}
		nonEmpty, ok := s.optString()
		*flag = *flag || nonEmpty
		return once(&seen, bit) && ok
	})
}

func (s *chunkScanner) usage(info *chunkInfo) bool {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '{':
	default:
		return false
	}
	info.hasUsage = true
	var seen uint8
	return s.object(func(key []byte) bool {
		switch {
		case keyIs(key, "prompt_tokens"):
			return once(&seen, 1) && s.optInt(&info.usage.PromptTokens)
		case keyIs(key, "completion_tokens"):
			return once(&seen, 2) && s.optInt(&info.usage.CompletionTokens)
		case keyIs(key, "completion_tokens_details"):
			return once(&seen, 4) && s.usageDetails(info)
		}
		return s.skip(1)
	})
}

// usageDetails scans completion_tokens_details, which holds reasoning_tokens.
func (s *chunkScanner) usageDetails(info *chunkInfo) bool {
	switch s.peek() {
	case 'n': // null leaves a struct as it is
		return s.literal("null")
	case '{':
	default:
		return false
	}
	var seen uint8
	return s.object(func(key []byte) bool {
		if keyIs(key, "reasoning_tokens") {
			return once(&seen, 1) && s.optInt(&info.usage.CompletionTokensDetails.ReasoningTokens)
		}
		return s.skip(2)
	})
}

// object scans an object whose '{' is next, calling field with each key
// once the ':' after it is consumed; field must consume the value.
func (s *chunkScanner) object(field func(key []byte) bool) bool {
	s.i++ // '{'
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		key, plain := s.str()
		// A key with escapes or non-ASCII bytes could still match a field
		// under encoding/json's Unicode case folding: leave it to it.
		if !plain || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// optString scans a string or null (a string field's zero value) and
// reports whether it is a non-empty string.
func (s *chunkScanner) optString() (nonEmpty, ok bool) {
	switch s.peek() {
	case 'n':
		return false, s.literal("null")
	case '"':
		raw, _ := s.str()
		// Any raw content, an escape or an invalid byte included, decodes to
		// a non-empty string.
		return len(raw) > 0, raw != nil
	}
	return false, false
}

// optInt scans an integer that fits an int32, or null (leaving *v).
func (s *chunkScanner) optInt(v *int) bool {
	switch c := s.peek(); {
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
	default:
		return false
	}
	raw := s.number()
	if raw == nil {
		return false
	}
	neg := raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	if len(digits) > 9 { // beyond any token count; encoding/json judges the range
		return false
	}
	n := 0
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false // a fraction or exponent: encoding/json refuses it for an int
		}
		n = n*10 + int(d-'0')
	}
	if neg {
		n = -n
	}
	*v = n
	return true
}

// skip scans any value.
func (s *chunkScanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() bool { return s.skip(depth + 1) })
	case c == '"':
		raw, _ := s.str()
		return raw != nil
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number() != nil
	}
	return false
}

// str scans a string whose '"' is next and returns its raw content (non-nil,
// possibly empty) and whether it is plain: ASCII without escapes. raw is nil
// when the string is invalid.
func (s *chunkScanner) str() (raw []byte, plain bool) {
	s.i++ // '"'
	start := s.i
	var seen byte // every byte ORed in: its high bit marks non-ASCII
	escaped := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !strSpecial[c] {
			seen |= c
			s.i++
			continue
		}
		switch {
		case c == '"':
			raw = s.b[start:s.i:s.i]
			s.i++
			return raw, !escaped && seen < 0x80
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+5 >= len(s.b) {
					return nil, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false
					}
				}
				s.i += 6
			default:
				return nil, false
			}
		default: // a control character
			return nil, false
		}
	}
	return nil, false
}

// strSpecial marks the bytes that end a string's plain run: the quote, the
// backslash and the control characters JSON forbids unescaped.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// number scans a JSON number and returns it, or nil.
func (s *chunkScanner) number() []byte {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil
		}
	}
	return s.b[start:s.i:s.i]
}

func (s *chunkScanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *chunkScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// ws skips whitespace.
func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *chunkScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// keyIs reports whether key matches field name (lower case) as encoding/json
// matches ASCII keys: exactly, or ignoring the case of letters.
func keyIs(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
