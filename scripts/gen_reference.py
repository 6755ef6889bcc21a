#!/usr/bin/python3
"""Regenerate the PyTorch reference files tests/data/lesson_example.json and
tests/data/cases_public.json from torch itself.

Usage (Debian's python3, which has torch 1.13; a python3 earlier on PATH may not):

    /usr/bin/python3 scripts/gen_reference.py --out /tmp/ref
    /usr/bin/python3 scripts/gen_reference.py --out /tmp/ref --compare tests/data
    or: scripts/gen-references gen_reference   (--out tests/data)

--out DIR      where to write lesson_example.json and cases_public.json (created if missing).
               Write into a scratch directory and compare; copy over tests/data only
               when the numbers are identical or a change is intended.
--compare DIR  afterwards, compare every number of the new files with the files of the
               same name in DIR (bit for bit on float32; null only against null) and
               exit with status 1 on any difference.

The numbers depend on the BLAS torch calls, so the script pins the environment the
committed files were made in and re-executes itself with it when it is not already set:
LD_LIBRARY_PATH starting with the Netlib reference BLAS directory
(/usr/lib/x86_64-linux-gnu/blas/, Debian's libblas3; OpenBLAS sums in a different order
and changes the last bit), one thread (OMP_NUM_THREADS=1, torch.set_num_threads(1)) and
CPU capability AVX2 (ATEN_CPU_CAPABILITY=avx2). After importing torch it checks that the
reference BLAS is the one loaded and stops otherwise.

The recipe is the lesson's: manual_seed(seed); attn = SelfAttention(C, H);
x = torch.randn(1, T, C); y1 = attn(x); x2 = x.clone(); x2[0, p] = torch.randn(C);
y2 = attn(x2). Every intermediate of the shape walk is recorded for x, and y1, y2 and the
per-position differences also for two wrong masks (none, and tril(diagonal=-1)).
"""

import argparse
import json
import math
import os
import sys

NETLIB_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas"
PINNED_ENV = {"OMP_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "avx2"}

# (name, seed, C, H, T, p): the lesson's example and the public cases.
LESSON = ("lesson_example", 0, 8, 2, 4, 2)
PUBLIC_CASES = [
    ("public_1", 42, 12, 3, 5, 3),    # x takes the vectorised path with a tail block
    ("public_2", 1234, 16, 4, 12, 7),  # T >= 8: the softmax's lane sums; row vectorised
    ("public_3", 3, 15, 5, 1, 0),     # T = 1, both randn calls on the scalar path
]

NOTE = (
    "Generated with torch 1.13.0a0 (Debian python3-torch 1.13.1+dfsg-4, x86-64, CPU capability AVX2, "
    "1 thread, Netlib reference BLAS 3.11 pinned via LD_LIBRARY_PATH -- NOT OpenBLAS/MKL); float32 values "
    "printed with 9 significant digits (round-trip exact to float32); null = NaN or -inf (masked scores: "
    "-inf; off_by_one_mask row 0: NaN). Recipe: manual_seed(seed); attn = SelfAttention(C, H); "
    "x = torch.randn(1, T, C); y1 = attn(x); x2 = x.clone(); x2[0, p] = torch.randn(C); y2 = attn(x2). "
    "Weights are [out_features][in_features] as torch stores them (y = x W^T). "
    "max_abs_diff_per_position[t] = max_c |y1[0,t,c] - y2[0,t,c]| in float32."
)


def pin_environment():
    """Re-execute with the reference BLAS first on the library path, one thread, AVX2."""
    paths = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    pinned = paths[:1] == [NETLIB_BLAS_DIR] and all(os.environ.get(k) == v for k, v in PINNED_ENV.items())
    if pinned:
        return
    env = dict(os.environ)
    env.update(PINNED_ENV)
    env["LD_LIBRARY_PATH"] = ":".join([NETLIB_BLAS_DIR] + [p for p in paths if p != NETLIB_BLAS_DIR])
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def check_blas(torch):
    """Stop unless torch's sgemm_ is the Netlib one. (OpenBLAS may still be mapped: Debian's
    LAPACK pulls it in, but torch asks for libblas.so.3 first, so its sgemm_ is the one
    torch's matmuls bind to.)"""
    import ctypes
    torch.ones(64, 64) @ torch.ones(64, 64)  # make sure the BLAS is loaded
    torch_cpu = [p for p in loaded_libraries() if os.path.basename(p).startswith("libtorch_cpu.so")]
    if not torch_cpu:
        sys.exit("gen_reference.py: libtorch_cpu.so is not loaded; run with Debian's /usr/bin/python3")
    address = ctypes.cast(ctypes.CDLL(torch_cpu[0]).sgemm_, ctypes.c_void_p).value
    owner = library_at(address)
    if not owner.startswith(NETLIB_BLAS_DIR + "/"):
        sys.exit("gen_reference.py: torch's sgemm_ comes from %s, not the reference BLAS in %s; "
                 "install libblas3" % (owner, NETLIB_BLAS_DIR))


def loaded_libraries():
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if ".so" in line})


