#!/usr/bin/python3
"""Same computation check for bench/seq2seq: both programs train the benchmark model from the same initial weights
on the same batch, and their losses must agree (issue 7: to 1e-4 relative after 30 steps).

This script builds the reference model of ../shared/bench/torch_seq2seq.py (imported from there, not copied), writes
its initial weights and its random batch to a safetensors file under attend's parameter names, trains it for --steps
steps exactly as the reference does (zero_grad, forward, mean cross-entropy, backward, Adam lr 1e-3), then runs
`build/bench/seq2seq --init FILE --losses` on the same file and compares the two loss curves step by step.
Prints one JSON line; exits 1 when the last losses differ by more than --tolerance (relative).

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_same_loss.py --config small --cell gru --attn bahdanau
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


def load_reference(path):
    spec = importlib.util.spec_from_file_location("torch_seq2seq", path)
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


def write_safetensors(path, tensors):
    """tensors: name -> float32 contiguous torch tensor. The safetensors layout: 8-byte little-endian header length,
    the JSON header (padded with spaces to a multiple of 8), then the raw data in header order."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", choices=["small", "large"], default="small")
    ap.add_argument("--cell", choices=["gru", "lstm"], default="gru")
    ap.add_argument("--attn", choices=["bahdanau", "general"], default="bahdanau")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    ap.add_argument("--attend-threads", type=int, default=2, help="bench/seq2seq --threads (2: two batch shards)")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--reference", default=REFERENCE, help="path of torch_seq2seq.py")
    ap.add_argument("--attend", default=os.path.join(HERE, "..", "build", "bench", "seq2seq"),
                    help="the built bench/seq2seq program")
    ap.add_argument("--file", default="/tmp/attend_same_loss.safetensors", help="where to write the weights and batch")
    args = ap.parse_args()

    ref = load_reference(args.reference)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
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

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tgt_in, tgt_out = tgt[:-1], tgt[1:]
    torch_losses = []
    for _ in range(args.steps):
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, ref.TGT_VOCAB), tgt_out.reshape(-1))
        loss.backward()
        opt.step()
        torch_losses.append(loss.item())

    run = subprocess.run([args.attend, "--config", args.config, "--cell", args.cell, "--attn", args.attn,
                          "--init", args.file, "--losses", "--warmup", str(args.steps), "--steps", "1",
                          "--fwd-steps", "1", "--threads", str(args.attend_threads), "--no-blas-bound"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit("torch_same_loss: %s failed: %s" % (args.attend, run.stderr.strip()))
    attend_losses = json.loads(run.stdout.strip().splitlines()[-1])["losses"][: args.steps]
    rel = [abs(a - b) / abs(b) for a, b in zip(attend_losses, torch_losses)]
    result = dict(config=args.config, cell=args.cell, attn=args.attn, steps=args.steps,
                  torch_first=torch_losses[0], attend_first=attend_losses[0],
                  torch_last=torch_losses[-1], attend_last=attend_losses[-1],
                  rel_diff_last=rel[-1], rel_diff_max=max(rel), tolerance=args.tolerance,
                  ok=rel[-1] <= args.tolerance)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
