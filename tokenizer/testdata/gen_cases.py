#!/usr/bin/env python3
"""Regenerate gpt2_cases.json: ground-truth GPT-2 token ids from the reference
Hugging Face `tokenizers` implementation (test harness only; the Go package
does not need Python).

    python3 -m venv /tmp/tkvenv && /tmp/tkvenv/bin/pip install tokenizers
    cd tokenizer/testdata
    /tmp/tkvenv/bin/python gen_cases.py [path/to/tokenizer.json]

The default tokenizer path is shared/data/tokenizers/gpt2/tokenizer.json beside
the repository root (../../../shared/...). Fixture made with tokenizers 0.23.3.
"""
import json
import os
import sys

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "shared", "data",
                       "tokenizers", "gpt2", "tokenizer.json")

LONG = (
    "Large language model serving systems are usually judged by two numbers: "
    "how long the first token takes to arrive (TTFT) and how quickly the "
    "following tokens stream out (TPOT). Both depend on batch size, prompt "
    "length, the KV-cache hit rate and the scheduler's admission policy. In "
    "2024, a typical 8B-parameter model on one H100 served ~2,500 tokens/s at "
    "batch 64; at batch 1 it managed roughly 120 tokens/s.\n\n"
    "Benchmarks that ignore queueing delay (the time a request waits before "
    "prefill starts) under-report tail latency by 30-50% under load. That's "
    "why inferprobe records p50, p90, p99 and p99.9 - not just the mean!  "
    "    Trailing whitespace, \ttabs\t, and weird   spacing are all kept.\n"
)

CASES = [
    "",
    " ",
    "  ",
    "\n",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure you've heard they'll say it's what we'd do, and we're right.",
    "DON'T SHOUT'S 'S 'tis rock'n'roll ''' 'x '",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "func main() {\n\tfmt.Println(\"hi\")\n\t\tx := []int{1, 2, 3}\n}\n",
    "a  b   c    d\n\n\ne\n \n  f\t\t g",
    "trailing spaces   ",
    "trailing newlines\n\n\n",
    "   leading spaces",
    "\n\n\nleading newlines",
    "numbers: 0 7 42 1234567890 3.14159 -12 1,000,000 2024-11-29 12:30:45",
    "punctuation!!! ??? ... --- *** ((([[[{{{}}}]]]))) @#$%^&*_+=~`|\\/<>",
    "Ça a été très élégant, naïve façade, Straße, Øresund, Ångström, señor",
    "Emoji: 😀👍🏽🚀 ❤️ 👨‍👩‍👧 🇫🇷 flags",
    "中文文本测试，日本語のテキスト、한국어 텍스트。",
    "Mixed 中文 and English, 数字123 and emoji 🎉.",
    "Ελληνικά και Русский текст, עברית, العربية",
    "non-breaking\u00a0space, ideographic\u3000space, thin\u2009space, nel\u0085x",
    "tabs\tand\rcarriage\r\nreturns\x0bvt\x0cff",
    "combining: e\u0301 a\u0308 n\u0303",
    "URL: https://example.com/path?q=1&r=two#frag user@example.org",
    "JSON: {\"key\": [1, 2.5, null, true], \"nested\": {\"a\": \"b\"}}",
    "<|endoftext|>",
    "before<|endoftext|>after <|endoftext|> spaced",
    "x" * 300,
    "ab" * 1000 + " " + "\U0001F600" * 200,
    " " * 50 + "word",
    LONG,
    LONG * 4,
]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    tok = Tokenizer.from_file(path)
    out = [{"text": t, "ids": tok.encode(t).ids} for t in CASES]
    with open(os.path.join(HERE, "gpt2_cases.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out)} cases from {path}")


if __name__ == "__main__":
    main()
