#!/usr/bin/python3
"""Same computation check for bench/seq2seq and bench/transformer: both programs train the benchmark model from the
same initial weights on the same batch, and their losses must agree (issues 7 and 20: to 1e-4 relative after 30 steps).

This script builds the reference model of ../shared/bench/torch_seq2seq.py (imported from there, not copied), writes
its initial weights and its random batch to a safetensors file under attend's parameter names, trains it for --steps
steps exactly as the reference does (zero_grad, forward, mean cross-entropy, backward, Adam lr 1e-3), then runs
`build/bench/seq2seq --init FILE --losses` on the same file and compares the two loss curves step by step.
Prints one JSON line; exits 1 when the last losses differ by more than --tolerance (relative).

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_same_loss.py --config small --cell gru --attn bahdanau

With --model transformer the reference is ../shared/bench/torch_transformer.py's TransformerSeq2seq (--norm post|pre,
--pad N padded source positions in every second sequence, as there); the file holds its initial state_dict under
PyTorch's own names (bench/transformer maps them) and the batch, and `build/bench/transformer` trains from it:

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_same_loss.py --model transformer --norm pre --pad 8
"""
import argparse
import importlib.util
import json
import os
import struct
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "shared", "bench", "torch_seq2seq.py")
TRANSFORMER_REFERENCE = os.path.join(HERE, "..", "..", "shared", "bench", "torch_transformer.py")


def load_reference(path):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def attend_names(cell_is_lstm, attn):
    """torch state_dict name -> attend parameter name (bench/seq2seq.cpp's BenchModel)."""
    del cell_is_lstm
    names = {
        "src_emb.weight": "src_emb.W",
        "tgt_emb.weight": "tgt_emb.W",
        "encoder.weight_ih_l0": "encoder.layers.0.forward.W_ih",
        "encoder.weight_hh_l0": "encoder.layers.0.forward.W_hh",
        "encoder.bias_ih_l0": "encoder.layers.0.forward.b_ih",
        "encoder.bias_hh_l0": "encoder.layers.0.forward.b_hh",
        "decoder.weight_ih": "decoder.W_ih",
        "decoder.weight_hh": "decoder.W_hh",
        "decoder.bias_ih": "decoder.b_ih",
        "decoder.bias_hh": "decoder.b_hh",
        "out.weight": "out.W",
        "out.bias": "out.b",
    }
    if attn == "bahdanau":
        names.update({"W.weight": "W.W", "U.weight": "U.W", "U.bias": "U.b", "v.weight": "v.W"})
    else:
        names.update({"Wg.weight": "Wg.W"})
    return names


def write_safetensors(path, tensors, dtype=torch.float32):
    """tensors: name -> torch tensor, written as `dtype` (float32 or float64). The safetensors layout: 8-byte
    little-endian header length, the JSON header (padded with spaces to a multiple of 8), then the raw data in header
    order."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().to(dtype).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F64" if dtype == torch.float64 else "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def train_torch(model, src, tgt_in, tgt_out, vocab, steps, src_pad=None):
    """The reference's training step, `steps` times: zero_grad, forward, mean cross-entropy, backward, Adam lr 1e-3."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt_in) if src_pad is None else model(src, tgt_in, src_pad)
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def run_attend(command, steps):
    """Runs an attend benchmark with --losses and returns its first `steps` losses."""
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit("torch_same_loss: %s failed: %s" % (command[0], run.stderr.strip()))
    return json.loads(run.stdout.strip().splitlines()[-1])["losses"][:steps]


