#!/usr/bin/python3
"""Regenerate tests/data/patch/reference.json: the logit lens and activation patching computed
by torch with forward hooks, for src/core/model/logit_lens.h and patching.h and the tests of
tests/core/test_patching.cpp.

Usage (Debian's python3 with torch 1.13 and numpy):

    /usr/bin/python3 scripts/gen_patch_reference.py [--out FILE]
    or: scripts/gen-references gen_patch_reference [--out FILE]

On the tiny GPTs of tests/data/gpt_tiny (both layouts, loaded as
scripts/gen_detector_reference.py loads them), for each model:

  logit lens   the embedding (wte[tok] + wpe, the first block's input, read by a forward
               pre-hook) and every block's resid_post, each through ln_f (F.layer_norm: the
               row's own mean and variance) and the tied lm_head, softmax over the
               vocabulary: the top 5 ids and probabilities at every position, and the
               probability of the next token (none at the last position)
  patching     a clean and a corrupted prompt (the clean one with one or two tokens changed),
               an answer and a wrong token; ld = logits[-1, answer] - logits[-1, wrong];
               resid: a forward pre-hook on block l sets its input's row t to the clean
               run's (TransformerLens's get_act_patch_resid_pre); heads: a forward pre-hook
               on attn.c_proj sets head h's head_dim columns of its input (hook_z) at every
               position to the clean run's (get_act_patch_attn_head_out_all_pos); each
               normalised (patched - corrupted) / (clean - corrupted)

And on the trained toy induction model of tests/data/generate/ (induction_c32_s3.safetensors,
loaded as gen_generate_reference.py loads it; no LayerNorm, so no logit lens): a repeated
segment after BOS whose second copy stops one short (the answer: the segment's last token),
corrupted by changing that token in the first copy (the wrong answer: the new token); its
ToyModel loop is written out so that a residual patch sets the stream itself.

The prompts and answers are searched here (fixed seeds, a few candidates) for a clean -
corrupted gap of at least 1 (tests/core asks the tables within 1e-4 only there); the tiny
models' weights are small, so the answer and wrong tokens are the ones the corruption moves
most, found by a search over the vocabulary. Like gen_reference.py the script re-executes
itself with the reference BLAS, one thread and AVX2.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_reference import check_blas, pin_environment  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT_DATA = os.path.join(ROOT, "tests", "data", "gpt_tiny")
TOY_FILE = "induction_c32_s3.safetensors"  # tests/data/generate/, written by attnviz train
torch = nn = F = None  # imported in main(), once the environment is pinned
T = 10
WTE_SCALE, ATTN_SCALE, PROJ_SCALE = 16.0, 4.0, 8.0  # see sharpen()


class Hooks:
    """Forward pre-hooks that record or replace a block's input or a c_proj's input."""

    def __init__(self):
        self.handles = []

    def on(self, module, fn):
        self.handles.append(module.register_forward_pre_hook(fn))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


def run(model, tokens, resid=None, head=None, clean=None):
    """One forward on tokens (1, T); resid=(l, t) or head=(l, h) patches from `clean`'s records.
    Returns logits (T, V) and the records: every block's input and every c_proj's input."""
    tr = model.transformer
    rec = {"resid_pre": {}, "z": {}}
    hd = tr.h[0].attn.n_embd // tr.h[0].attn.n_head
    with Hooks() as hooks, torch.no_grad():
        for l, blk in enumerate(tr.h):
            def pre_block(module, args, l=l):
                x = args[0]
                if resid is not None and resid[0] == l:
                    x = x.clone()
                    x[0, resid[1]] = clean["resid_pre"][l][0, resid[1]]
                rec["resid_pre"][l] = x.detach().clone()
                return (x,) + tuple(args[1:])

            def pre_proj(module, args, l=l):
                y = args[0]
                if head is not None and head[0] == l:
                    y = y.clone()
                    s = slice(head[1] * hd, (head[1] + 1) * hd)
                    y[..., s] = clean["z"][l][..., s]
                rec["z"][l] = y.detach().clone()
                return (y,)
            hooks.on(blk, pre_block)
            hooks.on(blk.attn.c_proj, pre_proj)
        logits, layers = model(tokens)
    rec["layers"] = layers
    return logits, rec


def logit_lens(model, tokens, rec):
    tr = model.transformer
    rows = [rec["resid_pre"][0][0]] + [layer["resid_post"] for layer in rec["layers"]]
    top, probs, nxt = [], [], []
    with torch.no_grad():
        for r in rows:
            p = F.softmax(model.lm_head(tr.ln_f(r)), dim=-1)  # (T, V)
            t5 = torch.topk(p, 5, dim=-1)
            top.append(t5.indices.tolist())
            probs.append(t5.values.tolist())
            nxt.append([float(p[i, tokens[0, i + 1]]) for i in range(tokens.shape[1] - 1)])
    return {"top": top, "probs": probs, "next_prob": nxt}


def ld(logits, answer, wrong):
    return float(logits[-1, answer] - logits[-1, wrong])


def search(model, name):
    """Prompts and answers with a clean - corrupted gap of at least 1: the pair of tokens
    whose logit difference the corruption moves most."""
    V = model.transformer.wte.weight.shape[0]
    best = None
    for seed in range(20):
        g = torch.Generator().manual_seed(500 + seed)
        clean = torch.randint(0, V, (1, T), generator=g)
        corrupt = clean.clone()
        for p in ([2] if seed % 2 == 0 else [1, 5]):
            corrupt[0, p] = int(torch.randint(0, V, (1,), generator=g))
        lc, _ = run(model, clean)
        lk, _ = run(model, corrupt)
        d = (lc[-1] - lk[-1]).double()
        answer, wrong = int(torch.argmax(d)), int(torch.argmin(d))
        gap = float(d[answer] - d[wrong])
        if best is None or gap > best[0]:
            best = (gap, clean, corrupt, answer, wrong)
        if gap >= 1.5:
            break
    gap, clean, corrupt, answer, wrong = best
    print(name, "best gap %.4f" % gap, file=sys.stderr)
    print(name, "gap %.3f" % gap, file=sys.stderr)
    assert gap >= 1.0, "no prompt pair with a clean - corrupted gap of 1 on " + name
    return clean, corrupt, answer, wrong


def sharpen(model):
    """The tiny GPTs' init (normal 0.02) gives logit differences below 0.1; wte (the tied
    unembedding too) times WTE_SCALE, c_attn times ATTN_SCALE and both c_proj (what a layer
    adds to the residual stream) times PROJ_SCALE, powers of two so that the
    scaled float32 weights are exact, give gaps above 1 and sharper attention. The tests
    scale the same files the same way."""
    tr = model.transformer
    with torch.no_grad():
        tr.wte.weight.mul_(WTE_SCALE)
        for blk in tr.h:
            blk.attn.c_attn.weight.mul_(ATTN_SCALE)
            blk.attn.c_proj.weight.mul_(PROJ_SCALE)
            blk.mlp.c_proj.weight.mul_(PROJ_SCALE)


def case(name, file, model):
    tr = model.transformer
    L, H = len(tr.h), tr.h[0].attn.n_head
    clean, corrupt, answer, wrong = search(model, name)
    lc, rc = run(model, clean)
    lk, _ = run(model, corrupt)
    c_ld, k_ld = ld(lc, answer, wrong), ld(lk, answer, wrong)

    def norm(x):
        return (x - k_ld) / (c_ld - k_ld)
    resid = [[norm(ld(run(model, corrupt, resid=(l, t), clean=rc)[0], answer, wrong)) for t in range(T)]
             for l in range(L)]
    heads = [[norm(ld(run(model, corrupt, head=(l, h), clean=rc)[0], answer, wrong)) for h in range(H)]
             for l in range(L)]
    return {"name": name, "file": file, "clean": clean[0].tolist(), "corrupt": corrupt[0].tolist(),
            "answer": answer, "wrong": wrong, "clean_ld": c_ld, "corrupt_ld": k_ld,
            "resid": resid, "heads": heads, "lens": logit_lens(model, clean, rc)}


def toy_run(model, tokens, resid=None, head=None, clean=None):
    """The recipe's ToyModel forward (x = x + block(x), lm_head), its loop written out so that a
    residual patch sets the stream itself; heads patched by a pre-hook on each block's proj."""
    rec = {"resid_pre": {}, "z": {}}
    hd = model.h[0].head_dim
    with Hooks() as hooks, torch.no_grad():
        for l, blk in enumerate(model.h):
            def pre_proj(module, args, l=l):
                y = args[0]
                if head is not None and head[0] == l:
                    y = y.clone()
                    s = slice(head[1] * hd, (head[1] + 1) * hd)
                    y[..., s] = clean["z"][l][..., s]
                rec["z"][l] = y.detach().clone()
                return (y,)
            hooks.on(blk.proj, pre_proj)
        x = model.wte(tokens) + model.wpe(torch.arange(tokens.shape[1]))
        for l, blk in enumerate(model.h):
            if resid is not None and resid[0] == l:
                x = x.clone()
                x[0, resid[1]] = clean["resid_pre"][l][0, resid[1]]
            rec["resid_pre"][l] = x.detach().clone()
            x = x + blk(x)
        logits = model.lm_head(x)[0]
    return logits, rec


