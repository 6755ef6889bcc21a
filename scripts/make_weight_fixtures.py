#!/usr/bin/python3
"""Write the small safetensors fixtures in tests/data/weights/.

Run with Debian's /usr/bin/python3 (torch 1.13 and numpy):
    /usr/bin/python3 scripts/make_weight_fixtures.py [out_dir]
    /usr/bin/python3 scripts/make_weight_fixtures.py --fuzz-seeds [out_dir]   (fuzz/corpus/fuzz_safetensors)
    or: scripts/gen-references make_weight_fixtures [--fuzz-seeds] [out_dir]

The `safetensors` Python package is not in Debian 12, so the container is written by hand
here exactly as safetensors.torch.save_file writes it: an 8-byte little-endian header
length, a compact JSON header with __metadata__ first and the tensors in data order
(largest dtype first, then by name), padded with spaces to a multiple of 8, then the data.
When the package is importable, the lesson fixture is written with it instead, and the
hand-written bytes are checked against it.

Each file imitates one program's naming scheme:
  lesson_c8_h2.safetensors          SelfAttention(8, 2) after torch.manual_seed(0), the lesson's state_dict
  nanogpt_block_c12.safetensors     one nanoGPT CausalSelfAttention (c_attn, c_proj, biases, mask buffer)
  gpt2_hf_c12.safetensors           Hugging Face GPT-2 layout: h.N.attn.c_attn.weight is Conv1D [C][3C]
  gpt2_hf_prefixed_f16.safetensors  the same with a "transformer." prefix, stored as F16
  nanogpt_model_bf16.safetensors    a full nanoGPT model (nn.Linear layout, no biases, torch.compile
                                    prefix "_orig_mod."), stored as BF16, n_head in __metadata__
  f16_bf16_values.safetensors       F16 and BF16 values (subnormals, inf, nan, -0) with numpy's and
                                    torch's float32 conversions beside them
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

DTYPES = {  # torch dtype -> (safetensors name, bytes per element)
    torch.float32: ("F32", 4),
    torch.float16: ("F16", 2),
    torch.bfloat16: ("BF16", 2),
    torch.bool: ("BOOL", 1),
}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    if t.dtype == torch.bool:
        return t.numpy().astype(np.uint8).tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def save_file(tensors, path, metadata=None):
    """safetensors.torch.save_file, by hand."""
    order = sorted(tensors.items(), key=lambda kv: (-DTYPES[kv[1].dtype][1], kv[0]))
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    blobs, offset = [], 0
    for name, t in order:
        blob = tensor_bytes(t)
        header[name] = {
            "dtype": DTYPES[t.dtype][0],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


class SelfAttention(nn.Module):  # the lesson's module, parameters only
    def __init__(self, n_embd, n_head):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head, self.head_dim = n_head, n_embd // n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)


def lesson(out):
    torch.manual_seed(0)
    attn = SelfAttention(8, 2)
    sd = {k: v.detach() for k, v in attn.state_dict().items()}
    path = os.path.join(out, "lesson_c8_h2.safetensors")
    save_file(sd, path, {"format": "pt", "n_head": "2"})
    try:
        from safetensors.torch import save_file as st_save_file
    except ImportError:
        return
    with open(path, "rb") as f:
        by_hand = f.read()
    st_save_file(sd, path, {"format": "pt", "n_head": "2"})
    with open(path, "rb") as f:
        assert f.read() == by_hand, "hand-written safetensors differs from the safetensors package"


def nanogpt_block(out):
    torch.manual_seed(1)
    C, block = 12, 4
    c_attn, c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
    sd = {
        "c_attn.weight": c_attn.weight,
        "c_attn.bias": c_attn.bias,
        "c_proj.weight": c_proj.weight,
        "c_proj.bias": c_proj.bias,
        "bias": torch.tril(torch.ones(block, block)).view(1, 1, block, block),  # the mask buffer
    }
    save_file(sd, os.path.join(out, "nanogpt_block_c12.safetensors"), {"format": "pt"})


def gpt2_like(C, n_layer, vocab, block, prefix, dtype, seed):
    """GPT-2 as Hugging Face stores it: Conv1D weights are [in][out] (nn.Linear's transposed)."""
    torch.manual_seed(seed)
    sd = {prefix + "wte.weight": torch.randn(vocab, C), prefix + "wpe.weight": torch.randn(block, C)}
    for n in range(n_layer):
        h = f"{prefix}h.{n}."
        c_attn, c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        sd[h + "ln_1.weight"], sd[h + "ln_1.bias"] = torch.ones(C), torch.zeros(C)
        sd[h + "attn.bias"] = torch.tril(torch.ones(block, block, dtype=torch.bool)).view(1, 1, block, block)
        sd[h + "attn.c_attn.weight"] = c_attn.weight.t()
        sd[h + "attn.c_attn.bias"] = c_attn.bias
        sd[h + "attn.c_proj.weight"] = c_proj.weight.t()
        sd[h + "attn.c_proj.bias"] = c_proj.bias
        sd[h + "mlp.c_fc.weight"] = torch.randn(C, 4 * C)
        sd[h + "mlp.c_proj.weight"] = torch.randn(4 * C, C)
    sd[prefix + "ln_f.weight"], sd[prefix + "ln_f.bias"] = torch.ones(C), torch.zeros(C)
    return {k: (v.detach().to(dtype) if v.dtype.is_floating_point else v) for k, v in sd.items()}


def gpt2(out):
    save_file(gpt2_like(12, 2, 16, 8, "", torch.float32, 2),
              os.path.join(out, "gpt2_hf_c12.safetensors"), {"format": "pt"})
    sd = gpt2_like(12, 3, 16, 8, "transformer.", torch.float16, 3)
    sd["lm_head.weight"] = sd["transformer.wte.weight"].clone()
    save_file(sd, os.path.join(out, "gpt2_hf_prefixed_f16.safetensors"), {"format": "pt"})


def nanogpt_model(out):
    """A full nanoGPT GPT(bias=False) after torch.compile: nn.Linear layout, no biases."""
    torch.manual_seed(4)
    C, n_layer, prefix = 8, 2, "_orig_mod.transformer."
    sd = {prefix + "wte.weight": torch.randn(16, C), prefix + "wpe.weight": torch.randn(8, C)}
    for n in range(n_layer):
        h = f"{prefix}h.{n}."
        sd[h + "ln_1.weight"] = torch.ones(C)
        sd[h + "attn.c_attn.weight"] = nn.Linear(C, 3 * C, bias=False).weight
        sd[h + "attn.c_proj.weight"] = nn.Linear(C, C, bias=False).weight
        sd[h + "mlp.c_fc.weight"] = nn.Linear(C, 4 * C, bias=False).weight
        sd[h + "mlp.c_proj.weight"] = nn.Linear(4 * C, C, bias=False).weight
    sd = {k: v.detach().to(torch.bfloat16) for k, v in sd.items()}
    save_file(sd, os.path.join(out, "nanogpt_model_bf16.safetensors"), {"format": "pt", "n_head": "4"})


def conversions(out):
    """Half and bfloat16 bit patterns worth checking, with reference float32 values."""
    rng = np.random.default_rng(5)
    special = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00,
               0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7DFF, 0x3555, 0x0200]
    half_bits = np.array(special + list(rng.integers(1, 0x400, 64)) + list(rng.integers(0, 0x10000, 200)),
                         dtype=np.uint16)
    half = half_bits.view(np.float16)
    b_special = [0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x7F80, 0xFF80,
                 0x7FC0, 0xFFC0, 0x7F81]
    bf_bits = np.array(b_special + list(rng.integers(0, 0x10000, 200)), dtype=np.uint16)
    bf = torch.from_numpy(bf_bits.view(np.int16).copy()).view(torch.bfloat16)
    sd = {
        "f16": torch.from_numpy(half.copy()),
        "f16_as_f32": torch.from_numpy(half.astype(np.float32)),
        "bf16": bf,
        "bf16_as_f32": bf.float(),
    }
    save_file(sd, os.path.join(out, "f16_bf16_values.safetensors"), {"format": "pt"})


