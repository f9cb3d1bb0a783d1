#!/usr/bin/python3
"""PyTorch state_dicts, as PyTorch users save them, for the load-by-name tests (tests/nn/test_load.cpp and
tests/models/test_attention.cpp) and the examples of docs/reference/nn.md.

How to regenerate (needs Debian's python3-torch, i.e. /usr/bin/python3; CI does not, the files are committed):

    cd <repository root> && /usr/bin/python3 tests/reference/make_state_dict_reference.py

It rewrites tests/reference/data/state_dicts/. Every file is a safetensors file exactly as
safetensors.torch.save_file(tensors, path, metadata={"format": "pt"}) writes it (Debian has no python3-safetensors,
so the few lines of that format are written here: 8-byte little-endian header length, the JSON header padded with
spaces to a multiple of 8 bytes, then each tensor's little-endian bytes packed in the header's order):

  gru_cell.safetensors       torch.nn.GRUCell(4, 5).state_dict(): weight_ih (15,4), weight_hh (15,5), bias_ih,
                             bias_hh (15) — PyTorch's names, which attend's GruCell calls W_ih, W_hh, b_ih, b_hh
  gru_cell_io.safetensors    x (3,4), h (3,5) and the cell's output h_next (3,5)
  additive.safetensors       the state_dict of d2l.ai's AdditiveAttention (Bahdanau's score; d2l's names):
                             W_q.weight (6,5) = attend's W_a, W_k.weight (6,4) = U_a, w_v.weight (1,6) = v_a
  additive_io.safetensors    query (2,5) (the decoder state s), keys (2,3,4) (the annotations h_i) and the scores
                             e (2,3) = w_v(tanh(W_q s + W_k h_i))

Weights and inputs are drawn in float32 (PyTorch's default initialisation, fixed seeds); the expected outputs are
computed in float64 from exactly those float32 values and stored rounded to float32, so a test's tolerance is spent on
attend's float32 rounding alone.
"""

import json
import os
import struct

import torch

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "state_dicts")
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}


def save_safetensors(path, tensors, metadata=None):
    """Writes `tensors` (name -> torch.Tensor, in order) as safetensors.torch.save_file would."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, tensor in tensors.items():
        array = tensor.detach().cpu().contiguous().numpy()
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": DTYPES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


class AdditiveAttention(torch.nn.Module):
    """d2l.ai's additive attention scoring (chapter "Attention Scoring Functions"), scores only: no masking, no value."""

    def __init__(self, key_size, query_size, num_hiddens):
        super().__init__()
        self.W_k = torch.nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = torch.nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = torch.nn.Linear(num_hiddens, 1, bias=False)

    def forward(self, queries, keys):  # queries (B, Q), keys (B, S, K) -> scores (B, S)
        features = torch.tanh(self.W_q(queries).unsqueeze(1) + self.W_k(keys))
        return self.w_v(features).squeeze(-1)


def gru_cell():
    torch.manual_seed(11)
    cell = torch.nn.GRUCell(4, 5)
    x, h = torch.randn(3, 4), torch.randn(3, 5)
    save_safetensors(os.path.join(DATA, "gru_cell.safetensors"), cell.state_dict(), {"format": "pt"})
    with torch.no_grad():
        h_next = cell.double()(x.double(), h.double()).float()
    save_safetensors(os.path.join(DATA, "gru_cell_io.safetensors"), {"x": x, "h": h, "h_next": h_next})


def additive():
    torch.manual_seed(12)
    score = AdditiveAttention(key_size=4, query_size=5, num_hiddens=6)
    query, keys = torch.randn(2, 5), torch.randn(2, 3, 4)
    save_safetensors(os.path.join(DATA, "additive.safetensors"), score.state_dict(), {"format": "pt"})
    with torch.no_grad():
        e = score.double()(query.double(), keys.double()).float()
    save_safetensors(os.path.join(DATA, "additive_io.safetensors"), {"query": query, "keys": keys, "e": e})


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    gru_cell()
    additive()
    print("wrote", ", ".join(sorted(os.listdir(DATA))), "in", DATA)