def compare(result, torch_losses, attend_losses, tolerance):
    """Prints the JSON line; 0 when the last losses agree to `tolerance` (relative)."""
    rel = [abs(a - b) / abs(b) for a, b in zip(attend_losses, torch_losses)]
    result.update(torch_first=torch_losses[0], attend_first=attend_losses[0], torch_last=torch_losses[-1],
                  attend_last=attend_losses[-1], rel_diff_last=rel[-1], rel_diff_max=max(rel), tolerance=tolerance,
                  ok=len(attend_losses) == len(torch_losses) and rel[-1] <= tolerance)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def same_loss_transformer(args):
    ref = load_reference(args.reference or TRANSFORMER_REFERENCE)
    cfg = ref.CONFIGS[args.config]
    B, S, T, D, NH, Fdim, L = (cfg[k] for k in ["B", "S", "T", "D", "NH", "F", "L"])
    model = ref.TransformerSeq2seq(D, NH, Fdim, L, args.norm == "pre")
    g = torch.Generator().manual_seed(args.seed + 1)
    src = torch.randint(0, ref.SRC_VOCAB, (B, S), generator=g)
    tgt = torch.randint(0, ref.TGT_VOCAB, (B, T + 1), generator=g)
    src_pad = None
    tensors = dict(model.state_dict())
    tensors["batch.src"] = src.to(torch.float32)
    tensors["batch.tgt"] = tgt.to(torch.float32)
    if args.pad > 0:
        src_pad = torch.zeros(B, S, dtype=torch.bool)
        src_pad[1::2, S - args.pad:] = True
        tensors["batch.src_keep"] = (~src_pad).to(torch.float32)  # attend's mask: 1 = a real position
    write_safetensors(args.file, tensors, torch.float64 if args.double else torch.float32)
    if args.double:  # the float32 initial weights, computed in float64 from there (as bench/transformer --double)
        model = model.double()
        p = torch.arange(model.pe.shape[0], dtype=torch.float64)[:, None]  # the positions computed in float64 too
        angle = p / torch.pow(10000.0, torch.arange(0, D, 2, dtype=torch.float64)[None, :] / D)
        model.pe = torch.stack([torch.sin(angle), torch.cos(angle)], dim=2).reshape(model.pe.shape[0], D)
    torch_losses = train_torch(model, src, tgt[:, :-1], tgt[:, 1:], ref.TGT_VOCAB, args.steps, src_pad)
    attend = args.attend or os.path.join(HERE, "..", "build", "bench", "transformer")
    attend_losses = run_attend([attend, "--config", args.config, "--norm", args.norm, "--pad", str(args.pad),
                                "--init", args.file, "--losses", "--warmup", "0", "--steps", str(args.steps),
                                "--threads", str(args.attend_threads), "--no-blas-bound"] +
                               (["--double"] if args.double else []), args.steps)
    result = dict(model="transformer", config=args.config, norm=args.norm, pad=args.pad, steps=args.steps,
                  dtype="float64" if args.double else "float32")
    return compare(result, torch_losses, attend_losses, args.tolerance)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["seq2seq", "transformer"], default="seq2seq")
    ap.add_argument("--config", choices=["small", "large"], default="small")
    ap.add_argument("--cell", choices=["gru", "lstm"], default="gru")
    ap.add_argument("--attn", choices=["bahdanau", "general"], default="bahdanau")
    ap.add_argument("--norm", choices=["post", "pre"], default="post", help="transformer: post- or pre-norm")
    ap.add_argument("--pad", type=int, default=0, help="transformer: padded source positions in every second sequence")
    ap.add_argument("--double", action="store_true",
                    help="transformer: both sides compute in float64 from the float32 initial weights; post-norm "
                         "training amplifies float32 rounding (PyTorch's own float32 run differs from its float64 run "
                         "by ~1e-2 relative within 30 steps), so the exact same-computation check is in float64")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    ap.add_argument("--attend-threads", type=int, default=2,
                    help="the attend program's --threads (2: two batch shards)")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--reference", help="path of torch_seq2seq.py or torch_transformer.py (default: ../shared/bench/)")
    ap.add_argument("--attend", help="the built bench/seq2seq or bench/transformer (default: build/bench/)")
    ap.add_argument("--file", default="/tmp/attend_same_loss.safetensors", help="where to write the weights and batch")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.model == "transformer":
        return same_loss_transformer(args)
    ref = load_reference(args.reference or REFERENCE)
    cfg = ref.CONFIGS[args.config]
    B, S, T, E, H = (cfg[k] for k in "BSTEH")
    model = ref.Seq2SeqAttn(E, H, args.cell, args.attn, "fused", False)
    g = torch.Generator().manual_seed(args.seed + 1)
    src = torch.randint(0, ref.SRC_VOCAB, (S, B), generator=g)
    tgt = torch.randint(0, ref.TGT_VOCAB, (T + 1, B), generator=g)

    names = attend_names(args.cell == "lstm", args.attn)
    state = model.state_dict()
    if set(state) != set(names):
        sys.exit("torch_same_loss: the reference model's parameters changed: %s" % sorted(set(state) ^ set(names)))
    tensors = {names[k]: v for k, v in state.items()}
    tensors["batch.src"] = src.t().to(torch.float32)  # attend is batch-first: (B, S)
    tensors["batch.tgt"] = tgt.t().to(torch.float32)  # (B, T + 1)
    write_safetensors(args.file, tensors)

    torch_losses = train_torch(model, src, tgt[:-1], tgt[1:], ref.TGT_VOCAB, args.steps)
    attend = args.attend or os.path.join(HERE, "..", "build", "bench", "seq2seq")
    attend_losses = run_attend([attend, "--config", args.config, "--cell", args.cell, "--attn", args.attn,
                                "--init", args.file, "--losses", "--warmup", str(args.steps), "--steps", "1",
                                "--fwd-steps", "1", "--threads", str(args.attend_threads), "--no-blas-bound"],
                               args.steps)
    result = dict(model="seq2seq", config=args.config, cell=args.cell, attn=args.attn, steps=args.steps)
    return compare(result, torch_losses, attend_losses, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