def fuzz_seeds(out):
    """Tiny files (C = 4) of each scheme and dtype: the seed corpus of fuzz_safetensors."""
    torch.manual_seed(6)
    C = 4
    save_file({"qkv.weight": torch.randn(3 * C, C), "proj.weight": torch.randn(C, C)},
              os.path.join(out, "lesson_c4.safetensors"), {"format": "pt", "n_head": "2"})
    save_file({"c_attn.weight": torch.randn(3 * C, C).to(torch.bfloat16), "c_attn.bias": torch.randn(3 * C).to(torch.bfloat16),
               "c_proj.weight": torch.randn(C, C).to(torch.bfloat16), "c_proj.bias": torch.randn(C).to(torch.bfloat16)},
              os.path.join(out, "nanogpt_block_c4_bf16.safetensors"), {"n_head": "1"})
    save_file(gpt2_like(C, 2, 2, 2, "transformer.", torch.float16, 7), os.path.join(out, "gpt2_c4_f16.safetensors"),
              {"format": "pt"})


def main():
    args = sys.argv[1:]
    if args and args[0] == "--fuzz-seeds":
        out = args[1] if len(args) > 1 else os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "fuzz_safetensors")
        os.makedirs(out, exist_ok=True)
        fuzz_seeds(out)
    else:
        out = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "tests", "data", "weights")
        os.makedirs(out, exist_ok=True)
        lesson(out)
        nanogpt_block(out)
        gpt2(out)
        nanogpt_model(out)
        conversions(out)
    for name in sorted(os.listdir(out)):
        print(f"{os.path.getsize(os.path.join(out, name)):8d}  {name}")


if __name__ == "__main__":
    main()
