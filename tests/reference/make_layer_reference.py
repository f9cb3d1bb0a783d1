#!/usr/bin/python3
"""PyTorch reference values for the layer tests in tests/nn/test_recurrent.cpp.

How to regenerate (needs Debian's python3-torch and python3-numpy, i.e. /usr/bin/python3, not a pyenv python3;
CI does not need PyTorch because the generated files are committed):

    cd <repository root> && /usr/bin/python3 tests/reference/make_layer_reference.py

It rewrites the folders tests/reference/data/<case>/ listed in CASES (and only those: optim_* belongs to another
script), one small .npy file per tensor: float32 for values, int64 for ids, lengths and targets. Everything is seeded,
so a rerun with the same PyTorch gives the same files.

Each case draws its weights and inputs in float32 (PyTorch's default initialisation), then computes outputs and
gradients in float64 from exactly those float32 values and stores them rounded to float32. The expected values are
therefore correct to float32 rounding, and the C++ tests' tolerance (atol 1e-6 + rtol 1e-5) is spent on attend's own
float32 rounding only.

Gradients are those of a fixed random-weighted sum of the outputs, loss = sum(w * y) (+ sum(w_c * c) ...), so that
mistakes which are symmetric across elements still show. File names follow attend's parameter names
(parameters() of the C++ module), so a test can copy weights and compare gradients by name:

  linear/            x (2,3,4), W (5,4), b (5), w (2,3,5); y, grad.x, grad.W, grad.b        torch.nn.Linear
  embedding/         W (6,3) with padding row 0, ids (2,4) int64, w; y, grad.W     torch.nn.Embedding(padding_idx=0)
  rnn_tanh_cell/     x (3,4), h (3,5), W_ih, W_hh, b_ih, b_hh, w_h; h_next, grad.*          torch.nn.RNNCell(tanh)
  rnn_relu_cell/     the same with nonlinearity='relu'
  gru_cell/          the same, gates r, z, n stacked (15 rows)                              torch.nn.GRUCell
  lstm_cell/         plus c, w_c; c_next, grad.c; gates i, f, g, o stacked (20 rows)         torch.nn.LSTMCell
  encoder_gru/       Embedding(7, 4, padding_idx=0) + GRU(4, 3, num_layers=2, bidirectional=True, batch_first=True)
                     over ids (4,5) with lengths [4,1,5,2] through pack_padded_sequence(enforce_sorted=False):
                     ids, lengths, embedding.W, rnn.layers.<l>.<forward|backward>.<W_ih|W_hh|b_ih|b_hh>,
                     w_outputs, w_h_n; outputs (4,5,6) (zero at padded positions), h_n (4,4,3), grad.<every parameter>
  encoder_lstm/      the same with an LSTM, plus w_c_n, c_n
  cross_entropy/     logits (2,4,5), targets (2,4) int64 with padding id 0 as ignore_index;
                     loss and grad.logits, and loss_smoothed, grad.logits_smoothed with label_smoothing=0.1

Name mapping for the stacked recurrent layers (torch -> attend):
  weight_ih_l{k} -> rnn.layers.{k}.forward.W_ih      weight_ih_l{k}_reverse -> rnn.layers.{k}.backward.W_ih
  weight_hh_l{k} -> ...W_hh   bias_ih_l{k} -> ...b_ih   bias_hh_l{k} -> ...b_hh
"""

import os
import shutil

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CASES = ["linear", "embedding", "rnn_tanh_cell", "rnn_relu_cell", "gru_cell", "lstm_cell", "encoder_gru",
         "encoder_lstm", "cross_entropy"]


def save(case, name, tensor):
    """Writes one tensor as tests/reference/data/<case>/<name>.npy: int64 stays int64, everything else float32."""
    array = tensor.detach().cpu().numpy() if isinstance(tensor, torch.Tensor) else np.asarray(tensor)
    array = array.astype(np.int64 if array.dtype.kind in "iu" else np.float32)
    np.save(os.path.join(DATA, case, name + ".npy"), np.ascontiguousarray(array))


def f32(*shape):
    """Standard-normal float32 values (the stored inputs), returned as float64 for the computation."""
    return torch.randn(*shape, dtype=torch.float32).double()


def linear_case():
    torch.manual_seed(1)
    layer = torch.nn.Linear(4, 5)  # float32 default init, then computed in float64
    layer.double()
    x = f32(2, 3, 4).requires_grad_()
    w = f32(2, 3, 5)
    y = layer(x)
    (w * y).sum().backward()
    for name, t in [("x", x), ("W", layer.weight), ("b", layer.bias), ("w", w), ("y", y), ("grad.x", x.grad),
                    ("grad.W", layer.weight.grad), ("grad.b", layer.bias.grad)]:
        save("linear", name, t)


def embedding_case():
    torch.manual_seed(2)
    layer = torch.nn.Embedding(6, 3, padding_idx=0)
    layer.double()
    ids = torch.tensor([[3, 1, 3, 0], [5, 2, 0, 0]], dtype=torch.int64)  # a repeated id and padding
    w = f32(2, 4, 3)
    y = layer(ids)
    (w * y).sum().backward()
    for name, t in [("W", layer.weight), ("ids", ids), ("w", w), ("y", y), ("grad.W", layer.weight.grad)]:
        save("embedding", name, t)


