#!/usr/bin/python3
"""bench/torch_autocast.py REFERENCE [its flags]: runs one of the PyTorch reference benchmarks of ../shared/bench
(torch_seq2seq.py, torch_transformer.py) unchanged but for PyTorch's CPU mixed precision, as its documentation
prescribes it: every forward pass of the reference's model and its loss under torch.autocast("cpu",
dtype=torch.bfloat16) — the products (linear layers, matmul, bmm) in bfloat16, the ops of autocast's float32 list in
float32 — and backward and the optimizer outside it, on the float32 master weights. It is the PyTorch side of
`bench/compare --precision bf16`; the JSON line the reference prints is passed through with "precision": "bf16" added.

Each forward pass is its own autocast region, so autocast's cache of bfloat16 weight copies lives for one forward
(the optimizer changes the weights between steps). Ops on none of autocast's CPU lists run in the dtype of their input:
in PyTorch 1.13 (checked) nn.GRU and nn.GRUCell on float32 embeddings stay float32, while softmax and layer_norm of
a linear layer's bfloat16 output stay bfloat16 (cross_entropy is cast to float32) — unlike attend's bf16, which keeps
everything but the products' operands in float32.

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_autocast.py ../shared/bench/torch_seq2seq.py --config small
"""
import contextlib
import functools
import importlib.util
import io
import json
import os
import sys

import torch
import torch.nn.functional


def autocast(function):
    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return function(*args, **kwargs)
    return wrapped


class Functional:
    """torch.nn.functional with its cross_entropy under autocast (the reference computes its loss outside the model)."""
    cross_entropy = staticmethod(autocast(torch.nn.functional.cross_entropy))

    def __getattr__(self, name):
        return getattr(torch.nn.functional, name)


def load(path):
    spec = importlib.util.spec_from_file_location("reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines; its main() runs below, not here
    models = [value for value in vars(module).values()
              if isinstance(value, type) and issubclass(value, torch.nn.Module) and value.__module__ == "reference"]
    if not models or not hasattr(module, "main") or getattr(module, "F", None) is not torch.nn.functional:
        sys.exit(f"torch_autocast: {path} is not a reference benchmark: no nn.Module class, main() or F")
    for model in models:
        model.forward = autocast(model.forward)
    module.F = Functional()
    return module


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    path = sys.argv[1]
    module = load(path)
    sys.argv = [path] + sys.argv[2:]
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        status = module.main()
    lines = captured.getvalue().splitlines()
    if not lines or not lines[-1].startswith("{"):
        sys.stdout.write(captured.getvalue())
        sys.exit(f"torch_autocast: {os.path.basename(path)} printed no JSON line")
    result = json.loads(lines[-1])
    result["precision"] = "bf16"
    print("\n".join(lines[:-1] + [json.dumps(result)]))
    return status


if __name__ == "__main__":
    sys.exit(main())
