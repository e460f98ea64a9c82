package tokenizer

import (
	"slices"
	"testing"
)

func TestSplitNext(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"it's", []string{"it", "'s"}},
		{"we're'll", []string{"we", "'re", "'ll"}},
		{"'S", []string{"'", "S"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"a \n b", []string{"a", " \n", " b"}},
		{"x  ", []string{"x", "  "}},
		{"\tx", []string{"\t", "x"}},
		{" 123abc", []string{" 123", "abc"}},
		{" !!x", []string{" !!", "x"}},
		{"\u3000\u3000x", []string{"\u3000", "\u3000", "x"}},
	}
	for _, c := range cases {
		var got []string
		for s := c.in; len(s) > 0; {
			n := splitNext(s)
			got = append(got, s[:n])
			s = s[n:]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitLlama(t *testing.T) {
	cases := []struct {
		in        string
		maxDigits int
		want      []string
	}{
		{"I'LL go", 3, []string{"I", "'LL", " go"}},
		{" 12345", 3, []string{" ", "123", "45"}},
		{" 12345", 1, []string{" ", "1", "2", "3", "4", "5"}},
		{"\tx!!\n\ny", 3, []string{"\tx", "!!\n\n", "y"}},
		{"a \n \n  b", 3, []string{"a", " \n \n", " ", " b"}},
		{"(x) =  y  ", 3, []string{"(x", ")", " =", " ", " y", "  "}},
	}
	for _, c := range cases {
		var got []string
		for s := c.in; len(s) > 0; {
			n := splitLlama(s, c.maxDigits)
			got = append(got, s[:n])
			s = s[n:]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q, %d) = %q, want %q", c.in, c.maxDigits, got, c.want)
		}
	}
}
