#!/usr/bin/python3
"""Write fuzz_gpt's seed corpus (fuzz/corpus/fuzz_gpt) from the tiny GPT of tests/data/gpt_tiny.

Run with Debian's /usr/bin/python3 (numpy):
    /usr/bin/python3 scripts/make_fuzz_gpt_corpus.py [out_dir]
    or: scripts/gen-references make_fuzz_gpt_corpus [out_dir]

Each tensor is cut to its first entries so that a seed is a few kilobytes: n_embd 64 -> 4,
3 n_embd -> 12, 4 n_embd -> 16, vocabulary 1000 -> 8, block size 64 -> 4; the dtypes and
names stay the file's. A seed is fuzz/fuzz_gpt.cpp's input: one flags byte (bits 0-3
--n-head, bit 6 load the directory, bit 7 a config.json follows), then when bit 7 is set a
2-byte little-endian length and config.json, then model.safetensors.
"""
import json
import os
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "gpt_tiny")
CUT = {64: 4, 192: 12, 256: 16, 1000: 8}
NP = {"F32": np.float32, "F16": np.float16, "BOOL": np.uint8}
SIZE = {"F32": 4, "F16": 2, "BOOL": 1}


def read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", None)
    tensors = {}
    for name, t in header.items():
        lo, hi = t["data_offsets"]
        a = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype=NP[t["dtype"]]).reshape(t["shape"])
        tensors[name] = (t["dtype"], a)
    return tensors, meta


def cut(tensors, keep_layers, dtype=None):
    out = {}
    for name, (dt, a) in tensors.items():
        parts = name.split(".")
        if "h" in parts and int(parts[parts.index("h") + 1]) >= keep_layers:
            continue
        a = a[tuple(slice(0, CUT.get(s, s)) for s in a.shape)]
        if dtype and dt != "BOOL":
            a, dt = a.astype(NP[dtype]), dtype
        out[name] = (dt, np.ascontiguousarray(a))
    return out


def save(tensors, meta):
    """safetensors.torch.save_file's layout: __metadata__, then tensors by dtype size and name."""
    header, blobs, offset = {}, [], 0
    if meta is not None:
        header["__metadata__"] = meta
    for name, (dt, a) in sorted(tensors.items(), key=lambda kv: (-SIZE[kv[1][0]], kv[0])):
        blob = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def seed(flags, model, config=None):
    out = bytes([flags])
    if config is not None:
        out += struct.pack("<H", len(config)) + config
    return out + model


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz", "corpus", "fuzz_gpt")
    os.makedirs(out_dir, exist_ok=True)
    gpt2, gpt2_meta = read(os.path.join(DATA, "gpt2", "model.safetensors"))
    nano, nano_meta = read(os.path.join(DATA, "nanogpt_nobias.safetensors"))
    config = json.load(open(os.path.join(DATA, "gpt2", "config.json")))
    config.update(n_layer=2, n_head=2, n_embd=4, vocab_size=8, n_positions=4, n_ctx=4)
    config_bytes = json.dumps(config, indent=1).encode()
    gpt2_file = save(cut(gpt2, 2), gpt2_meta)
    seeds = {
        "gpt2_dir_config": seed(0x80 | 0x40, gpt2_file, config_bytes),  # config.json gives n_head
        "gpt2_file_nhead2": seed(0x02, gpt2_file),                       # --n-head 2, no config.json
        "nanogpt_meta_f32": seed(0x00, save(cut(nano, 1, "F32"), dict(nano_meta, n_head="2"))),
        "nanogpt_dir_nhead1": seed(0x40 | 0x01, save(cut(nano, 1), nano_meta)),
    }
    for name, data in seeds.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        print(name, len(data), "bytes")


if __name__ == "__main__":
    main()
