"""Writes the random-weight model that the real-engine end-to-end tests serve.

A llama-architecture GGUF with GPT-2's vocabulary (shared/data/models/ggml-vocab-gpt-2.gguf,
the same vocabulary as shared/data/tokenizers/gpt2/tokenizer.json): the server's tokenizer,
prefill and decode compute and streaming are real, the text is noise. It is tiny, so that a
token costs about a millisecond on one core.

Like a real model it ends its answers by itself: one residual dimension is held constant
through every layer, and the output row of the end-of-sequence token reads only that
dimension, so that end-of-sequence is sampled at every step with about the same probability,
whatever the prompt (EOS_LOGIT sets it). Without that a random model next to never stops, and
a server that ignores min_tokens or ignore_eos would look as if it honoured them.

Usage: make_model.py OUT.gguf (the same seed writes the same file).
"""

import os
import re
import sys

import gguf
import numpy as np

SEED = 2026
LAYERS = 2
EMBED = 64
HEADS = 4
FFN = 128
CONTEXT = 4096
EMBED_STD = 0.02
# The end-of-sequence logit before the sampler's temperature. The other tokens' logits have a
# small spread (OUTPUT_STD), so that end-of-sequence always sits among the 40 tokens that
# llama.cpp's default sampling (temperature 0.8, top_k 40; both servers) draws from, and its
# probability there varies little: this ends a reply after about 30 tokens on average.
EOS_LOGIT = 1.3
OUTPUT_STD = 0.3
NEVER_LOGIT = -30.0
VOCAB_FILE = os.path.join("shared", "data", "models", "ggml-vocab-gpt-2.gguf")


def find_vocab():
    """The vocabulary beside the repository (CI) or above it (a worktree), as the Go tests
    find shared/data."""
    here = os.path.dirname(os.path.abspath(__file__))
    d = here
    while True:
        p = os.path.join(d, VOCAB_FILE)
        if os.path.exists(p):
            return p
        parent = os.path.dirname(d)
        if parent == d:
            sys.exit(f"make_model.py: {VOCAB_FILE} not found in any parent of {here}")
        d = parent


def field(reader, name):
    f = reader.fields.get(name)
    if f is None:
        sys.exit(f"make_model.py: the vocabulary has no {name}")
    return f.contents()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    vocab = gguf.GGUFReader(find_vocab())
    tokens = field(vocab, "tokenizer.ggml.tokens")
    n_vocab = len(tokens)
    eos = field(vocab, "tokenizer.ggml.eos_token_id")
    rng = np.random.default_rng(SEED)

    def normal(*shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    tmp = out + ".tmp"
    w = gguf.GGUFWriter(tmp, "llama")
    w.add_name("inferprobe-realengine-random")
    w.add_block_count(LAYERS)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(EMBED)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(HEADS)
    w.add_rope_dimension_count(EMBED // HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model(field(vocab, "tokenizer.ggml.model"))
    w.add_tokenizer_pre(field(vocab, "tokenizer.ggml.pre"))
    w.add_token_list(tokens)
    w.add_token_types(field(vocab, "tokenizer.ggml.token_type"))
    w.add_token_merges(field(vocab, "tokenizer.ggml.merges"))
    w.add_bos_token_id(field(vocab, "tokenizer.ggml.bos_token_id"))
    w.add_eos_token_id(eos)
    # GPT-2 adds no BOS: the server's prompt count is then the tokenizer's.
    w.add_add_bos_token(False)

    # Dimension 0 carries a constant 1 from the embedding to the output: no layer reads it
    # (column 0 of every input projection is zero) or writes it (row 0 of every output
    # projection), and the layers write little elsewhere, so after the final RMS norm it is
    # about sqrt(EMBED) while the other dimensions stay near EMBED_STD * sqrt(EMBED).
    def reads(rows, cols):
        m = normal(rows, cols, std=0.2)
        m[:, 0] = 0
        return m

    def writes(rows, cols):
        m = normal(rows, cols, std=0.005)
        m[0, :] = 0
        return m

    embd = normal(n_vocab, EMBED, std=EMBED_STD)
    embd[:, 0] = 1.0
    w.add_tensor("token_embd.weight", embd)
    for i in range(LAYERS):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(EMBED, np.float32))
        w.add_tensor(f"blk.{i}.attn_q.weight", reads(EMBED, EMBED))
        w.add_tensor(f"blk.{i}.attn_k.weight", reads(EMBED, EMBED))
        w.add_tensor(f"blk.{i}.attn_v.weight", reads(EMBED, EMBED))
        w.add_tensor(f"blk.{i}.attn_output.weight", writes(EMBED, EMBED))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(EMBED, np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", reads(FFN, EMBED))
        w.add_tensor(f"blk.{i}.ffn_up.weight", reads(FFN, EMBED))
        w.add_tensor(f"blk.{i}.ffn_down.weight", writes(EMBED, FFN))
    w.add_tensor("output_norm.weight", np.ones(EMBED, np.float32))
    # The other tokens read the other dimensions, giving logits of about OUTPUT_STD; the
    # end-of-sequence token reads only dimension 0.
    rest = EMBED_STD * np.sqrt(EMBED) * np.sqrt(EMBED - 1)
    output = normal(n_vocab, EMBED, std=OUTPUT_STD / rest)
    output[:, 0] = 0
    # Only whole words with a leading space are ever generated (a third of the vocabulary),
    # as a real model mostly writes: a reply's text then tokenizes back into the tokens the
    # server generated, so that counting it with the tokenizer, or by its chunks, is exact.
    # Random picks from the whole vocabulary would glue word pieces and split UTF-8
    # characters, which a real tokenizer then counts differently.
    never = [i for i, t in enumerate(tokens) if not re.fullmatch("\u0120[A-Za-z]+", t)]
    output[never, :] = 0
    output[never, 0] = NEVER_LOGIT / np.sqrt(EMBED)
    output[eos, :] = 0
    output[eos, 0] = EOS_LOGIT / np.sqrt(EMBED)
    w.add_tensor("output.weight", output)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