def library_at(address):
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            lo, hi = (int(v, 16) for v in fields[0].split("-"))
            if lo <= address < hi and len(fields) >= 6:
                return fields[5]
    return "an unknown mapping"


# ---------------------------------------------------------------------------------------
# The lesson's module, and the same forward pass keeping every intermediate.

def make_module_class(torch, nn, F):
    class SelfAttention(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            assert n_embd % n_head == 0
            self.n_head, self.head_dim = n_head, n_embd // n_head
            self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.proj = nn.Linear(n_embd, n_embd, bias=False)

        def forward(self, x, diagonal=0, masked=True):
            return self.walk(x, diagonal, masked)["y"]

        def walk(self, x, diagonal=0, masked=True):
            """The lesson's forward, op for op, returning every intermediate."""
            B, T, C = x.shape
            out = {}
            out["qkv"] = self.qkv(x)
            q, k, v = out["qkv"].split(C, dim=2)
            q, k, v = (t.view(B, T, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))
            out["q"], out["k"], out["v"] = q, k, v
            out["raw_scores"] = q @ k.transpose(-2, -1)
            out["scaled_scores"] = out["raw_scores"] * self.head_dim ** -0.5
            if masked:
                mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=diagonal)
            else:
                mask = torch.ones(T, T, dtype=torch.bool)
            out["masked_scores"] = out["scaled_scores"].masked_fill(~mask, float("-inf"))
            out["softmax_probs"] = F.softmax(out["masked_scores"], dim=-1)
            out["head_outputs"] = out["softmax_probs"] @ v
            out["y_concat_before_proj"] = out["head_outputs"].transpose(1, 2).contiguous().view(B, T, C)
            out["y"] = self.proj(out["y_concat_before_proj"])
            return out

    return SelfAttention


