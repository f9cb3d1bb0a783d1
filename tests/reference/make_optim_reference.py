#!/usr/bin/python3
# PyTorch reference values for the optimizer tests (tests/nn/test_optim.cpp): three steps of each optimizer case on two
# parameters w (3, 4) and b (4,), and one gradient clipping.
#
# Regenerate, from the repository root, with Debian's python3-torch (1.13) and NumPy (not a pyenv python):
#   /usr/bin/python3 tests/reference/make_optim_reference.py
# It rewrites tests/reference/data/optim_<case>/*.npy (float32, a few KB in all); commit them with this script.
# The output is deterministic: fixed initial values and a fixed loss, no random numbers.
#
# Each optimizer case folder holds
#   init_w (3,4), init_b (4,)     the parameters before the first step
#   grad_w (3,3,4), grad_b (3,4)  the gradients PyTorch used at steps 1..3 (the C++ test replays these)
#   w (3,3,4), b (3,4)            the parameters after steps 1..3
#   state_<quantity>_<w|b>        the optimizer's state after step 3 (momentum_buffer, exp_avg, exp_avg_sq, ...)
# The gradient of step k is that of loss_k = s_k · f(w, b) at the current parameters, with s = (1, 0.05, 2): the small
# second step makes the second moment shrink, so amsgrad's running maximum matters.
# The hyper-parameters below are repeated in make_optimizer() of test_optim.cpp; change both together.
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")

INIT_W = [[0.5, -1.2, 2.5, -0.07],
          [1e-3, 3.0, -2.2, 0.8],
          [-0.4, 0.15, -3.1, 1.7]]
INIT_B = [0.3, -0.7, 4e-3, -1.5]
# Coefficients of f: each element gets a different curvature, so the updates differ element by element.
A = [[1.0, 0.5, 2.0, 0.1],
     [3.0, 0.2, 1.5, 0.7],
     [0.4, 2.5, 0.3, 1.2]]
B = [[0.2, -0.1, 0.05, 0.3],
     [-0.2, 0.1, 0.15, -0.05],
     [0.1, 0.25, -0.02, 0.12]]
D = [0.5, 2.0, 1.0, 0.25]
SCALES = [1.0, 0.05, 2.0]

# case name -> (optimizer class, keyword arguments)
CASES = {
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    "sgd_nesterov": (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "sgd_dampening": (torch.optim.SGD, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    "adam": (torch.optim.Adam, dict(lr=0.01)),
    "adam_weight_decay": (torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.1)),
    "adam_amsgrad": (torch.optim.Adam, dict(lr=0.01, betas=(0.9, 0.9), amsgrad=True)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
}


def f(w, b):
    a, bb, d = (torch.tensor(x, dtype=torch.float32) for x in (A, B, D))
    return (0.5 * (a * w * w).sum() + (bb * w ** 3).sum() / 3 + torch.tanh(w @ b).sum()
            + 0.5 * (d * b * b).sum())


def save(folder, name, array):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(array, dtype=np.float32))


def run_case(name, optimizer_class, kwargs):
    w = torch.tensor(INIT_W, dtype=torch.float32, requires_grad=True)
    b = torch.tensor(INIT_B, dtype=torch.float32, requires_grad=True)
    folder = os.path.join(DATA, "optim_" + name)
    save(folder, "init_w", w.detach().numpy())
    save(folder, "init_b", b.detach().numpy())
    optimizer = optimizer_class([w, b], **kwargs)
    grads_w, grads_b, ws, bs = [], [], [], []
    for scale in SCALES:
        optimizer.zero_grad()
        (scale * f(w, b)).backward()
        grads_w.append(w.grad.detach().clone().numpy())
        grads_b.append(b.grad.detach().clone().numpy())
        optimizer.step()
        ws.append(w.detach().clone().numpy())
        bs.append(b.detach().clone().numpy())
    save(folder, "grad_w", np.stack(grads_w))
    save(folder, "grad_b", np.stack(grads_b))
    save(folder, "w", np.stack(ws))
    save(folder, "b", np.stack(bs))
    for param, suffix in ((w, "w"), (b, "b")):
        for quantity, value in optimizer.state[param].items():
            if quantity != "step":
                save(folder, "state_" + quantity + "_" + suffix, value.numpy())
    check_conditioning(name, optimizer_class, kwargs, grads_w, grads_b, ws, bs, optimizer.state, (w, b))


def check_conditioning(name, optimizer_class, kwargs, grads_w, grads_b, ws, bs, state, params):
    # The same steps in float64 from the same (float32) gradients must agree with the float32 results to 2e-6
    # relative, element by element: no value may come from a cancellation (w ≈ its own update) that float32
    # rounding would dominate. Otherwise a 1e-5 relative comparison in C++ would test rounding, not the optimizer.
    w = torch.tensor(INIT_W, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(INIT_B, dtype=torch.float64, requires_grad=True)
    optimizer = optimizer_class([w, b], **kwargs)
    for k in range(len(SCALES)):
        w.grad = torch.from_numpy(grads_w[k]).double()
        b.grad = torch.from_numpy(grads_b[k]).double()
        optimizer.step()
        for exact, rounded, label in ((w, ws[k], "w"), (b, bs[k], "b")):
            check_relative_error(name, f"{label} after step {k + 1}", exact, rounded)
    for exact_param, param, label in ((w, params[0], "w"), (b, params[1], "b")):
        for quantity, value in state[param].items():
            if quantity != "step":
                check_relative_error(name, f"{quantity} of {label}", optimizer.state[exact_param][quantity], value)


def check_relative_error(name, what, exact, rounded):
    exact = exact.detach().numpy()
    rounded = rounded.detach().numpy() if isinstance(rounded, torch.Tensor) else rounded
    worst = np.max(np.abs(exact - rounded) / np.abs(exact))
    if not worst < 2e-6:
        raise SystemExit(f"{name}: {what} is ill-conditioned in float32 (relative error {worst:.2g}); "
                         "change INIT_W / INIT_B")


def run_clip():
    # clip_grad_norm_ of two fixed gradients whose global norm (≈ 8.4) is above max_norm = 2.5
    folder = os.path.join(DATA, "optim_clip")
    w = torch.zeros(3, 4, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    w.grad = torch.tensor(B, dtype=torch.float32) * 10 + torch.tensor(A, dtype=torch.float32)
    b.grad = torch.tensor(D, dtype=torch.float32) - 1
    save(folder, "grad_w", w.grad.numpy())
    save(folder, "grad_b", b.grad.numpy())
    norm = torch.nn.utils.clip_grad_norm_([w, b], max_norm=2.5)
    save(folder, "norm", norm.reshape(1).numpy())
    save(folder, "clipped_w", w.grad.numpy())
    save(folder, "clipped_b", b.grad.numpy())


def main():
    torch.set_num_threads(1)
    for name, (optimizer_class, kwargs) in CASES.items():
        run_case(name, optimizer_class, kwargs)
    run_clip()
    print("torch", torch.__version__, "->", DATA)


if __name__ == "__main__":
    main()
