#!/usr/bin/python3
"""Regenerate tests/data/ablation/: head ablation and direct logit attribution computed by
torch, for src/core/model/ablation.h and the tests of tests/core/test_ablation.cpp.

Usage (Debian's python3 with torch 1.13 and numpy):

    /usr/bin/python3 scripts/gen_ablation_reference.py [--out DIR]
    or: scripts/gen-references gen_ablation_reference [--out DIR]

An ablation is a forward pre-hook on the attention's output projection (the toy models'
`proj`, GPT's `attn.c_proj`, both nn.Linear) that replaces the ablated heads' head_dim
columns of its input y = att @ v (TransformerLens's hook_z) before the projection: by zero,
or (mean mode) by the mean of those columns over the probe, computed on the clean model.
The mean's probe is a toy model's accuracy probe (make_batch from
torch.Generator().manual_seed(4321), 256 sequences: every sequence and position) and a GPT
model's own token sequence.

Toy models are trained here by the training recipe (docs/training.md; the recipe's code is
copied below, unchanged, since the project never reads the recipe at run time) on seeds
and sizes no other test uses, and saved in the recipe's save_safetensors layout:
  toy_induction_s7.safetensors  induction, seed 7, V 16, T 20, C 32, H 4, L 2, 300 steps
  toy_both_s11.safetensors      both, seed 11, V 16, T 12, C 48, H 3, L 1, 300 steps
  toy_dup_s13.safetensors       dup, seed 13, V 10, T 14, C 24, H 2, L 3, 300 steps
toy_reference.json holds, per model and per ablation (one head; two heads, in two layers
when there are two; zero and mean): the loss (loss_of) and accuracy (accuracy()) on the
accuracy probe before and after, the means used, every layer's attention weights on one
fixed sequence with the ablation, the recipe's head_scores with the ablation, and the DLA
(ablation.h) at one position onto the clean model's top token there, clean and ablated.

gpt_reference.json does the same for the tiny GPTs of tests/data/gpt_tiny (loaded as
scripts/gen_detector_reference.py loads them): the next-token loss on a fixed sequence
(F.cross_entropy(logits[:-1], tokens[1:])), the top 5 at its last position, every layer's
attention weights, the DLA at the last position onto the clean top-1 token with
TransformerLens's convention (ln_f's scale frozen from the run, components centred; terms
embed, pos_embed, each head, b_proj per layer, the MLP per layer, ln_f's bias), and the
induction scores of the head detector's repeated probe (gen_detector_reference.py's),
each with the ablation.

Tensors are base64 of little-endian float32 (as tests/data/train); scalars JSON numbers.
Like gen_reference.py the script re-executes itself with the reference BLAS, one thread and
AVX2, so that the files do not depend on the machine's BLAS.
"""
import argparse
import base64
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_reference import check_blas, pin_environment  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT_DATA = os.path.join(ROOT, "tests", "data", "gpt_tiny")
torch = nn = F = None  # imported in main(), once the environment is pinned


def b64(t):
    return base64.b64encode(t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()).decode()


# =======================================================================================
# The training recipe's code (train-recipes.py), copied unchanged: the model, the batches,
# the loss, the accuracy and the head scores. Defined once torch is imported.