def lesson_module_class(torch, nn, F):
    """The lesson's code verbatim, to check that walk() is the same computation."""
    class SelfAttention(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            assert n_embd % n_head == 0
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

    return SelfAttention


# ---------------------------------------------------------------------------------------
# Generator bookkeeping: draw counts by docs/numerics.md §1.10, checked against torch's
# own MT position, and whether a cached normal is left over.

def randn_draws(n, cache_pending):
    """Draws torch.randn(n) takes, and whether a cached normal is left afterwards."""
    if n >= 16:
        return (n if n % 16 == 0 else n + 16), cache_pending
    draws = 0
    for _ in range(n):
        if cache_pending:
            cache_pending = False
        else:
            draws += 4  # two 53-bit uniforms
            cache_pending = True
    return draws, cache_pending


def randn_path(n):
    if n >= 16:
        return "vectorised (numel>=16)" + ("" if n % 16 == 0 else " with tail block")
    return "scalar double Box-Muller (numel<16)"


def torch_rng_position(torch):
    """(draws mod 624, cached normal pending) from torch.get_rng_state()."""
    state = bytes(torch.get_rng_state().tolist())
    nxt = int.from_bytes(state[16:24], "little")           # legacy_pod.next: outputs since the twist
    normal_is_valid = int.from_bytes(state[5040:5044], "little")
    return nxt % 624, bool(normal_is_valid)


# ---------------------------------------------------------------------------------------
# Output

def f32(v):
    return float(v)


def nested(t):
    """A tensor as nested lists of floats (NaN and -inf kept, written as null)."""
    return t.detach().tolist()


def make_case(torch, nn, F, np, name, seed, C, H, T, p):
    SelfAttention = make_module_class(torch, nn, F)
    hd = C // H

    torch.manual_seed(seed)
    attn = SelfAttention(C, H)
    after_qkv = 3 * C * C
    after_proj = 4 * C * C
    assert torch_rng_position(torch) == (after_proj % 624, False)
    x = torch.randn(1, T, C)
    d, pending = randn_draws(T * C, False)
    after_x = after_proj + d
    assert torch_rng_position(torch) == (after_x % 624, pending), name
    x2 = x.clone()
    x2[0, p] = torch.randn(C)
    d, pending = randn_draws(C, pending)
    after_row = after_x + d
    assert torch_rng_position(torch) == (after_row % 624, pending), name

    with torch.no_grad():
        walk = attn.walk(x)
        y1 = attn(x)
        y2 = attn(x2)
        # walk() must be the lesson's module exactly: same weights, same y.
        lesson = lesson_module_class(torch, nn, F)(C, H)
        lesson.load_state_dict(attn.state_dict())
        assert torch.equal(lesson(x), y1) and torch.equal(lesson(x2), y2), name
        assert torch.equal(walk["y"], y1), name

    def diffs(a, b):
        return nested((a[0] - b[0]).abs().max(dim=-1).values)

    variants = {}
    for key, text, kwargs in [
        ("no_mask", "all ones (no causal mask)", {"masked": False}),
        ("off_by_one_mask",
         "torch.tril(ones(T,T), diagonal=-1): row 0 fully masked -> softmax row 0 is NaN -> y row 0 NaN (null)",
         {"diagonal": -1}),
    ]:
        with torch.no_grad():
            w1 = attn.walk(x, **kwargs)
            w2 = attn.walk(x2, **kwargs)
        variants[key] = {
            "mask": text,
            "y1": nested(w1["y"]),
            "y2": nested(w2["y"]),
            "max_abs_diff_per_position": diffs(w1["y"], w2["y"]),
            "softmax_probs_for_x": nested(w1["softmax_probs"]),
            "masked_scores_for_x": nested(w1["masked_scores"]),
        }

    names = ["qkv", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "softmax_probs",
             "head_outputs", "y_concat_before_proj"]
    intermediates = {"shapes": {n: list(walk[n].shape) for n in names}}
    for n in names:
        intermediates[n] = nested(walk[n])

    a = math.sqrt(5)
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(C))
    python = ("torch.manual_seed(%d); attn = SelfAttention(%d, %d); x = torch.randn(1, %d, %d); y1 = attn(x); "
              "x2 = x.clone(); x2[0, %d] = torch.randn(%d); y2 = attn(x2)" % (seed, C, H, T, C, p, C))
    return {
        "name": name,
        "recipe": {"seed": seed, "n_embd": C, "n_head": H, "B": 1, "T": T, "perturbed_position": p,
                   "python": python},
        "seed": seed, "n_embd": C, "n_head": H, "B": 1, "T": T, "perturbed_position": p,
        "head_dim": hd,
        "scale_float32": f32(np.float32(hd ** -0.5)),
        "param_count": sum(q.numel() for q in attn.parameters()),
        "rng": {
            "kaiming_bound_float32": f32(np.float32(bound)),
            "mt_draws_cumulative": {"after_qkv_weight": after_qkv, "after_proj_weight": after_proj,
                                    "after_x": after_x, "after_perturbed_row": after_row},
            "randn_x_path": randn_path(T * C),
            "randn_row_path": randn_path(C),
            "cached_normal_pending_after_recipe": pending,
        },
        "qkv_weight": nested(attn.qkv.weight),
        "proj_weight": nested(attn.proj.weight),
        "x": nested(x),
        "perturbed_row": nested(x2[0, p]),
        "x2": nested(x2),
        "y1": nested(y1),
        "y2": nested(y2),
        "max_abs_diff_per_position": diffs(y1, y2),
        "mask_variants": variants,
        "intermediates_for_x": intermediates,
    }


