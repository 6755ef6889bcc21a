#!/usr/bin/python3
"""Writes the training engine's PyTorch reference data into tests/data/train/, from the training
recipe (the specification of the toy models, their data, loss, optimiser and head scores):

    /usr/bin/python3 scripts/gen_train_reference.py --recipe PATH/train-recipes.py [--out DIR]
    or: scripts/gen-references gen_train_reference --recipe PATH/train-recipes.py [--out DIR]

Run with Debian's python3-torch (1.13). Like gen_reference.py it re-executes itself with the
reference BLAS first on the library path, one thread and CPU capability AVX2, and checks that torch's
sgemm_ is that BLAS's: OpenBLAS computes some rows of a product (the last of 17, for one) in another
order, and the forward traces here are compared bit for bit. Tensors are stored as base64 of their little-endian float32
bytes (exact, and a third of the size of decimal text); scalars are JSON numbers (Python's repr).

  random.json      torch.randint draws and make_batch's batches (tokens and targets)
  grads_TASK.json  initial weights and step-0 loss and gradients of every parameter, for the task's
                   default sizes and for one other configuration
  losses.json      the first 50 losses of every task's default run, seeds 0 and 1
  trained.json     two models trained by the recipe: weights, head scores, accuracy, and a forward
                   of one sequence (every block's input, qkv, attention weights, output; logits)
"""
import argparse, base64, importlib.util, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_reference import check_blas, pin_environment  # noqa: E402

torch = None  # imported in main(), once the environment is pinned


def b64(t):
    return base64.b64encode(t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()).decode()


def load_recipe(path):
    spec = importlib.util.spec_from_file_location("recipe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NAMES = {"wte.weight": "transformer.wte.weight", "wpe.weight": "transformer.wpe.weight"}


def file_name(k):
    # the recipe's save_safetensors names (nanoGPT's)
    if k.startswith("h."):
        l, rest = k[2:].split(".", 1)
        return f"transformer.h.{l}.attn." + {"qkv.weight": "c_attn.weight", "proj.weight": "c_proj.weight"}[rest]
    return NAMES.get(k, k)


def named_params(model):
    return [(file_name(k), p) for k, p in model.named_parameters()]


def config_json(cfg):
    return {k: cfg[k] for k in ("V", "T", "C", "H", "L", "B", "lr")}


# One configuration per task that is not its default: other V, T, C, H and L, and a batch that
# does not split evenly, so nothing is fitted to the defaults.
OTHER = {
    "prev": dict(V=7, T=10, C=32, H=2, L=2, B=13),
    "dup": dict(V=7, T=10, C=32, H=4, L=1, B=13),
    "both": dict(V=7, T=10, C=32, H=2, L=2, B=13),
    "induction": dict(V=7, T=10, C=32, H=4, L=3, B=13),
}


def step0(R, task, cfg, seed, with_init):
    torch.manual_seed(seed)
    model = R.ToyModel(task, cfg["V"], cfg["T"], cfg["C"], cfg["H"], cfg["L"])
    init = {n: b64(p) for n, p in named_params(model)} if with_init else None
    g = torch.Generator().manual_seed(seed + 1)
    batch = R.make_batch(task, g, cfg["V"], cfg["T"], cfg["B"])
    loss = R.loss_of(model, batch)
    loss.backward()
    out = {"config": config_json(cfg), "seed": seed, "loss": loss.item(),
           "params": [n for n, _ in named_params(model)],
           "grads": {n: b64(p.grad) for n, p in named_params(model)}}
    if init is not None:
        out["init"] = init
    return out


def forward_trace(model, tok):
    """B = 1: every block's input x, qkv, attention weights and output y (before the residual)."""
    with torch.no_grad():
        x = model.wte(tok) + model.wpe(torch.arange(tok.shape[1]))
        layers = []
        for blk in model.h:
            qkv = blk.qkv(x)
            y = blk(x)
            layers.append({"x": b64(x[0]), "qkv": b64(qkv[0]), "probs": b64(blk.att[0]), "y": b64(y[0])})
            x = x + y
        out = {"tokens": tok[0].tolist(), "layers": layers, "h_out": b64(x[0])}
        for head in ("head_prev", "head_dup", "lm_head"):
            if hasattr(model, head):
                out[head] = b64(getattr(model, head)(x)[0])
    return out


def trained(R, task, seed, steps, over):
    model, cfg, losses = R.train(task, seed, steps, **over)
    V, T = cfg["V"], cfg["T"]
    g = torch.Generator().manual_seed(99)
    tok = torch.cat([torch.full((1, 1), V), torch.randint(0, V, (1, T), generator=g)], 1)
    return {"task": task, "seed": seed, "steps": steps, "config": config_json(cfg),
            "final_loss": losses[-1],
            "weights": {n: b64(p) for n, p in named_params(model)},
            "accuracy": R.accuracy(model, task, V, T),
            "head_scores": R.head_scores(model, V, T),
            "forward": forward_trace(model, tok)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipe", required=True, help="the training recipe (train-recipes.py)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "train"))
    a = ap.parse_args()
    pin_environment()
    global torch
    import torch as torch_module
    torch = torch_module
    check_blas(torch)
    R = load_recipe(a.recipe)
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)

    def write(name, obj):
        with open(os.path.join(a.out, name), "w") as f:
            json.dump(obj, f, separators=(",", ":"))
        print(name, os.path.getsize(os.path.join(a.out, name)), "bytes", file=sys.stderr)

    # randint draws, then batches of every task from one generator each
    g = torch.Generator().manual_seed(7)
    draws = [{"low": 0, "high": 16, "values": torch.randint(0, 16, (20,), generator=g).tolist()},
             {"low": 3, "high": 12, "values": torch.randint(3, 12, (9,), generator=g).tolist()},
             {"low": 0, "high": 2, "values": torch.randint(0, 2, (9,), generator=g).tolist()},
             {"low": -5, "high": 1000003, "values": torch.randint(-5, 1000003, (9,), generator=g).tolist()}]
    batches = []
    for task, V, T, B in (("both", 7, 10, 5), ("prev", 16, 16, 3), ("dup", 5, 12, 4),
                          ("induction", 7, 10, 6), ("induction", 16, 24, 4)):
        g = torch.Generator().manual_seed(11)
        first = R.make_batch(task, g, V, T, B)
        second = R.make_batch(task, g, V, T, B)  # the generator carries on between batches
        batches.append({"task": task, "V": V, "T": T, "B": B, "seed": 11,
                        "batches": [{k: v.long().tolist() for k, v in b.items()} for b in (first, second)]})
    write("random.json", {"randint_seed": 7, "randint": draws, "make_batch": batches})

    for task in R.TASKS:
        cfg = dict(R.TASKS[task])
        other = dict(cfg); other.update(OTHER[task])
        write(f"grads_{task}.json", {"task": task, "cases": [step0(R, task, cfg, 0, False),
                                                             step0(R, task, other, 3, True)]})

    runs = []
    for task in R.TASKS:
        for seed in (0, 1):
            _, cfg, losses = R.train(task, seed, 50)
            runs.append({"task": task, "seed": seed, "config": config_json(cfg), "losses": losses})
    write("losses.json", {"runs": runs})

    write("trained.json", {"models": [trained(R, "both", 0, 300, {}),
                                      trained(R, "induction", 2, 200, dict(V=7, T=10, C=32, H=2, L=2))]})


if __name__ == "__main__":
    main()
