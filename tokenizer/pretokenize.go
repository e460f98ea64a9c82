package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Split regexes implemented by hand, by the pattern as tokenizer.json
// writes it.
const (
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// splitter returns the split function of a pre_tokenizer, or why it is not supported.
func splitter(pre *component) (func(string) int, error) {
	switch {
	case pre == nil:
		return nil, errors.New("unsupported: pre_tokenizer is null (only ByteLevel, or a Split and ByteLevel Sequence, is supported)")
	case pre.Type == "Sequence":
		if len(pre.Pretokenizers) != 2 || pre.Pretokenizers[0].Type != "Split" || pre.Pretokenizers[1].Type != "ByteLevel" {
			return nil, errors.New("unsupported pre_tokenizer Sequence (only [Split, ByteLevel] is supported)")
		}
		sp, bl := &pre.Pretokenizers[0], &pre.Pretokenizers[1]
		switch {
		case bl.AddPrefixSpace != nil && *bl.AddPrefixSpace:
			return nil, errors.New("unsupported: pre_tokenizer ByteLevel with add_prefix_space=true")
		case bl.UseRegex == nil || *bl.UseRegex:
			return nil, errors.New("unsupported: pre_tokenizer ByteLevel after Split with use_regex=true")
		case sp.Behavior != "Isolated" || sp.Invert:
			return nil, fmt.Errorf("unsupported: pre_tokenizer Split with behavior %q, invert %v (only Isolated, not inverted)", sp.Behavior, sp.Invert)
		case sp.Pattern.Regex == nil:
			return nil, errors.New("unsupported: pre_tokenizer Split on a string, not a regex")
		}
		switch *sp.Pattern.Regex {
		case llama3Pattern:
			return func(s string) int { return splitLlama(s, 3) }, nil
		case qwen2Pattern:
			return func(s string) int { return splitLlama(s, 1) }, nil
		}
		return nil, fmt.Errorf("unsupported pre_tokenizer Split regex %q (only GPT-2's, Llama 3's and Qwen2's are implemented)", *sp.Pattern.Regex)
	case pre.Type != "ByteLevel":
		return nil, fmt.Errorf("unsupported pre_tokenizer %q (only ByteLevel, or a Split and ByteLevel Sequence, is supported)", pre.Type)
	case pre.AddPrefixSpace != nil && *pre.AddPrefixSpace:
		return nil, errors.New("unsupported: pre_tokenizer ByteLevel with add_prefix_space=true")
	case pre.UseRegex != nil && !*pre.UseRegex:
		return nil, errors.New("unsupported: pre_tokenizer ByteLevel with use_regex=false")
	}
	return splitNext, nil
}

// Character classes of the GPT-2 split regex.
const (
	clsOther = iota // [^\s\p{L}\p{N}]
	clsLetter
	clsNumber
	clsSpace
)

func classOf(r rune) int {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.IsSpace(r): // same set as Oniguruma's Unicode \s
		return clsSpace
	}
	return clsOther // includes invalid UTF-8 (RuneError)
}

var asciiClass = func() (c [utf8.RuneSelf]int) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
			c[r] = clsLetter
		case '0' <= r && r <= '9':
			c[r] = clsNumber
		case r == ' ' || '\t' <= r && r <= '\r':
			c[r] = clsSpace
		default:
			c[r] = clsOther
		}
	}
	return
}()

func decode(s string) (rune, int) {
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	return utf8.DecodeRuneInString(s)
}

// runOf returns the byte length of the prefix of s whose runes are all of class cls.
func runOf(s string, cls int) int {
	i := 0
	for i < len(s) {
		r, n := decode(s[i:])
		if classOf(r) != cls {
			break
		}
		i += n
	}
	return i
}

// splitNext returns the byte length of the first match of the GPT-2 regex
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// at the start of the non-empty s (the regex matches every position, so
// repeated calls tokenize the whole string).
func splitNext(s string) int {
	if s[0] == '\'' && len(s) > 1 {
		switch s[1] {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v', 'l':
			if len(s) > 2 && (s[1:3] == "re" || s[1:3] == "ve" || s[1:3] == "ll") {
				return 3
			}
		}
	}
	r, n := decode(s)
	cls := classOf(r)
	if r == ' ' && len(s) > 1 {
		r2, _ := decode(s[1:])
		if c2 := classOf(r2); c2 != clsSpace {
			return 1 + runOf(s[1:], c2)
		}
	}
	if cls != clsSpace {
		return n + runOf(s[n:], cls)
	}
	// Whitespace: \s+(?!\S) takes the run, minus its last character when a
	// non-space follows; a single space before a non-space falls to \s+.
	end := runOf(s, clsSpace)
	if end == len(s) {
		return end
	}
	_, lastLen := utf8.DecodeLastRuneInString(s[:end])
	if end-lastLen > 0 {
		return end - lastLen
	}
	return end
}

// splitLlama returns the byte length of the first match of Llama 3's split
// regex (Qwen2's when maxDigits is 1: it splits numbers digit by digit)
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// at the start of the non-empty s, trying the alternatives in order as the
// regex does.
func splitLlama(s string, maxDigits int) int {
	if s[0] == '\'' && len(s) > 1 {
		switch lower(s[1]) {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v', 'l':
			if len(s) > 2 {
				switch string([]byte{lower(s[1]), lower(s[2])}) {
				case "re", "ve", "ll":
					return 3
				}
			}
		}
	}
	r, n := decode(s)
	cls := classOf(r)
	switch {
	case cls == clsLetter:
		return n + runOf(s[n:], clsLetter)
	case cls != clsNumber && r != '\r' && r != '\n' && len(s) > n:
		// One character that is not a letter, digit or line break, before letters.
		if r2, n2 := decode(s[n:]); classOf(r2) == clsLetter {
			return n + n2 + runOf(s[n+n2:], clsLetter)
		}
	}
	if cls == clsNumber {
		end := n
		for d := 1; d < maxDigits && end < len(s); d++ {
			r2, n2 := decode(s[end:])
			if classOf(r2) != clsNumber {
				break
			}
			end += n2
		}
		return end
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := -1
	switch {
	case cls == clsOther:
		start = 0
	case r == ' ' && len(s) > 1:
		if r2, _ := decode(s[1:]); classOf(r2) == clsOther {
			start = 1
		}
	}
	if start >= 0 {
		end := start + runOf(s[start:], clsOther)
		for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
			end++
		}
		return end
	}
	// Whitespace. \s*[\r\n]+ takes the run up to its last line break;
	// \s+(?!\S) the run, less its last character when a non-space follows;
	// \s+ a single space before a non-space.
	end := runOf(s, clsSpace)
	if nl := strings.LastIndexAny(s[:end], "\r\n"); nl >= 0 {
		return nl + 1
	}
	if end == len(s) {
		return end
	}
	if _, lastLen := utf8.DecodeLastRuneInString(s[:end]); end-lastLen > 0 {
		return end - lastLen
	}
	return end
}

// lower folds an ASCII letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
