#!/usr/bin/python3
"""Write tests/data/cases_large.json: PyTorch's forward at sizes the public cases do not
reach (T past two full groups of the softmax's 8 lanes, head_dim of 16 and more, C up to
256, T up to 300), with biases on qkv and proj in some cases, and the no-mask and
off-by-one masks in one case each.

Usage (Debian's python3, which has torch 1.13):

    /usr/bin/python3 scripts/gen_reference_large.py --out /tmp/ref
    /usr/bin/python3 scripts/gen_reference_large.py --out /tmp/ref --compare tests/data
    or: scripts/gen-references gen_reference_large   (--out tests/data)

--out and --compare work as in gen_reference.py, whose pinned environment (reference BLAS,
one thread, AVX2) and checks this script reuses.

To keep the file small, a case stores y1 and the per-position differences in full, y2's
rows from y2_from_row on (p under the causal mask, whose rows before p are y1's), a few rows of the softmax, and for the other intermediates of the shape walk for x a hash:
FNV-1a 64 over the float32 bits in torch's memory order, with -0 counted as +0 (the JSON
numbers cannot tell them apart either) and every NaN as 0x7fc00000.

The recipe is the lesson's, with the case's mask, plus the biases when the case has them:
manual_seed(seed); attn = SelfAttention(C, H); x = torch.randn(1, T, C);
row = torch.randn(C); b_qkv = torch.randn(3C); b_proj = torch.randn(C); qkv and proj
become nn.Linear(bias=True) layers with the same weights and those biases; y1 = attn(x);
x2 = x.clone(); x2[0, p] = row; y2 = attn(x2). The biases are drawn after the row, so x,
the row and the weights are the bias-free recipe's.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_reference as ref  # noqa: E402  (the pinning, the module, the JSON writer)

FILE = "cases_large.json"

# (name, seed, C, H, T, p, mask, bias). mask: "causal", "none" or "off_by_one".
LARGE_CASES = [
    ("large_1", 7, 32, 2, 40, 17, "none", False),        # 5 full lane groups; head_dim 16
    ("large_2", 2024, 64, 8, 17, 0, "causal", True),     # 2 groups + 1; biases; p = 0
    ("large_3", 99, 48, 4, 100, 63, "causal", True),     # 12 groups + 4; head_dim 12; biases
    ("large_4", 5, 64, 2, 30, 29, "off_by_one", False),  # NaN row 0; head_dim 32; p = T - 1
    ("large_5", 31337, 256, 4, 33, 12, "causal", True),  # C = 256, head_dim 64; biases
    ("large_6", 1, 40, 2, 300, 150, "causal", False),    # T = 300: 37 groups + 4; head_dim 20
]

MASK_ARGS = {"causal": {}, "none": {"masked": False}, "off_by_one": {"diagonal": -1}}

NOTE = ref.NOTE.split(" Recipe:")[0] + (
    " Recipe: manual_seed(seed); attn = SelfAttention(C, H); x = torch.randn(1, T, C); row = torch.randn(C); "
    "with bias: b_qkv = torch.randn(3C), b_proj = torch.randn(C), and attn.qkv, attn.proj become "
    "nn.Linear(bias=True) with the same weights and these biases; y1 = attn(x) under the case's mask; "
    "x2 = x.clone(); x2[0, p] = row; y2 = attn(x2). Weights are seeded, not stored (the bias-free recipe's). "
    "hashes: FNV-1a 64 over the float32 bits in torch's memory order, -0 as +0 and NaN as 0x7fc00000. "
    "softmax_rows_for_x: rows [head, query] of softmax_probs for x. y2_rows: rows y2_from_row .. T-1 of y2; "
    "the rows before it (only under the causal mask: rows before p) are those of y1, bit for bit. "
    "max_abs_diff_per_position[t] = max_c |y1[0,t,c] - y2[0,t,c]| in float32."
)


def fnv1a(np, t):
    """FNV-1a 64 over the float32 bits, -0 as +0 and every NaN as one NaN."""
    a = t.detach().contiguous().numpy().astype(np.float32).ravel()
    a = np.where(np.isnan(a), np.float32("nan"), a + np.float32(0))  # x + 0 turns -0 into +0
    h = 0xcbf29ce484222325
    for b in a.view(np.uint32).tolist():
        if (b & 0x7fffffff) > 0x7f800000:
            b = 0x7fc00000
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "0x%016x" % h


def same_bits(torch, a, b):
    """torch.equal on the float32 bits, so that a NaN equals the same NaN (off-by-one row 0)."""
    return torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


def softmax_rows(T, H):
    """A few [head, query] rows: the first, the last, and rows at the lane-group edges."""
    rows = [[0, 0], [H - 1, min(T - 1, 7)], [0, min(T - 1, 16)], [H - 1, T - 1]]
    return [r for i, r in enumerate(rows) if r not in rows[:i]]


def make_large_case(torch, nn, F, np, name, seed, C, H, T, p, mask, bias):
    SelfAttention = ref.make_module_class(torch, nn, F)
    torch.manual_seed(seed)
    attn = SelfAttention(C, H)
    x = torch.randn(1, T, C)
    row = torch.randn(C)
    biases = {}
    if bias:
        b_qkv, b_proj = torch.randn(3 * C), torch.randn(C)
        with torch.no_grad():
            for layer, b in (("qkv", b_qkv), ("proj", b_proj)):
                old = getattr(attn, layer)
                new = nn.Linear(old.in_features, old.out_features, bias=True)
                new.weight.copy_(old.weight)
                new.bias.copy_(b)
                setattr(attn, layer, new)
        biases = {"qkv_bias": ref.nested(b_qkv), "proj_bias": ref.nested(b_proj)}
    x2 = x.clone()
    x2[0, p] = row

    kwargs = MASK_ARGS[mask]
    with torch.no_grad():
        w1 = attn.walk(x, **kwargs)
        w2 = attn.walk(x2, **kwargs)
        y1 = attn(x, **kwargs)
        assert same_bits(torch, w1["y"], y1), name
        if mask == "causal" and not bias:
            # walk() must be the lesson's module exactly.
            lesson = ref.lesson_module_class(torch, nn, F)(C, H)
            lesson.load_state_dict(attn.state_dict())
            assert torch.equal(lesson(x), y1) and torch.equal(lesson(x2), w2["y"]), name
        if mask == "causal":
            # Causality, in torch's own bits: rows before p do not move.
            assert same_bits(torch, w1["y"][0, :p], w2["y"][0, :p]), name

    # Under the causal mask y2's rows before p are y1's bits (asserted above), so only rows
    # p .. T-1 are stored; under the other masks every row.
    first = p if mask == "causal" else 0
    probs = w1["softmax_probs"]
    hashes = {n: fnv1a(np, w1[n]) for n in ["qkv", "raw_scores", "softmax_probs", "head_outputs",
                                            "y_concat_before_proj"]}
    hashes["x"] = fnv1a(np, x)
    hashes["perturbed_row"] = fnv1a(np, row)
    python = ("torch.manual_seed(%d); attn = SelfAttention(%d, %d); x = torch.randn(1, %d, %d); "
              "row = torch.randn(%d)" % (seed, C, H, T, C, C))
    if bias:
        python += "; b_qkv = torch.randn(%d); b_proj = torch.randn(%d)" % (3 * C, C)
    python += "; mask %s; y1 = attn(x); x2 = x.clone(); x2[0, %d] = row; y2 = attn(x2)" % (mask, p)
    hd = C // H
    return dict([
        ("name", name),
        ("python", python),
        ("seed", seed), ("n_embd", C), ("n_head", H), ("T", T), ("perturbed_position", p),
        ("mask", mask), ("bias", bias), ("head_dim", hd),
        ("scale_float32", ref.f32(np.float32(hd ** -0.5))),
    ] + list(biases.items()) + [
        ("hashes_for_x", hashes),
        ("softmax_rows_for_x", [{"head": h, "query": i, "values": ref.nested(probs[0, h, i])}
                                for h, i in softmax_rows(T, H)]),
        ("y1", ref.nested(w1["y"])),
        ("y2_from_row", first),
        ("y2_rows", ref.nested(w2["y"][0, first:])),
        ("max_abs_diff_per_position", ref.nested((w1["y"][0] - w2["y"][0]).abs().max(dim=-1).values)),
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for " + FILE)
    parser.add_argument("--compare", help="directory holding the file to compare with")
    args = parser.parse_args()

    ref.pin_environment()
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(1)
    ref.check_blas(torch)

    content = {"note": NOTE, "cases": [make_large_case(torch, nn, F, np, *c) for c in LARGE_CASES]}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, FILE)
    with open(path, "w") as f:
        f.write(ref.dump(content) + "\n")
    print("wrote", path, "(%d bytes)" % os.path.getsize(path))

    if args.compare:
        problems = []
        with open(path) as f:
            new = json.load(f)
        with open(os.path.join(args.compare, FILE)) as f:
            old = json.load(f)
        ref.compare(new, old, FILE, np, problems)
        for p in problems[:20]:
            print("differs:", p)
        if problems:
            print("%d differences against %s" % (len(problems), args.compare))
            sys.exit(1)
        print("every number equals", os.path.join(args.compare, FILE))


if __name__ == "__main__":
    main()
