#!/usr/bin/python3
"""Checks that bench/torch_translate.py builds the same model as attend: loads a dates model file written by
`attend train --task dates` (any decoder, cell, direction, layer count) into torch_translate's PyTorch model under
PyTorch's parameter names, and compares its greedy outputs on 150 generated dates with `attend predict`'s.

  /usr/bin/python3 bench/torch_crosscheck.py MODEL.safetensors [ATTEND_BINARY]   (default binary: build/apps/attend)

Prints how many of the outputs are identical (all of them, when the two are the same computation) and lists any that
differ. Used to back the BLEU comparison of docs/results.md; needs Debian's python3-torch.
"""
import argparse, json, os, random, struct, subprocess, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_translate as tt

def read_safetensors(path):
    meta, tensors = tt.read_attend_file(path)
    return meta, {name: t.clone() for name, t in tensors.items()}

def torch_name(name, directions):
    parts = name.split(".")
    if parts[0] == "encoder" and parts[1] == "rnn":
        l, direction, p = parts[3], parts[4], parts[5]
        base = {"W_ih": "weight_ih", "W_hh": "weight_hh", "b_ih": "bias_ih", "b_hh": "bias_hh"}[p]
        return f"encoder.rnn.{base}_l{l}" + ("_reverse" if direction == "backward" else "")
    if parts[1] == "cells":
        return f"decoder.cells.{parts[2]}." + {"W_ih": "weight_ih", "W_hh": "weight_hh", "b_ih": "bias_ih", "b_hh": "bias_hh"}[parts[3]]
    if parts[1] == "score":
        return f"decoder.score.{parts[2]}.weight"
    if parts[1] == "W_c":
        return "decoder.W_c.weight"
    return ".".join(parts[:-1]) + "." + {"W": "weight", "b": "bias"}[parts[-1]]

path = sys.argv[1]
attend = sys.argv[2] if len(sys.argv) > 2 else "build/apps/attend"
meta, tensors = read_safetensors(path)
m = meta["model"]
args = argparse.Namespace(decoder=m["decoder"], cell=m["cell"], hidden=m["hidden_size"], embed=m["embedding_dim"],
                          layers=m["num_layers"], bidirectional=m["bidirectional"], dropout=0.0,
                          attention_size=m["attention_size"], no_input_feeding=not m["input_feeding"])
model = tt.Seq2seq(m["source_vocab_size"], m["target_vocab_size"], args)
state = {torch_name(k, 2 if m["bidirectional"] else 1): v for k, v in tensors.items() if not k.startswith("optimizer")}
model.load_state_dict(state, strict=True)
src_vocab = {t: i for i, t in enumerate(meta["source_vocabulary"])}
tgt_vocab = meta["target_vocabulary"]

rng = random.Random(5)
months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
inputs = []
for _ in range(150):
    y, mo, d = rng.randint(1950, 2049), rng.randint(1, 12), rng.randint(1, 28)
    fmt = rng.randrange(6)
    s = [f"{d} {months[mo-1]} {y}", f"{months[mo-1].capitalize()} {d}, {y}", f"{d:02d}/{mo:02d}/{y % 100:02d}",
         f"{days[rng.randrange(7)]}, {months[mo-1][:3]} {d} {y}", f"{y}-{mo}-{d}", f"{d}.{mo}.{y}"][fmt]
    if all(c in src_vocab for c in s):
        inputs.append(s)
out = subprocess.run([attend, "predict", "--model", path], input="\n".join(inputs) + "\n",
                     capture_output=True, text=True, check=True).stdout.split("\n")[:len(inputs)]
sources = [[src_vocab[c] for c in s] for s in inputs]
hyps = tt.decode_all(model, sources, m["max_target_length"])
ours = ["".join(tgt_vocab[k] for k in h) for h in hyps]
same = sum(a == b for a, b in zip(ours, out))
print(f"{path.split('/')[-1]}: {same}/{len(inputs)} identical greedy outputs; e.g. {inputs[0]!r} -> attend {out[0]!r}, torch {ours[0]!r}")
for a, b, s in zip(ours, out, inputs):
    if a != b: print("   differs:", s, "attend", b, "torch", a)
