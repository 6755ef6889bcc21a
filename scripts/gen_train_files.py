#!/usr/bin/python3
"""Write the torch-trained models in tests/data/train/ and what torch says about them.

Run with Debian's /usr/bin/python3 (torch 1.13), giving the training recipe's path:
    /usr/bin/python3 scripts/gen_train_files.py --recipe PATH/train-recipes.py [--out tests/data/train]
    or: scripts/gen-references gen_train_files --recipe PATH/train-recipes.py [--out tests/data/train]

The recipe is imported from PATH, not copied, so the files are exactly what its --save writes.
For each run below it writes
  <name>.safetensors   the recipe's save_safetensors of the trained model
and one recipe_runs.json holding, per file: task, seed, config, losses (one per step),
accuracy and head_scores as the recipe computes them, and torch's forward of one probe
sentence (BOS + PROBE) through the trained model: per layer the block input x, the attention
weights att (H, N, N) and the block's output y (before the residual add), then the final
residual stream and the task heads' logits. Floats are float32 values written as Python
floats (repr), so they read back bit for bit.
"""
import argparse
import importlib.util
import json
import os
import sys

import torch

# Small runs: enough steps that the heads have moved away from their random start, few
# enough that the files stay small and the script runs in seconds.
RUNS = [
    ("prev_s3_60", "prev", 3, 60),
    ("both_s0_200", "both", 0, 200),
    ("induction_s1_120", "induction", 1, 120),
]
PROBE = "a b c a b d"


def load_recipe(path):
    spec = importlib.util.spec_from_file_location("train_recipes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def floats(t):
    return t.detach().to(torch.float32).tolist()


@torch.no_grad()
def probe_forward(model, V, words):
    ids = [V] + [ord(w) - ord("a") for w in words]
    tok = torch.tensor([ids])
    x = model.wte(tok) + model.wpe(torch.arange(tok.shape[1]))
    layers = []
    for blk in model.h:
        y = blk(x)
        layers.append({"x": floats(x[0]), "att": floats(blk.att[0]), "y": floats(y[0])})
        x = x + y
    out = {"tokens": ids, "layers": layers, "h_out": floats(x[0]), "logits": {}}
    if hasattr(model, "head_prev"):
        out["logits"]["prev"] = floats(model.head_prev(x)[0])
    if hasattr(model, "head_dup"):
        out["logits"]["dup"] = floats(model.head_dup(x)[0])
    if hasattr(model, "lm_head"):
        out["logits"]["next"] = floats(model.lm_head(x)[0])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipe", required=True, help="path of the training recipe (train-recipes.py)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "train"))
    a = ap.parse_args()
    recipe = load_recipe(a.recipe)
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    runs = {}
    for name, task, seed, steps in RUNS:
        model, cfg, losses = recipe.train(task, seed, steps)
        V, T = cfg["V"], cfg["T"]
        recipe.save_safetensors(os.path.join(a.out, name + ".safetensors"), model, cfg, task)
        runs[name] = {
            "task": task, "seed": seed, "config": cfg, "losses": losses,
            "accuracy": recipe.accuracy(model, task, V, T),
            "head_scores": recipe.head_scores(model, V, T),
            "probe": dict(text=PROBE, **probe_forward(model, V, PROBE.split())),
        }
        print(name, "final loss", losses[-1], runs[name]["accuracy"], file=sys.stderr)
    with open(os.path.join(a.out, "recipe_runs.json"), "w") as f:
        json.dump({"torch": torch.__version__, "probe": PROBE, "runs": runs}, f)


if __name__ == "__main__":
    main()
