"""Builds small byte-level BPE tokenizers in the Llama 3 and Qwen2 styles with
Hugging Face tokenizers, and reference encodings for the tokenizer package's tests.

  python gen_bpe_cases.py   (needs: pip install tokenizers==0.23.3)
"""
import json, random
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, normalizers, processors, trainers, Regex

LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

CASES = [
    "", "Hello world", "Hello, world! It's 2024.", "I'LL BE THERE, WE'RE 'S 'T", "don't won't they've", "it'sok we'llbe I'Dk THEY'VEx 'Mm",
    "numbers 1 12 123 1234 12345 1234567", " 123abc", "x  ", "a  b", "a\n\nb", "a \n b", "line\r\nnext\r\n\r\n",
    "\tindented\n\t\tmore", "  leading spaces", "trailing spaces   ", "   ", "\n", "\n\n\n", " \n \n ",
    "!!! ??? ...\n", "(a+b)*c = d;\n", "def f(x):\n    return x**2\n", "emoji 🙂🙃 and 👍🏽", "日本語のテキスト", "中文 文本，标点。",
    "café naïve résumé", "cafe\u0301 nai\u0308ve", "Ångström \u212b", "١٢٣٤ ٥٦ Ⅻ ½", "Straße ΑΒΓ αβγ Привет",
    "a'b'c 'hello' \"quoted\"", "tab\there", "mixed\u3000ideographic\u3000space", "<|begin_of_text|>not special here",
    "email@example.com https://x.y/z?q=1&r=2", "$100.00 -5 +3 1e10", "over-the-top co-operate", "x" * 300,
]

def corpus(rng):
    words = "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split()
    out = []
    for _ in range(3000):
        n = rng.randint(3, 15)
        s = " ".join(rng.choice(words) for _ in range(n))
        if rng.random() < 0.3: s = s.capitalize() + rng.choice([".", "!", "?", ",", ";\n", "\n\n"])
        if rng.random() < 0.4: s += " " + rng.choice(["12345", "2024", "1000000", "99", str(rng.randint(0, 99999))])
        if rng.random() < 0.1: s += " don't it's we'll"
        out.append(s)
    return out + CASES * 5

def random_cases(rng, n):
    pool = list("aAbZ zé\u0301ñ'’-_.,!?;:()[]{}\"/\\\t\n\r0123456789٣Ⅻ日本🙂 \u3000\u00a0") + ["'s", "'LL", "\r\n", "  ", "123", "'re"]
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 24))) for _ in range(n)]

def build(pattern, nfc, template):
    tok = Tokenizer(models.BPE())
    if nfc:
        tok.normalizer = normalizers.NFC()
    # Trained with GPT-2's split, which keeps long numbers and spaces before
    # digits together, so that the vocabulary has merges that the Llama 3
    # and Qwen2 splits must keep apart: a wrong split then gives other ids.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=900, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|begin_of_text|>", "<|end_of_text|>"], show_progress=False)
    tok.train_from_iterator(corpus(random.Random(1)), trainer)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    if template:
        tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", 0)])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok

for name, pattern, nfc, template in [("llama3", LLAMA3, False, True), ("qwen2", QWEN2, True, False)]:
    tok = build(pattern, nfc, template)
    tok.save(f"{name}_tokenizer.json", pretty=False)
    cases = CASES + random_cases(random.Random(7), 300)
    out = [{"text": c, "ids": tok.encode(c, add_special_tokens=False).ids} for c in cases]
    with open(f"{name}_cases.json", "w") as f:
        json.dump(out, f, ensure_ascii=False)
    print(name, len(out), "cases", tok.get_vocab_size(), "tokens")