def number(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if v is None or math.isnan(v) or math.isinf(v):
        return "null"
    return "%.9g" % v


def dump(value, indent=0):
    """JSON with objects and arrays of arrays broken over lines, arrays of numbers on one."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k), dump(v, indent + 1)) for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if any(isinstance(v, (list, dict)) for v in value):
            return "[\n" + ",\n".join(inner + dump(v, indent + 1) for v in value) + "\n" + pad + "]"
        return "[" + ", ".join(number(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return number(value)


# ---------------------------------------------------------------------------------------
# Comparison with the committed files

def compare(new, old, where, np, problems):
    if isinstance(old, dict) or isinstance(new, dict):
        if not (isinstance(old, dict) and isinstance(new, dict)) or set(old) != set(new):
            problems.append("%s: keys differ" % where)
            return
        for k in old:
            compare(new[k], old[k], where + "." + k, np, problems)
    elif isinstance(old, list) or isinstance(new, list):
        if not (isinstance(old, list) and isinstance(new, list)) or len(old) != len(new):
            problems.append("%s: lengths differ" % where)
            return
        for i, (a, b) in enumerate(zip(new, old)):
            compare(a, b, "%s[%d]" % (where, i), np, problems)
    elif isinstance(old, str) or isinstance(old, bool) or old is None:
        if new != old:
            problems.append("%s: %r != %r" % (where, new, old))
    else:
        a, b = np.float32(new), np.float32(old)
        if a.tobytes() != b.tobytes() and not (a == 0 and b == 0):
            problems.append("%s: %.9g != %.9g" % (where, new, old))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for the two JSON files")
    parser.add_argument("--compare", help="directory holding the files to compare with")
    args = parser.parse_args()

    pin_environment()
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(1)
    check_blas(torch)

    lesson = make_case(torch, nn, F, np, *LESSON)
    lesson = dict([("note", NOTE)] + list(lesson.items()))
    public = {"note": NOTE, "cases": [make_case(torch, nn, F, np, *c) for c in PUBLIC_CASES]}

    # The lesson prints (1, 4, 8) / 256 / 0.0 / 0.3175.
    assert lesson["param_count"] == 256
    assert max(lesson["max_abs_diff_per_position"][:2]) == 0.0
    assert round(max(lesson["max_abs_diff_per_position"][2:]), 4) == 0.3175

    os.makedirs(args.out, exist_ok=True)
    files = {"lesson_example.json": lesson, "cases_public.json": public}
    for name, content in files.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.write(dump(content) + "\n")
        print("wrote", os.path.join(args.out, name))

    if args.compare:
        problems = []
        for name in files:
            with open(os.path.join(args.out, name)) as f:
                new = json.load(f)
            with open(os.path.join(args.compare, name)) as f:
                old = json.load(f)
            compare(new, old, name, np, problems)
        for p in problems[:20]:
            print("differs:", p)
        if problems:
            print("%d differences against %s" % (len(problems), args.compare))
            sys.exit(1)
        print("every number equals the files in", args.compare)


if __name__ == "__main__":
    main()