def toy_case(model, V):
    """A repeated segment after BOS: the clean prompt's second copy stops one short, so an
    induction head predicts the segment's last token; the corrupted prompt changes that token
    in the first copy, so it predicts the new one instead."""
    L, H = len(model.h), model.h[0].n_head
    seg = [3, 7, 1, 12, 5, 9]
    clean = [V] + seg + seg[:-1]
    corrupt = list(clean)
    answer, wrong = seg[-1], 14
    corrupt[len(seg)] = wrong
    clean_t, corrupt_t = torch.tensor([clean]), torch.tensor([corrupt])
    lc, rc = toy_run(model, clean_t)
    lk, _ = toy_run(model, corrupt_t)
    c_ld, k_ld = ld(lc, answer, wrong), ld(lk, answer, wrong)
    print("toy_induction gap %.3f" % (c_ld - k_ld), file=sys.stderr)
    assert c_ld - k_ld >= 1.0

    def norm(x):
        return (x - k_ld) / (c_ld - k_ld)
    T = len(clean)
    resid = [[norm(ld(toy_run(model, corrupt_t, resid=(l, t), clean=rc)[0], answer, wrong)) for t in range(T)]
             for l in range(L)]
    heads = [[norm(ld(toy_run(model, corrupt_t, head=(l, h), clean=rc)[0], answer, wrong)) for h in range(H)]
             for l in range(L)]
    return {"name": "toy_induction", "file": "../generate/" + TOY_FILE, "clean": clean, "corrupt": corrupt,
            "answer": answer, "wrong": wrong, "clean_ld": c_ld, "corrupt_ld": k_ld, "resid": resid, "heads": heads}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "patch", "reference.json"))
    args = ap.parse_args()
    pin_environment()
    global torch, nn, F
    import torch as torch_module
    import torch.nn as nn_module
    import torch.nn.functional as F_module
    torch, nn, F = torch_module, nn_module, F_module
    check_blas(torch)
    torch.set_num_threads(1)
    from gen_gpt_reference import make_gpt
    from gen_detector_reference import load
    GPT = make_gpt(torch, nn, F)
    nano = load(torch, GPT, os.path.join(GPT_DATA, "nanogpt_nobias.safetensors"), "erf", False, False)
    gpt2 = load(torch, GPT, os.path.join(GPT_DATA, "gpt2", "model.safetensors"), "tanh", True, True)
    for model in (nano, gpt2):
        sharpen(model)
    out = {"description": "scripts/gen_patch_reference.py: the logit lens and activation patching (resid_pre "
                          "and hook_z from the clean run) by torch's forward pre-hooks on the tiny GPTs",
           "models": [case("nanogpt_nobias", "nanogpt_nobias.safetensors", nano), case("gpt2", "gpt2", gpt2)]}
    from gen_generate_reference import load_toy, make_toy
    toy, V, _ = load_toy(torch, make_toy(torch, nn, F), os.path.join(ROOT, "tests", "data", "generate", TOY_FILE))
    out["toy"] = toy_case(toy, V)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", args.out, os.path.getsize(args.out), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
