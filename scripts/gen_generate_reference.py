#!/usr/bin/python3
"""Regenerate tests/data/generate/reference.json: greedy generation by torch, for the KV cache's
tests (tests/core/test_kv_cache.cpp).

Usage (Debian's python3 with torch 1.13 and numpy):

    /usr/bin/python3 scripts/gen_generate_reference.py [--out FILE]
    or: scripts/gen-references gen_generate_reference [--out FILE]

Generation is nanoGPT's generate loop (model.py) with the argmax instead of the multinomial:
at every step the whole sequence (cropped to the block size, which the prompts here never
reach) goes through the model's full forward, no cache; the next token is the argmax of the
last position's logits (torch.argmax: the first of a tie). It runs until the sequence holds
the model's block size of positions, so the sequence crosses 8 positions (where torch's
softmax starts summing a row in 8 lanes) and ends at the block size.

Three models:
  gpt2            tests/data/gpt_tiny/gpt2/ (Hugging Face GPT-2 layout, biases, GELU tanh)
  nanogpt_nobias  tests/data/gpt_tiny/nanogpt_nobias.safetensors (nanoGPT layout, no biases,
                  nn.GELU()'s erf)
  toy_induction   tests/data/generate/induction_c32_s3.safetensors, written by
                    attnviz train --task induction --seed 3 --n-embd 32 --seq-len 16 --steps 600
                  the training recipe's ToyModel (docs/training.md): h = wte[tok] + wpe,
                  h = h + attn(h) per block, logits = lm_head(h); tokens start with BOS = V
The GPT models are gen_gpt_reference.py's nanoGPT GPT, loaded as gen_detector_reference.py
loads them.

Per model: the prompt's tokens, the generated tokens, and per step the five largest raw logits
of the last position (torch.topk) as [token, value], and the gap between the two largest (a
small gap would make the argmax fragile). Also `uniform_doubles`: the first draws of
torch.rand((), dtype=torch.float64) after torch.Generator().manual_seed(seed), the uniform
number a sampled step draws (sampling.h).

Like gen_reference.py the script re-executes itself with the reference BLAS, one thread and
AVX2, so that the numbers do not depend on the machine's BLAS.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_reference import check_blas, pin_environment  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT_DATA = os.path.join(ROOT, "tests", "data", "gpt_tiny")
OUT_DIR = os.path.join(ROOT, "tests", "data", "generate")
TOY_FILE = "induction_c32_s3.safetensors"
TOP = 5


def make_toy(torch, nn, F):
    class SelfAttention(nn.Module):  # the training recipe's (the lesson's module), unchanged
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.n_head, self.head_dim = n_head, n_embd // n_head
            self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.proj = nn.Linear(n_embd, n_embd, bias=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
            att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class ToyInduction(nn.Module):
        """The recipe's ToyModel for the induction task, its forward through lm_head."""

        def __init__(self, V, T, C, H, L):
            super().__init__()
            self.wte = nn.Embedding(V + 1, C)
            self.wpe = nn.Embedding(T + 1, C)
            self.h = nn.ModuleList([SelfAttention(C, H) for _ in range(L)])
            self.lm_head = nn.Linear(C, V, bias=False)

        def forward(self, tok):
            x = self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))
            for block in self.h:
                x = x + block(x)
            return self.lm_head(x), None

    return ToyInduction


def load_toy(torch, ToyInduction, path):
    from gen_detector_reference import read_safetensors
    t = read_safetensors(path)
    V, C = t["lm_head.weight"].shape
    T = t["transformer.wpe.weight"].shape[0] - 1
    L = sum(1 for k in t if k.endswith(".attn.c_attn.weight"))
    H = 2  # the file's __metadata__ n_head; read_safetensors drops the metadata
    model = ToyInduction(V, T, C, H, L)
    sd = {"wte.weight": t["transformer.wte.weight"], "wpe.weight": t["transformer.wpe.weight"],
          "lm_head.weight": t["lm_head.weight"]}
    for l in range(L):
        sd["h.%d.qkv.weight" % l] = t["transformer.h.%d.attn.c_attn.weight" % l]
        sd["h.%d.proj.weight" % l] = t["transformer.h.%d.attn.c_proj.weight" % l]
    model.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in sd.items()})
    model.eval()
    return model, V, T + 1


def file_n_head(path):
    import struct
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return int(json.loads(b[8:8 + n])["__metadata__"]["n_head"])


def generate(torch, model, prompt, block_size, last_logits):
    """nanoGPT's generate with the argmax: the full forward every step, no cache."""
    idx = torch.tensor([prompt])
    steps = []
    with torch.no_grad():
        while idx.size(1) < block_size:
            idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
            logits = last_logits(model(idx_cond))
            values, ids = torch.topk(logits, TOP)
            idx_next = torch.argmax(logits).view(1, 1)
            steps.append({"top5": [[int(i), float(v)] for i, v in zip(ids, values)],
                          "gap": float(values[0] - values[1])})
            idx = torch.cat((idx, idx_next), dim=1)
    return {"prompt": prompt, "tokens": idx[0, len(prompt):].tolist(), "steps": steps}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(OUT_DIR, "reference.json"))
    args = ap.parse_args()
    pin_environment()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from gen_detector_reference import load
    from gen_gpt_reference import CONFIG, make_gpt

    torch.set_num_threads(1)
    check_blas(torch)
    GPT = make_gpt(torch, nn, F)
    nano = load(torch, GPT, os.path.join(GPT_DATA, "nanogpt_nobias.safetensors"), "erf", False, False)
    gpt2 = load(torch, GPT, os.path.join(GPT_DATA, "gpt2", "model.safetensors"), "tanh", True, True)
    toy_path = os.path.join(OUT_DIR, TOY_FILE)
    assert file_n_head(toy_path) == 2, "load_toy assumes the toy file's 2 heads"
    toy, V, toy_block = load_toy(torch, make_toy(torch, nn, F), toy_path)

    def gpt_last(out):  # GPT.forward returns (logits (T, V), layers)
        return out[0][-1]

    def toy_last(out):  # (logits (1, T, V), None)
        return out[0][0, -1]

    g = torch.Generator().manual_seed(30)
    prompt = torch.randint(0, CONFIG["vocab_size"], (5,), generator=g).tolist()
    models = {
        "gpt2": dict(path="gpt_tiny/gpt2", **generate(torch, gpt2, prompt, CONFIG["block_size"], gpt_last)),
        "nanogpt_nobias": dict(path="gpt_tiny/nanogpt_nobias.safetensors",
                               **generate(torch, nano, prompt, CONFIG["block_size"], gpt_last)),
    }
    # BOS, a segment of 4, the first token of its repeat: an induction model goes on repeating
    segment = torch.randint(0, V, (4,), generator=g).tolist()
    models["toy_induction"] = dict(path="generate/" + TOY_FILE,
                                   **generate(torch, toy, [V] + segment + segment[:1], toy_block, toy_last))
    uniform = {}
    for seed in (0, 7, 123456789):
        gen = torch.Generator().manual_seed(seed)
        uniform[str(seed)] = [float(torch.rand((), dtype=torch.float64, generator=gen)) for _ in range(4)]
    for name, m in models.items():
        print("%s: %d steps, smallest gap between the two largest logits %.3g" %
              (name, len(m["steps"]), min(s["gap"] for s in m["steps"])), file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump({"top": TOP, "models": models, "uniform_doubles": uniform}, f, indent=1)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