def cell_case(case, make_cell, seed, lstm=False):
    """One step of a cell from (x, h) or (x, (h, c)) with random float32 weights and inputs."""
    torch.manual_seed(seed)
    batch, input_size, hidden_size = 3, 4, 5
    cell = make_cell(input_size, hidden_size)  # PyTorch's default init U(-1/sqrt(H), 1/sqrt(H)) in float32
    cell.double()
    x = f32(batch, input_size).requires_grad_()
    h = f32(batch, hidden_size).requires_grad_()
    w_h = f32(batch, hidden_size)
    tensors = [("x", x), ("h", h)]
    if lstm:
        c = f32(batch, hidden_size).requires_grad_()
        w_c = f32(batch, hidden_size)
        h_next, c_next = cell(x, (h, c))
        loss = (w_h * h_next).sum() + (w_c * c_next).sum()
        tensors += [("c", c), ("w_c", w_c), ("c_next", c_next)]
    else:
        h_next = cell(x, h)
        loss = (w_h * h_next).sum()
    loss.backward()
    tensors += [("w_h", w_h), ("h_next", h_next), ("grad.x", x.grad), ("grad.h", h.grad)]
    if lstm:
        tensors.append(("grad.c", c.grad))
    for ours, theirs in [("W_ih", cell.weight_ih), ("W_hh", cell.weight_hh), ("b_ih", cell.bias_ih),
                         ("b_hh", cell.bias_hh)]:
        tensors += [(ours, theirs), ("grad." + ours, theirs.grad)]
    for name, t in tensors:
        save(case, name, t)


def cell_cases():
    cell_case("rnn_tanh_cell", lambda i, h: torch.nn.RNNCell(i, h, nonlinearity="tanh"), 3)
    cell_case("rnn_relu_cell", lambda i, h: torch.nn.RNNCell(i, h, nonlinearity="relu"), 4)
    cell_case("gru_cell", torch.nn.GRUCell, 5)
    cell_case("lstm_cell", torch.nn.LSTMCell, 6, lstm=True)


def encoder_case(case, rnn_class, seed):
    """Embedding (padding id 0) + a 2-layer bidirectional recurrent stack over a ragged, unsorted batch."""
    torch.manual_seed(seed)
    vocab, embedding_dim, hidden_size, num_layers = 7, 4, 3, 2
    lengths = torch.tensor([4, 1, 5, 2], dtype=torch.int64)
    batch, time = len(lengths), int(lengths.max())
    embedding = torch.nn.Embedding(vocab, embedding_dim, padding_idx=0)
    rnn = rnn_class(embedding_dim, hidden_size, num_layers=num_layers, bidirectional=True, batch_first=True)
    embedding.double()
    rnn.double()
    ids = torch.randint(1, vocab, (batch, time), dtype=torch.int64)
    for b, n in enumerate(lengths.tolist()):
        ids[b, n:] = 0  # padding
    lstm = rnn_class is torch.nn.LSTM
    w_outputs = f32(batch, time, 2 * hidden_size)
    w_h_n = f32(2 * num_layers, batch, hidden_size)
    w_c_n = f32(2 * num_layers, batch, hidden_size) if lstm else None

    packed = pack_padded_sequence(embedding(ids), lengths, batch_first=True, enforce_sorted=False)
    packed_out, state = rnn(packed)
    outputs, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=time)
    h_n, c_n = state if lstm else (state, None)
    loss = (w_outputs * outputs).sum() + (w_h_n * h_n).sum()
    if lstm:
        loss = loss + (w_c_n * c_n).sum()
    loss.backward()
    assert torch.all(outputs[1, 1:] == 0), "padded positions must be zero"

    params = [("embedding.W", embedding.weight)]
    for layer in range(num_layers):
        for direction, suffix in [("forward", ""), ("backward", "_reverse")]:
            for ours, theirs in [("W_ih", "weight_ih"), ("W_hh", "weight_hh"), ("b_ih", "bias_ih"),
                                 ("b_hh", "bias_hh")]:
                params.append((f"rnn.layers.{layer}.{direction}.{ours}", getattr(rnn, f"{theirs}_l{layer}{suffix}")))
    tensors = [("ids", ids), ("lengths", lengths), ("w_outputs", w_outputs), ("w_h_n", w_h_n), ("outputs", outputs),
               ("h_n", h_n)]
    if lstm:
        tensors += [("w_c_n", w_c_n), ("c_n", c_n)]
    for name, p in params:
        tensors += [(name, p), ("grad." + name, p.grad)]
    for name, t in tensors:
        save(case, name, t)


def cross_entropy_case():
    torch.manual_seed(10)
    logits = (3 * f32(2, 4, 5)).requires_grad_()
    targets = torch.tensor([[2, 4, 1, 0], [3, 0, 0, 0]], dtype=torch.int64)  # 0 is the padding id
    save("cross_entropy", "logits", logits)
    save("cross_entropy", "targets", targets)
    for suffix, smoothing in [("", 0.0), ("_smoothed", 0.1)]:
        logits.grad = None
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), targets.reshape(-1), ignore_index=0,
                                                 label_smoothing=smoothing)
        loss.backward()
        save("cross_entropy", "loss" + suffix, loss)
        save("cross_entropy", "grad.logits" + suffix, logits.grad)


def main():
    for case in CASES:
        shutil.rmtree(os.path.join(DATA, case), ignore_errors=True)
        os.makedirs(os.path.join(DATA, case))
    linear_case()
    embedding_case()
    cell_cases()
    encoder_case("encoder_gru", torch.nn.GRU, 8)
    encoder_case("encoder_lstm", torch.nn.LSTM, 9)
    cross_entropy_case()
    for case in CASES:
        folder = os.path.join(DATA, case)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"{case:16s} {len(os.listdir(folder)):3d} files {size:6d} bytes")


if __name__ == "__main__":
    main()
