#!/usr/bin/python3
"""Regenerates tests/data/text_examples.json: words as input, computed by PyTorch.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/gen_text_reference.py > tests/data/text_examples.json
or: scripts/gen-references gen_text_reference

For each case: torch.manual_seed(seed); attn = SelfAttention(C, H); E = torch.randn(V, C) for
the V distinct words in order of first appearance; x = E[ids]; the perturbation row is the
next torch.randn(C). Floats are written with 9 significant digits (float32 round-trips).
"""
import json
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)


def case(seed, C, H, text):
    words = text.split()
    vocab = list(dict.fromkeys(words))
    ids = [vocab.index(w) for w in words]
    torch.manual_seed(seed)
    SelfAttention(C, H)
    E = torch.randn(len(vocab), C)
    x = E[ids]
    row = torch.randn(C)
    return {"seed": seed, "n_embd": C, "n_head": H, "text": text, "tokens": words,
            "x": ["%.9g" % v for v in x.flatten().tolist()],
            "perturbed_row": ["%.9g" % v for v in row.tolist()]}


cases = [case(0, 8, 2, "the cat saw the cat"),
         case(7, 16, 4, "a b a c a b d e f g h"),    # V*C >= 16: vectorised path
         case(3, 4, 1, "one"),                       # V*C < 16: scalar path with the cache
         case(1, 6, 3, "x y  z\tx\ny")]
print(json.dumps({"note": "x and perturbed_row as float32 printed with %.9g; see scripts/gen_text_reference.py",
                  "cases": cases}, indent=1))
