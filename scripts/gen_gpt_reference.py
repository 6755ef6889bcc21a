#!/usr/bin/python3
"""Regenerate tests/data/gpt_tiny/: a tiny GPT in both file layouts and torch's forward on it.

Usage (Debian's python3 with torch 1.13; `transformers` is not needed):

    /usr/bin/python3 scripts/gen_gpt_reference.py --out /tmp/gpt_tiny
    or: scripts/gen-references gen_gpt_reference   (--out tests/data/gpt_tiny)

The model is nanoGPT's GPT (model.py), written out below: wte + wpe, blocks of
x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), ln_f, logits through the tied wte. The config
is tiny (2 layers, 4 heads, C = 64, vocabulary 1000, block size 64) and the init is
nanoGPT's (normal 0.02, c_proj 0.02 / sqrt(2 L), biases 0) from torch.manual_seed, with
the LayerNorms' and biases' values then drawn at random too, so that a reader that drops
them gives other numbers. Weights are rounded to float16 before the forward and stored as
F16, so the files stay small and hold exactly the values torch used.

Written to --out:
  gpt2/model.safetensors   Hugging Face GPT-2 layout: h.N.attn.c_attn.weight is Conv1D
                           [in][out]; biases; attn.bias mask buffers as HF saves them
  gpt2/config.json         n_layer, n_head, n_embd, vocab_size, n_positions, as HF's GPT2Config
  gpt2_forward.safetensors torch's forward with GELU tanh (HF's gelu_new) on these weights
  nanogpt_nobias.safetensors  nanoGPT GPT(bias=False) state_dict, nn.Linear layout,
                           transformer. prefix, __metadata__ n_head
  nanogpt_nobias_forward.safetensors  torch's forward with nn.GELU() (erf) on those weights
Each forward file holds F32 tensors layers.N.softmax_probs (H, T, T), layers.N.resid_mid and
layers.N.resid_post (T, C), logits (T, V), and __metadata__ tokens ("1,2,3"), gelu, n_head.

The numbers depend on the BLAS: the script pins Netlib's reference BLAS, one thread and
AVX2 exactly as scripts/gen_reference.py does (and re-executes itself to do so).
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_reference import check_blas, pin_environment  # noqa: E402

CONFIG = dict(n_layer=2, n_head=4, n_embd=64, vocab_size=1000, block_size=64)
T_TOKENS = 12


def make_gpt(torch, nn, F):
    class LayerNorm(nn.Module):
        """nanoGPT's LayerNorm with an optional bias."""

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
            self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
            self.n_head, self.n_embd = c["n_head"], c["n_embd"]
            bs = c["block_size"]
            self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))

        def forward(self, x, record):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            record["softmax_probs"] = att[0]
            y = att @ v  # (B, nh, T, hs)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class NewGELU(nn.Module):
        """Hugging Face's gelu_new, GPT-2's activation."""

        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class MLP(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
            self.gelu = NewGELU() if c["gelu"] == "tanh" else nn.GELU()
            self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln_1 = LayerNorm(c["n_embd"], c["bias"])
            self.attn = CausalSelfAttention(c)
            self.ln_2 = LayerNorm(c["n_embd"], c["bias"])
            self.mlp = MLP(c)

        def forward(self, x, record):
            x = x + self.attn(self.ln_1(x), record)
            record["resid_mid"] = x[0]
            x = x + self.mlp(self.ln_2(x))
            record["resid_post"] = x[0]
            return x

    class GPT(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
                wpe=nn.Embedding(c["block_size"], c["n_embd"]),
                h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
                ln_f=LayerNorm(c["n_embd"], c["bias"]),
            ))
            self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            layers = []
            for block in self.transformer.h:
                record = {}
                x = block(x, record)
                layers.append(record)
            x = self.transformer.ln_f(x)
            return self.lm_head(x)[0], layers

    return GPT


def build(torch, nn, F, gelu, bias, seed):
    c = dict(CONFIG, gelu=gelu, bias=bias)
    torch.manual_seed(seed)
    model = GPT_CLASS(c)
    with torch.no_grad():
        # Random LayerNorm weights and biases (nanoGPT starts them at 1 and 0), so the
        # fixtures catch a reader that leaves them out; then everything rounded to float16.
        for name, p in model.named_parameters():
            if ".ln_" in name or name.startswith("transformer.ln_f") or name.endswith(".bias"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape) if name.endswith("weight") else 0.1 * torch.randn(p.shape))
        for p in model.parameters():
            p.copy_(p.half().float())
    model.eval()
    return model, c


def save_forward(torch, save_file, model, c, tokens, gelu, path):
    with torch.no_grad():
        logits, layers = model(torch.tensor([tokens]))
    out = {"logits": logits.contiguous()}
    for n, r in enumerate(layers):
        for k in ("softmax_probs", "resid_mid", "resid_post"):
            out["layers.%d.%s" % (n, k)] = r[k].contiguous()
    save_file(out, path, {"format": "pt", "tokens": ",".join(str(t) for t in tokens), "gelu": gelu,
                          "n_head": str(c["n_head"])})


def hf_state_dict(torch, model, c):
    """GPT-2 as Hugging Face's GPT2Model saves it: no transformer. prefix, Conv1D weights [in][out]."""
    sd = {}
    for name, p in model.state_dict().items():
        if not name.startswith("transformer."):
            continue  # lm_head is wte (tied); HF's GPT2Model file has no head
        key = name[len("transformer."):]
        if key.endswith(".attn.bias"):  # the mask buffer, not c_attn.bias
            bs = c["block_size"]
            sd[key] = torch.tril(torch.ones(bs, bs, dtype=torch.bool)).view(1, 1, bs, bs)
            continue
        is_conv1d = any(key.endswith(s) for s in ("c_attn.weight", "c_proj.weight", "c_fc.weight"))
        sd[key] = (p.t() if is_conv1d else p).contiguous().half()
    return sd


def nanogpt_state_dict(model):
    return {k: v.contiguous().half() for k, v in model.state_dict().items()
            if not k.endswith(".attn.bias") and k != "lm_head.weight"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    pin_environment()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from make_weight_fixtures import save_file

    torch.set_num_threads(1)
    check_blas(torch)
    global GPT_CLASS
    GPT_CLASS = make_gpt(torch, nn, F)
    os.makedirs(os.path.join(args.out, "gpt2"), exist_ok=True)

    torch.manual_seed(100)
    tokens = torch.randint(0, CONFIG["vocab_size"], (T_TOKENS,)).tolist()

    model, c = build(torch, nn, F, "tanh", True, 1)
    save_file(hf_state_dict(torch, model, c), os.path.join(args.out, "gpt2", "model.safetensors"), {"format": "pt"})
    with open(os.path.join(args.out, "gpt2", "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "activation_function": "gelu_new", "n_layer": c["n_layer"],
                   "n_head": c["n_head"], "n_embd": c["n_embd"], "vocab_size": c["vocab_size"],
                   "n_positions": c["block_size"], "n_ctx": c["block_size"], "layer_norm_epsilon": 1e-05},
                  f, indent=2)
        f.write("\n")
    save_forward(torch, save_file, model, c, tokens, "tanh", os.path.join(args.out, "gpt2_forward.safetensors"))

    model, c = build(torch, nn, F, "erf", False, 2)
    save_file(nanogpt_state_dict(model), os.path.join(args.out, "nanogpt_nobias.safetensors"),
              {"format": "pt", "n_head": str(c["n_head"])})
    save_forward(torch, save_file, model, c, tokens, "erf",
                 os.path.join(args.out, "nanogpt_nobias_forward.safetensors"))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
