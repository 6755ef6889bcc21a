#!/usr/bin/python3
"""Regenerate tests/data/gpt_tiny/detector_reference.json: the head detector's induction score
on repeated random token sequences, computed by torch on the tiny GPT of tests/data/gpt_tiny.

Usage (Debian's python3 with torch 1.13 and numpy):

    /usr/bin/python3 scripts/gen_detector_reference.py [--out FILE]
    or: scripts/gen-references gen_detector_reference [--out FILE]

The probe is the training recipe's (docs/training.md §6), which TransformerLens's induction
examples also use: per sequence, [BOS,] r, r, filler with r = randint(0, V, (count, R)) and
filler = randint(0, V, (count, rest)) drawn in that order from
torch.Generator().manual_seed(seed), R = block size // 3, the sequences as long as the block
size; the score of a head is the mean, over every sequence and every query i of the second
copy whose next token is known (i = s + R .. s + 2R - 2, s = 1 with a BOS, 0 without), of the
attention a[i, i - R + 1] on the token just after the earlier occurrence.

Two cases, each with its model file, BOS and scores [layer][head]:
  nanogpt_no_bos   nanogpt_nobias.safetensors (vocabulary 1000, no BOS: a nanoGPT model
                   trained on characters or ids has none), sequences r, r, filler
  gpt2_bos         gpt2/ (GPT-2 layout with biases, GELU tanh), every sequence starting with
                   a BOS id: GPT-2's is <|endoftext|> = 50256, which this vocabulary of 1000
                   does not have, so its last id 999 stands in for it

The model is gen_gpt_reference.py's nanoGPT GPT, loaded from the committed files (F16,
converted exactly), run in float32 with torch's own kernels.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gpt_reference import CONFIG, make_gpt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "gpt_tiny")
COUNT, SEED = 32, 1234  # head_detector.h's detector_repeat_count and detector_repeat_seed
NP = {"F32": np.float32, "F16": np.float16, "BOOL": np.uint8}


def read_safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        lo, hi = t["data_offsets"]
        out[name] = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype=NP[t["dtype"]]).reshape(t["shape"])
    return out


def load(torch, GPT, path, gelu, bias, conv1d):
    model = GPT(dict(CONFIG, gelu=gelu, bias=bias))
    sd = {}
    for name, a in read_safetensors(path).items():
        if name.endswith(".attn.bias") and a.ndim == 4:
            continue  # the mask buffer
        key = name if name.startswith("transformer.") else "transformer." + name
        t = torch.from_numpy(a.astype(np.float32))
        if conv1d and any(key.endswith(s) for s in ("c_attn.weight", "c_proj.weight", "c_fc.weight")):
            t = t.t().contiguous()
        sd[key] = t
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k.endswith(".attn.bias") or k == "lm_head.weight" for k in missing), missing
    model.eval()
    return model


def induction_scores(torch, model, bos):
    V, N = CONFIG["vocab_size"], CONFIG["block_size"]
    R = N // 3
    s = 1 if bos is not None else 0
    rest = N - s - 2 * R
    g = torch.Generator().manual_seed(SEED)
    r = torch.randint(0, V, (COUNT, R), generator=g)
    filler = torch.randint(0, V, (COUNT, rest), generator=g)
    parts = ([torch.full((COUNT, 1), bos, dtype=torch.long)] if bos is not None else []) + [r, r, filler]
    seqs = torch.cat(parts, dim=1)
    stripes = [[] for _ in range(CONFIG["n_layer"])]
    with torch.no_grad():
        for b in range(COUNT):
            _, layers = model(seqs[b:b + 1])
            for l, rec in enumerate(layers):
                a = rec["softmax_probs"]  # (H, N, N)
                q = torch.arange(s + R, s + 2 * R - 1)
                stripes[l].append(a[:, q, q - R + 1].double())  # (H, queries)
    scores = [torch.cat(st, dim=1).mean(dim=1).tolist() for st in stripes]
    return dict(bos=bos, repeat=R, length=N, count=COUNT, seed=SEED,
                first_sequence=seqs[0].tolist(), induction=scores)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(DATA, "detector_reference.json"))
    args = ap.parse_args()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(1)
    GPT = make_gpt(torch, nn, F)
    nano = load(torch, GPT, os.path.join(DATA, "nanogpt_nobias.safetensors"), "erf", False, False)
    gpt2 = load(torch, GPT, os.path.join(DATA, "gpt2", "model.safetensors"), "tanh", True, True)
    # The loaded models give the committed forward fixtures' logits: the loading is right.
    for model, fwd in ((nano, "nanogpt_nobias_forward.safetensors"), (gpt2, "gpt2_forward.safetensors")):
        b = open(os.path.join(DATA, fwd), "rb").read()
        tokens = [int(t) for t in json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])["__metadata__"]["tokens"].split(",")]
        with torch.no_grad():
            logits, _ = model(torch.tensor([tokens]))
        want = torch.from_numpy(read_safetensors(os.path.join(DATA, fwd))["logits"].copy())
        assert (logits - want).abs().max().item() < 1e-4, fwd
    out = {
        "description": "scripts/gen_detector_reference.py: induction scores [layer][head] on repeated random "
                       "sequences ([BOS,] r, r, filler), torch.Generator().manual_seed(seed)",
        "nanogpt_no_bos": dict(file="nanogpt_nobias.safetensors", **induction_scores(torch, nano, None)),
        "gpt2_bos": dict(file="gpt2", **induction_scores(torch, gpt2, CONFIG["vocab_size"] - 1)),
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for k in ("nanogpt_no_bos", "gpt2_bos"):
        print(k, [[round(v, 4) for v in layer] for layer in out[k]["induction"]])
    print("wrote", args.out)


if __name__ == "__main__":
    main()