def define_recipe():
    global SelfAttention, ToyModel, make_batch, loss_of, head_scores, accuracy, save_safetensors

    class SelfAttention(nn.Module):  # the lesson's module, unchanged
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
            self.att = att                      # (B, H, T, T), kept for the head scores
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class ToyModel(nn.Module):
        def __init__(self, task, V, T, C, H, L):
            super().__init__()
            self.task = task
            self.wte = nn.Embedding(V + 1, C)
            self.wpe = nn.Embedding(T + 1, C)
            self.h = nn.ModuleList([SelfAttention(C, H) for _ in range(L)])
            if task in ("prev", "both"):
                self.head_prev = nn.Linear(C, V + 1, bias=False)
            if task in ("dup", "both"):
                self.head_dup = nn.Linear(C, 2, bias=False)
            if task == "induction":
                self.lm_head = nn.Linear(C, V, bias=False)

        def forward(self, tok):
            x = self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))
            for block in self.h:
                x = x + block(x)
            return x

    def make_batch(task, g, V, T, B):
        BOS = V
        body = torch.randint(0, V, (B, T), generator=g)
        if task == "induction":
            Ls = torch.randint(3, T // 2, (B,), generator=g)
            starts = torch.randint(0, 2, (B,), generator=g)
            where = torch.zeros(B, T + 1, dtype=torch.bool)
            for b in range(B):
                L, s = int(Ls[b]), int(starts[b])
                body[b, s + L:s + 2 * L] = body[b, s:s + L]
                where[b, 1 + s + L:1 + s + 2 * L - 1] = True
        tok = torch.cat([torch.full((B, 1), BOS), body], 1)
        out = {"tok": tok}
        if task in ("prev", "both"):
            out["prev"] = torch.cat([torch.full((B, 1), BOS), tok[:, :-1]], 1)
        if task in ("dup", "both"):
            earlier = torch.tril(torch.ones(T + 1, T + 1, dtype=torch.bool), -1)
            out["dup"] = ((tok[:, :, None] == tok[:, None, :]) & earlier).any(-1).long()
        if task == "induction":
            out["where"] = where
        return out

    def loss_of(model, batch):
        h = model(batch["tok"])
        loss = 0.0
        if hasattr(model, "head_prev"):
            lp = model.head_prev(h)[:, 1:]
            loss = loss + F.cross_entropy(lp.reshape(-1, lp.shape[-1]), batch["prev"][:, 1:].reshape(-1))
        if hasattr(model, "head_dup"):
            ld = model.head_dup(h)[:, 1:]
            loss = loss + F.cross_entropy(ld.reshape(-1, 2), batch["dup"][:, 1:].reshape(-1))
        if hasattr(model, "lm_head"):
            w = batch["where"][:, :-1]
            logits = model.lm_head(h)[:, :-1][w]
            loss = loss + F.cross_entropy(logits, batch["tok"][:, 1:][w])
        return loss

    @torch.no_grad()
    def head_scores(model, V, T, probe_seed=1234, B=256):
        g = torch.Generator().manual_seed(probe_seed)
        tok = torch.cat([torch.full((B, 1), V), torch.randint(0, V, (B, T), generator=g)], 1)
        model(tok)
        n = T + 1
        same = (tok[:, :, None] == tok[:, None, :]) & torch.tril(torch.ones(n, n, dtype=torch.bool), -1)
        has = same.any(-1)
        res = {"prev_token": [], "duplicate": [], "induction": []}
        for blk in model.h:
            a = blk.att
            res["prev_token"].append([a[:, hd].diagonal(-1, -2, -1).mean().item() for hd in range(a.shape[1])])
            res["duplicate"].append([(a[:, hd] * same).sum(-1)[has].mean().item() for hd in range(a.shape[1])])
        R = T // 3
        r = torch.randint(0, V, (B, R), generator=g)
        tok = torch.cat([torch.full((B, 1), V), r, r, torch.randint(0, V, (B, T - 2 * R), generator=g)], 1)
        model(tok)
        qs = range(R + 1, 2 * R)
        for blk in model.h:
            a = blk.att
            res["induction"].append([torch.stack([a[:, hd, i, i - R + 1] for i in qs]).mean().item()
                                     for hd in range(a.shape[1])])
        return res

    @torch.no_grad()
    def accuracy(model, task, V, T, probe_seed=4321, B=256):
        g = torch.Generator().manual_seed(probe_seed)
        batch = make_batch(task, g, V, T, B)
        h = model(batch["tok"])
        acc = {}
        if hasattr(model, "head_prev"):
            acc["prev"] = (model.head_prev(h).argmax(-1) == batch["prev"])[:, 1:].float().mean().item()
        if hasattr(model, "head_dup"):
            acc["dup"] = (model.head_dup(h).argmax(-1) == batch["dup"])[:, 1:].float().mean().item()
        if hasattr(model, "lm_head"):
            w = batch["where"][:, :-1]
            acc["next"] = (model.lm_head(h)[:, :-1].argmax(-1) == batch["tok"][:, 1:])[w].float().mean().item()
        return acc

    def save_safetensors(path, model, cfg, task):
        names = {"wte.weight": "transformer.wte.weight", "wpe.weight": "transformer.wpe.weight"}
        tensors = {}
        for k, v in model.state_dict().items():
            if k.startswith("h."):
                l, rest = k[2:].split(".", 1)
                k2 = f"transformer.h.{l}.attn." + {"qkv.weight": "c_attn.weight", "proj.weight": "c_proj.weight"}[rest]
            else:
                k2 = names.get(k, k)
            tensors[k2] = v.contiguous()
        meta = {"attnviz_task": task, "n_head": str(cfg["H"]), "n_layer": str(cfg["L"]), "vocab_size": str(cfg["V"])}
        header, off = {"__metadata__": meta}, 0
        for k in sorted(tensors):
            t = tensors[k]; n = t.numel() * 4
            header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + n]}; off += n
        hb = json.dumps(header, separators=(",", ":")).encode()
        hb += b" " * (-len(hb) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(hb))); f.write(hb)
            for k in sorted(tensors):
                f.write(tensors[k].numpy().astype("<f4").tobytes())


