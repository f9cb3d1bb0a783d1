#!/usr/bin/python3
"""torch.nn.Transformer, one forward and backward in float64, for tests/nn/test_transformer.cpp: attend's Transformer
layers, loaded with PyTorch's weights by name, must give the same output and the same gradients (to ~1e-12).

How to regenerate (needs Debian's python3-torch, i.e. /usr/bin/python3; CI does not, the files are committed):

    cd <repository root> && /usr/bin/python3 tests/reference/make_transformer_reference.py

It rewrites tests/reference/data/transformer/, for norm = post (the paper's layers) and pre:

  <norm>.safetensors     nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                         dim_feedforward=12, dropout=0.0, batch_first=True, norm_first=(norm == "pre")).double()
                         .state_dict(), PyTorch's names ("encoder.layers.0.self_attn.in_proj_weight", ...), F64
  <norm>_io.safetensors  src (2,5,8) and tgt (2,4,8) (already embedded: the inputs of nn.Transformer.forward),
                         src_keep (2,5) 1 = real position, 0 = padding (the second sequence's last two positions),
                         r (2,4,8) random, out (2,4,8) = transformer(src, tgt, tgt_mask=causal,
                         src_key_padding_mask=~src_keep, memory_key_padding_mask=~src_keep), and the gradients of
                         loss = sum(out * r): grad.src, grad.tgt, and grad.<parameter name> for every parameter
  <norm>_weights.safetensors  every attention's weights in that forward pass, (B, H, T_q, T_k) each, as
                         MultiheadAttention returns them with need_weights=True, average_attn_weights=False:
                         encoder.<l> (2,2,5,5), decoder.<l> (2,2,4,4) causal, cross.<l> (2,2,4,5)

The module stays in training mode (dropout is 0), which keeps PyTorch off its inference fast path: that path turns a
padded batch into a nested tensor and returns zeros at padded positions, where the layers' own equations (and attend)
compute a value.
"""

import os

import torch

from make_state_dict_reference import save_safetensors

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "transformer")


def record_weights(model):
    """Makes every MultiheadAttention of model return (and keep) its weights per head; returns where they go."""
    recorded = {}
    names = {"self_attn": "decoder", "multihead_attn": "cross"}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.MultiheadAttention):
            continue
        parts = name.split(".")  # encoder.layers.<l>.self_attn, decoder.layers.<l>.{self_attn,multihead_attn}
        key = ("encoder" if parts[0] == "encoder" else names[parts[3]]) + "." + parts[2]

        def forward(*args, key=key, original=module.forward, **kwargs):
            kwargs["need_weights"] = True
            kwargs["average_attn_weights"] = False
            out, weights = original(*args, **kwargs)
            recorded[key] = weights.detach().clone()
            return out, weights

        module.forward = forward
    return recorded


def reference(norm):
    torch.manual_seed(20 if norm == "post" else 21)
    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=12,
                                 dropout=0.0, batch_first=True, norm_first=(norm == "pre")).double()
    # PyTorch initialises every bias of the attention blocks and the norms' weights to constants; random values make
    # the comparison see every one of them
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if "norm" in name and name.endswith("weight") else 0.0))
    model.train()
    src = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    tgt = torch.randn(2, 4, 8, dtype=torch.float64, requires_grad=True)
    keep = torch.ones(2, 5, dtype=torch.float64)
    keep[1, 3:] = 0.0
    pad = keep == 0.0
    causal = torch.triu(torch.full((4, 4), float("-inf"), dtype=torch.float64), diagonal=1)
    r = torch.randn(2, 4, 8, dtype=torch.float64)
    weights = record_weights(model)
    out = model(src, tgt, tgt_mask=causal, src_key_padding_mask=pad, memory_key_padding_mask=pad)
    (out * r).sum().backward()
    save_safetensors(os.path.join(DATA, norm + ".safetensors"), model.state_dict(), {"format": "pt"})
    io = {"src": src, "tgt": tgt, "src_keep": keep, "r": r, "out": out, "grad.src": src.grad, "grad.tgt": tgt.grad}
    for name, p in model.named_parameters():
        io["grad." + name] = p.grad
    save_safetensors(os.path.join(DATA, norm + "_io.safetensors"), io)
    save_safetensors(os.path.join(DATA, norm + "_weights.safetensors"), weights)


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    reference("post")
    reference("pre")
    print("wrote", ", ".join(sorted(os.listdir(DATA))), "in", DATA)