def train(task, seed, cfg):
    """The recipe's train(): Adam from torch.manual_seed(seed), batches from Generator(seed + 1)."""
    torch.manual_seed(seed)
    model = ToyModel(task, cfg["V"], cfg["T"], cfg["C"], cfg["H"], cfg["L"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(seed + 1)
    for _ in range(cfg["steps"]):
        loss = loss_of(model, make_batch(task, g, cfg["V"], cfg["T"], cfg["B"]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


# =======================================================================================
# The ablation: a pre-hook on the output projection, replacing heads' columns of its input.

class Ablate:
    """with Ablate(projections, head_dim, {(layer, head): replacement or None}): None is zero."""

    def __init__(self, projs, hd, heads):
        self.projs, self.hd, self.heads, self.handles = projs, hd, heads, []

    def __enter__(self):
        for l, proj in enumerate(self.projs):
            mine = {h: r for (ll, h), r in self.heads.items() if ll == l}
            if not mine:
                continue

            def hook(module, inputs, mine=mine):
                y = inputs[0].clone()
                for h, r in mine.items():
                    y[..., h * self.hd:(h + 1) * self.hd] = 0.0 if r is None else r
                return (y,)
            self.handles.append(proj.register_forward_pre_hook(hook))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


class Capture:
    """Records every projection's input (the z of every head, after any ablation)."""

    def __init__(self, projs):
        self.projs, self.z, self.handles = projs, {}, []

    def __enter__(self):
        for l, proj in enumerate(self.projs):
            def hook(module, inputs, l=l):
                self.z[l] = inputs[0].detach().clone()
            self.handles.append(proj.register_forward_pre_hook(hook))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


def head_means(projs, hd, run, heads):
    """Each head's mean z over every sequence and position of the probe, on the clean model."""
    with Capture(projs) as cap, torch.no_grad():
        run()
    return {(l, h): cap.z[l][..., h * hd:(h + 1) * hd].reshape(-1, hd).mean(0) for (l, h) in heads}


def replacements(mode, means, heads):
    return {k: (None if mode == "zero" else means[k]) for k in heads}


def head_name(k):
    return "%d.%d" % k


# =======================================================================================
# Toy models

TOY_CASES = [
    # name, task, seed, sizes, ablations (heads, mode)
    ("toy_induction_s7", "induction", 7, dict(V=16, T=20, C=32, H=4, L=2, lr=3e-3, B=64, steps=300),
     [([(0, 1)], "zero"), ([(0, 1)], "mean"), ([(1, 2)], "zero"), ([(0, 0), (1, 2)], "zero"),
      ([(0, 3), (1, 0)], "mean")]),
    ("toy_both_s11", "both", 11, dict(V=16, T=12, C=48, H=3, L=1, lr=5e-3, B=64, steps=300),
     [([(0, 2)], "zero"), ([(0, 0)], "mean"), ([(0, 0), (0, 1)], "zero"), ([(0, 1), (0, 2)], "mean")]),
    ("toy_dup_s13", "dup", 13, dict(V=10, T=14, C=24, H=2, L=3, lr=5e-3, B=64, steps=300),
     [([(1, 0)], "zero"), ([(2, 1)], "mean"), ([(0, 1), (2, 0)], "zero"), ([(0, 0), (1, 1), (2, 1)], "mean")]),
]


def toy_unembedding(model):
    # ablation.h: lm_head (induction), head_prev (prev, both), head_dup (dup)
    for name in ("lm_head", "head_prev", "head_dup"):
        if hasattr(model, name):
            return getattr(model, name).weight
    raise ValueError("no head")


def toy_dla(model, tok, pos, token):
    """wte[tok] + wpe[pos] + every head's z_h W_proj[:, h]^T = h_out[pos], each dotted with U[token]."""
    U = toy_unembedding(model)[token]
    projs = [blk.proj for blk in model.h]
    hd = model.h[0].head_dim
    with Capture(projs) as cap, torch.no_grad():
        h = model(tok)
    heads = []
    for l, blk in enumerate(model.h):
        z = cap.z[l][0, pos]
        W = blk.proj.weight
        heads.append([float((z[i * hd:(i + 1) * hd] @ W[:, i * hd:(i + 1) * hd].t()) @ U)
                      for i in range(blk.n_head)])
    with torch.no_grad():
        return {"pos": pos, "token": token, "logit": float(h[0, pos] @ U),
                "embed": float(model.wte.weight[tok[0, pos]] @ U), "pos_embed": float(model.wpe.weight[pos] @ U),
                "heads": heads}


def toy_case(name, task, seed, cfg, ablations, out_dir):
    model = train(task, seed, cfg)
    model.eval()
    path = os.path.join(out_dir, name + ".safetensors")
    save_safetensors(path, model, cfg, task)
    V, T = cfg["V"], cfg["T"]
    projs = [blk.proj for blk in model.h]
    hd = cfg["C"] // cfg["H"]
    probe = make_batch(task, torch.Generator().manual_seed(4321), V, T, 256)

    def metrics():
        with torch.no_grad():
            return {"loss": loss_of(model, probe).item(), "accuracy": accuracy(model, task, V, T)}

    # The fixed sequence: the probe's first; the DLA at its last position whose target the
    # task knows (induction: the last of the repeated segment), onto the clean top token.
    tok = probe["tok"][:1]
    pos = int(probe["where"][0].nonzero().max()) if task == "induction" else T
    with torch.no_grad():
        token = int((model(tok)[0, pos] @ toy_unembedding(model).t()).argmax())
    before = metrics()
    clean_dla = toy_dla(model, tok, pos, token)
    cases = []
    for heads, mode in ablations:
        means = head_means(projs, hd, lambda: model(probe["tok"]), heads)
        with Ablate(projs, hd, replacements(mode, means, heads)):
            after = metrics()
            with torch.no_grad():
                model(tok)
            patterns = [b64(blk.att[0]) for blk in model.h]
            scores = head_scores(model, V, T)
            dla = toy_dla(model, tok, pos, token)
        cases.append({"heads": [head_name(k) for k in heads], "mode": mode,
                      "means": {head_name(k): b64(means[k]) for k in heads} if mode == "mean" else {},
                      "after": after, "patterns": patterns, "head_scores": scores, "dla": dla})
        print(name, [head_name(k) for k in heads], mode, "loss %.4f -> %.4f" % (before["loss"], after["loss"]),
              before["accuracy"], "->", after["accuracy"], file=sys.stderr)
    scores_before = head_scores(model, V, T)
    with torch.no_grad():
        model(tok)  # after the probes: blk.att is this sequence's again
    return {"name": name, "file": name + ".safetensors", "task": task, "seed": seed,
            "config": {k: cfg[k] for k in ("V", "T", "C", "H", "L", "lr", "B", "steps")},
            "probe": {"seed": 4321, "B": 256}, "sequence": tok[0].tolist(),
            "before": before, "head_scores_before": scores_before,
            "patterns_before": [b64(blk.att[0]) for blk in model.h], "dla_before": clean_dla,
            "ablations": cases}


# =======================================================================================
# GPT models (tests/data/gpt_tiny)

GPT_ABLATIONS = [([(0, 1)], "zero"), ([(0, 1)], "mean"), ([(1, 3)], "zero"), ([(0, 2), (1, 0)], "zero"),
                 ([(0, 0), (1, 1)], "mean")]


def gpt_dla(model, tokens, pos, token):
    """TransformerLens's logit attribution: every component of the final residual at pos,
    centred, divided by ln_f's scale of this run (frozen) and multiplied by ln_f.weight, dotted
    with wte[token]; ln_f.bias . wte[token] on its own."""
    tr = model.transformer
    L = len(tr.h)
    hd = tr.h[0].attn.n_embd // tr.h[0].attn.n_head
    projs = [blk.attn.c_proj for blk in tr.h]
    mlp_out = {}
    handles = [blk.mlp.register_forward_hook(lambda m, i, o, l=l: mlp_out.__setitem__(l, o.detach().clone()))
               for l, blk in enumerate(tr.h)]
    with Capture(projs) as cap, torch.no_grad():
        logits, layers = model(tokens)
    for handle in handles:
        handle.remove()
    with torch.no_grad():
        resid = layers[-1]["resid_post"][pos]
        sigma = torch.sqrt(resid.var(unbiased=False) + 1e-5)
        w, u = tr.ln_f.weight, tr.wte.weight[token]

        def term(c):
            return float(((c - c.mean()) / sigma * w) @ u)
        heads, bias, mlp = [], [], []
        for l, blk in enumerate(tr.h):
            z = cap.z[l][0, pos]
            W = blk.attn.c_proj.weight
            heads.append([term(z[i * hd:(i + 1) * hd] @ W[:, i * hd:(i + 1) * hd].t())
                          for i in range(blk.attn.n_head)])
            if blk.attn.c_proj.bias is not None:
                bias.append(term(blk.attn.c_proj.bias))
            mlp.append(term(mlp_out[l][0, pos]))
        out = {"pos": pos, "token": token, "logit": float(logits[pos, token]), "scale": float(sigma),
               "embed": term(tr.wte.weight[tokens[0, pos]]), "pos_embed": term(tr.wpe.weight[pos]),
               "heads": heads, "attn_bias": bias, "mlp": mlp,
               "ln_bias": float(tr.ln_f.bias @ u) if tr.ln_f.bias is not None else 0.0}
    assert len(heads) == L
    return out


def gpt_metrics(model, tokens):
    with torch.no_grad():
        logits, layers = model(tokens)
        loss = F.cross_entropy(logits[:-1], tokens[0, 1:]).item()
        p = F.softmax(logits[-1], dim=-1)
        top = torch.topk(p, 5)
    return {"loss": loss, "top5": top.indices.tolist(), "top5_probs": top.values.tolist()}, layers


def gpt_repeat_induction(model, bos):
    # gen_detector_reference.py's probe and score, on whatever hooks are in place
    from gen_detector_reference import induction_scores
    return induction_scores(torch, model, bos)["induction"]


def gpt_case(name, model, bos):
    g = torch.Generator().manual_seed(77)
    r = torch.randint(0, 1000, (8,), generator=g)
    tokens = torch.cat([r, r, torch.randint(0, 1000, (4,), generator=g)])[None]
    tr = model.transformer
    projs = [blk.attn.c_proj for blk in tr.h]
    hd = tr.h[0].attn.n_embd // tr.h[0].attn.n_head
    before, layers = gpt_metrics(model, tokens)
    pos = tokens.shape[1] - 1
    token = before["top5"][0]
    out = {"name": name, "sequence": tokens[0].tolist(), "bos": bos, "before": before,
           "patterns_before": [b64(rec["softmax_probs"]) for rec in layers],
           "dla_before": gpt_dla(model, tokens, pos, token),
           "repeat_induction_before": gpt_repeat_induction(model, bos), "ablations": []}
    for heads, mode in GPT_ABLATIONS:
        means = head_means(projs, hd, lambda: model(tokens), heads)
        with Ablate(projs, hd, replacements(mode, means, heads)):
            after, layers = gpt_metrics(model, tokens)
            out["ablations"].append({
                "heads": [head_name(k) for k in heads], "mode": mode,
                "means": {head_name(k): b64(means[k]) for k in heads} if mode == "mean" else {},
                "after": after, "patterns": [b64(rec["softmax_probs"]) for rec in layers],
                "dla": gpt_dla(model, tokens, pos, token),
                "repeat_induction": gpt_repeat_induction(model, bos)})
        print(name, [head_name(k) for k in heads], mode, "loss %.4f -> %.4f" % (before["loss"], after["loss"]),
              file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "ablation"))
    args = ap.parse_args()
    pin_environment()
    global torch, nn, F
    import torch as torch_module
    import torch.nn as nn_module
    import torch.nn.functional as F_module
    torch, nn, F = torch_module, nn_module, F_module
    check_blas(torch)
    torch.set_num_threads(1)
    define_recipe()
    os.makedirs(args.out, exist_ok=True)

    toy = {"description": "scripts/gen_ablation_reference.py: toy models trained by the recipe, ablated by a "
                          "pre-hook on proj (zero, or the mean over the accuracy probe)",
           "models": [toy_case(*case, args.out) for case in TOY_CASES]}

    from gen_gpt_reference import make_gpt
    from gen_detector_reference import load
    GPT = make_gpt(torch, nn, F)
    nano = load(torch, GPT, os.path.join(GPT_DATA, "nanogpt_nobias.safetensors"), "erf", False, False)
    gpt2 = load(torch, GPT, os.path.join(GPT_DATA, "gpt2", "model.safetensors"), "tanh", True, True)
    gpt = {"description": "scripts/gen_ablation_reference.py: the tiny GPTs of tests/data/gpt_tiny, ablated by a "
                          "pre-hook on attn.c_proj (zero, or the mean over the sequence)",
           "models": [dict(file="nanogpt_nobias.safetensors", **gpt_case("nanogpt_nobias", nano, None)),
                      dict(file="gpt2", **gpt_case("gpt2", gpt2, 999))]}
    for name, obj in (("toy_reference.json", toy), ("gpt_reference.json", gpt)):
        path = os.path.join(args.out, name)
        with open(path, "w") as f:
            json.dump(obj, f, separators=(",", ":"))
            f.write("\n")
        print("wrote", path, os.path.getsize(path), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
