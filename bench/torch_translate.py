#!/usr/bin/env python3
"""The PyTorch side of attend's BLEU comparison: trains attend's encoder–decoder architecture with PyTorch on a data
folder written by `attend data ... --write DIR`, decodes the test split greedily and prints BLEU as one JSON line.

attend's acceptance test for translation (issue 6) reads: "the Bahdanau model must reach at least the BLEU of the same
architecture trained with PyTorch on the same split, steps and seed". This script is that PyTorch run. It is a
benchmark helper, not part of the library: CI never runs it, and it needs Debian's python3-torch and python3-nltk.

The model is attend's (models/seq2seq.cpp, models/decoder.cpp, models/attention.cpp, nn/recurrent.hpp), with the same
shapes, parameters and equations; B batch, S source length, E embedding size, H hidden size, D = 2 when the encoder
is bidirectional (else 1), A = D·H the annotation size, K the attention size (default H), V the target vocabulary:

  encoder      x_i → E_src x_i (nn.Embedding, padding row 0) → nn.GRU / nn.LSTM over a pack_padded_sequence:
               annotations h_i (B, S, A), exactly 0 at padding, and each sequence's final state of every layer at its
               true length (PyTorch's h_n order, which is attend's h_final order); dropout between layers (--dropout)
  s_0          s_0^l = h_Tx^l (and c_0^l = the encoder's memory cell) when D = 1; bidirectional:
               s_0^l = tanh(W_b^l [h→_Tx^l; h←_1^l] + b_b^l), an LSTM's c_0^l = W_bc^l [c→; c←] + b_bc^l (no tanh)
  decoder      stacked nn.GRUCell / nn.LSTMCell (as many layers as the encoder); target embedding E y with padding
               row 0; teacher forcing: step j reads the true y_{j-1} (<sos> first)
  bahdanau     e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)        W_a (K, H), U_a (K, A), v_a (1, K), no biases
               α_ij = softmax over the real source positions i, c_j = Σ_i α_ij h_i
               s_j = f(s_{j-1}, [E y_{j-1}; c_j])
               logits_j = W_o [s_j; c_j; E y_{j-1}] + b_o      (attend's output_embedding = true)
  vanilla      c = [h→_Tx; h←_1] of the top layer (fixed), s_j = f(s_{j-1}, [E y_{j-1}; c]),
               logits_j = W_o [s_j; c; E y_{j-1}] + b_o
  luong-SCORE  s_j = f(s_{j-1}, [E y_{j-1}; h̃_{j-1}])  (input feeding, h̃_0 = 0)
               or s_j = f(s_{j-1}, E y_{j-1})  (--no-input-feeding)
               e_ij = s_jᵀ W_a h_i (general, W_a (H, A)), s_jᵀ h_i (dot), v_aᵀ tanh(W_a [s_j; h_i]) (concat), no biases
               α_ij, c_j as above; h̃_j = tanh(W_c [c_j; s_j]) (W_c (H, A + H), no bias); logits_j = W_o h̃_j + b_o
  loss         mean cross-entropy over the non-padding target tokens y_1 … y_n <eos>
               (F.cross_entropy(ignore_index=0), as attend's cross_entropy with the padding id)

Cells use PyTorch's gate layouts and conventions, which are attend's: GRU gates r, z, n with h' = (1 - z) n + z h and
the reset gate applied to U_n h + b_hn; LSTM gates i, f, g, o. The parts of the score that depend on h_i only (U_a h_i,
W_a h_i) are computed once per batch, and the output layer runs once over all steps, as in attend. The parameters
correspond one to one to attend's, with the same shapes (PyTorch's names: encoder.rnn.weight_ih_l0 ↔
encoder.rnn.layers.0.forward.W_ih, decoder.cells.0.weight_ih ↔ decoder.cells.0.W_ih, decoder.score.W_a.weight ↔
decoder.score.W_a, decoder.W_c.weight ↔ decoder.W_c, …): the weights of attend model files (dates task; bahdanau,
vanilla, luong-dot/general/concat, GRU and LSTM, bidirectional, 2 layers, no input feeding) load with
load_state_dict(strict=True), and this model then decodes exactly as `attend predict` does.

Initialisation: PyTorch's own defaults (nn.Linear, nn.GRU/LSTM, nn.GRUCell/LSTMCell: U(-1/√fan_in, 1/√fan_in);
nn.Embedding: N(0, 1) with the padding row 0), drawn from torch.manual_seed(--seed). attend draws from the same
distributions with its own generator, so the two runs start from different weights of the same kind: the comparison is
between trainings, not between identical weights. With --init FILE the weights are instead those of an attend model
file, loaded with load_state_dict(strict=True) under PyTorch's names (attend's encoder.rnn.layers.0.forward.W_ih ↔
encoder.rnn.weight_ih_l0 and so on, read_attend_model): bench/translate_setup writes the weights `attend train` starts
from. The file's model configuration (decoder, cell, sizes, layers, directions, input feeding) must be the one the flags
ask for, and its vocabularies must be the data folder's, token for token; the file's optimizer state is ignored.

Training: Adam (PyTorch defaults β = (0.9, 0.999), ε = 1e-8; --lr, default 2e-3 like `attend train`), gradient
clipping by global norm (--clip, default 1.0, torch.nn.utils.clip_grad_norm_, which attend's clip_grad_norm copies),
exactly --steps optimizer steps, epochs repeated as needed. Batches as attend's bucketed_batch_order (models/batch.cpp):
each epoch shuffles the pairs, sorts windows of 32 batches' worth of pairs by source length (stable), cuts them into
batches and shuffles the batches; the generator is Python's random.Random(--seed), so the order is attend's in kind but
not the same permutation. Sources are not given an end token (attend's source ids are just the tokens).
With --order FILE the training pairs and the batches are instead exactly those of FILE, as bench/translate_setup writes
them for an `attend train` command line: header lines starting with "#", then "pairs P" and P lines `source ids<TAB>target
ids` (attend's training pairs in attend's order, token ids joined by spaces, no <sos>/<eos>), then "steps N" and N lines,
step k's batch as indices into those pairs. The pairs must equal the data folder's train.tsv as this script encodes it
(same pairs, same order, same ids; the first difference is an error), there must be at least --steps batches, and the
largest must hold --batch pairs. Step k trains on line k; the seed then only chooses the initial weights (and none
with --init). With --init and --order from the same command line, this run and `attend train` start from the same
weights and see the same batches: what differs is the implementations' float rounding.

Evaluation: greedy decoding of test.tsv in batches of --decode-batch (64) sources of similar length, as `attend eval`
batches them (never emitting <pad> or <sos>, stopping at <eos> or after --max-length tokens, default 50 like attend's
max_target_length), or with --beam K attend's beam search (models/search.cpp: K beams a source as B·K rows, the best
2K continuations ranked, an <eos> below the K best skipped, finished outputs scored log p / |y|, the source done when
its best continuation is <eos>), then corpus BLEU-4 with
nltk.translate.bleu_score.corpus_bleu over tokens against all references (no smoothing), and exact match (the
hypothesis equals one of the references). When some n-gram order has no match at all, NLTK returns 0 or a tiny
positive number (1e-77 … 1e-230); bleu is then 0, as attend's data/bleu.hpp reports it, so that two failed runs
compare equal.

Output: progress lines on standard error every --log-every steps (step, mean loss since the last line, target tokens
per second, <eos> included as attend counts them), then one JSON line on standard output with the fields decoder,
cell, hidden, embed, layers, bidirectional, batch, steps, seed, seconds_train, tokens_per_s, final_train_loss (mean of
the last 100 steps), test_count, bleu (×100, full float), exact_match, torch (the version), init and order (the files
given, or null), beam, decode_seconds (the decoding alone, not BLEU) and a few more. With --decode-only (and --init
FILE) nothing is trained: the file's weights decode the test split, and the JSON line holds beam, test_count,
decode_seconds, sentences_per_s, bleu and exact_match — the PyTorch side of bench/compare_decode. --losses FILE writes every step's training loss, one per line with full precision
(Python's repr of the float), for comparing loss curves step by step.

Run (one core: the machine is shared):

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_translate.py --data DIR --decoder bahdanau --steps N --threads 1

  from attend's own start and batches (translate_setup takes the `attend train` command line the run is compared with):
  build-release/bench/translate_setup --init INIT.safetensors --order ORDER.txt train --task pairs --data … --seed S …
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_translate.py --data DIR … --init INIT.safetensors --order ORDER.txt

  --self-test   checks the model without data and exits: the loss of a padded batch equals the token-weighted mean of
                the per-sentence losses (float32 within 1e-5, float64 within 1e-10) for every decoder and cell,
                attention weights are 0 at padding, batched greedy decoding equals one sentence at a time, the data
                reader maps unknown tokens to <unk>, and BLEU is 100 for exact outputs and 0 when an order never
                matches; also that an order file is read as written, that pairs differing from train.tsv are refused,
                and that a short training with --order visits exactly the file's batches.
"""
import argparse
import json
import math
import os
import random
import struct
import sys
import tempfile
import time
import warnings

# One BLAS/OpenMP thread unless the caller says otherwise; these must be set before torch is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PAD, SOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<sos>", "<eos>", "<unk>"]
DECODERS = ["vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"]


# ---- data ------------------------------------------------------------------------------------------------------------

def tokens_of(text):
    """Tokens of an exported line: joined by single spaces; an empty field has none."""
    return text.split(" ") if text else []


def read_vocab(path):
    """Line k (0-based) is the token of id k; the first four are <pad> <sos> <eos> <unk>.
    Returns (tokens, token → id)."""
    with open(path, encoding="utf-8") as f:
        tokens = f.read().split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    if tokens[:4] != SPECIALS:
        raise ValueError(f"{path}: the first four lines must be {' '.join(SPECIALS)}, not {' '.join(tokens[:4])}")
    ids = {}
    for k, token in enumerate(tokens):
        if token in ids:
            raise ValueError(f"{path}: token {token!r} on lines {ids[token] + 1} and {k + 1}")
        ids[token] = k
    return tokens, ids


def read_tsv(path):
    """Each line's tab-separated fields, as lists of tokens."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2:
                raise ValueError(f"{path}:{number}: expected source<TAB>target, got {line!r}")
            rows.append([tokens_of(field) for field in fields])
    return rows


def encode(tokens, ids):
    return [ids.get(token, UNK) for token in tokens]


class Data:
    """A folder written by `attend data --write DIR`: train pairs as ids, test sources as ids with token references."""

    def __init__(self, folder):
        self.source_tokens, self.source_ids = read_vocab(os.path.join(folder, "source.vocab"))
        self.target_tokens, self.target_ids = read_vocab(os.path.join(folder, "target.vocab"))
        self.train = []
        for source, target in ((row[0], row[1]) for row in read_tsv(os.path.join(folder, "train.tsv"))):
            if not source:
                raise ValueError(f"{folder}/train.tsv: an empty source")
            self.train.append((encode(source, self.source_ids), encode(target, self.target_ids)))
        self.test_sources, self.test_references = [], []
        for row in read_tsv(os.path.join(folder, "test.tsv")):
            if not row[0]:
                raise ValueError(f"{folder}/test.tsv: an empty source")
            self.test_sources.append(encode(row[0], self.source_ids))
            self.test_references.append(row[1:])


def read_order(path):
    """An order file of bench/translate_setup: (pairs as (source ids, target ids), batches as lists of indices)."""
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#")]

    def section(at, name):
        fields = lines[at].split(" ") if at < len(lines) else []
        if len(fields) != 2 or fields[0] != name or not fields[1].isdigit():
            raise ValueError(f"{path}: expected a line '{name} COUNT' after the {'header' if name == 'pairs' else 'pairs'}")
        count = int(fields[1])
        if at + 1 + count > len(lines):
            raise ValueError(f"{path}: '{name} {count}' but only {len(lines) - at - 1} lines follow")
        return lines[at + 1:at + 1 + count]

    pairs = []
    for number, line in enumerate(section(0, "pairs"), 1):
        source, tab, target = line.partition("\t")
        if not tab or not source:
            raise ValueError(f"{path}: pair {number}: expected source ids<TAB>target ids, got {line!r}")
        pairs.append(([int(k) for k in source.split(" ")], [int(k) for k in target.split(" ")] if target else []))
    batches = [[int(i) for i in line.split(" ")] for line in section(len(pairs) + 1, "steps")]
    if len(lines) != len(pairs) + len(batches) + 2:
        raise ValueError(f"{path}: {len(lines) - len(pairs) - len(batches) - 2} lines after the last step")
    for number, batch in enumerate(batches, 1):
        if not batch or min(batch) < 0 or max(batch) >= len(pairs):
            raise ValueError(f"{path}: step {number}: indices must be in [0, {len(pairs)})")
    return pairs, batches


def use_order(data, path, batch_size):
    """--order: checks that the file's pairs are the data folder's training pairs and returns its batches."""
    pairs, batches = read_order(path)
    if len(pairs) != len(data.train):
        raise ValueError(f"{path}: {len(pairs)} training pairs, but train.tsv has {len(data.train)}")
    for number, (ours, theirs) in enumerate(zip(data.train, pairs), 1):
        if ours != theirs:
            raise ValueError(f"{path}: pair {number} is {theirs}, but line {number} of train.tsv encodes as {ours}")
    largest = max((len(b) for b in batches), default=0)
    if largest != batch_size:
        raise ValueError(f"{path}: the largest batch holds {largest} pairs, but --batch is {batch_size}")
    return batches


def read_attend_file(path):
    """An attend model file (safetensors): its metadata (a dict) and every tensor by attend's name, the optimizer's
    state ("optimizer.…") included."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        blob = f.read()
    metadata = json.loads(header.pop("__metadata__")["attend"])
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise ValueError(f"{path}: {name} is {info['dtype']}, not F32")
        begin, end = info["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(blob[begin:end]), dtype=torch.float32).reshape(info["shape"])
    return metadata, tensors


def read_attend_model(path):
    """An attend model file's metadata and its weights under attend's names, without the optimizer's state."""
    metadata, tensors = read_attend_file(path)
    return metadata, {name: t for name, t in tensors.items() if not name.startswith("optimizer.")}


def torch_name(name):
    """attend's parameter name → this model's (encoder.rnn.layers.0.backward.W_ih → encoder.rnn.weight_ih_l0_reverse,
    decoder.cells.0.W_hh → decoder.cells.0.weight_hh, decoder.score.W_a → decoder.score.W_a.weight,
    decoder.output.W → decoder.output.weight, …)."""
    parts = name.split(".")
    cell = {"W_ih": "weight_ih", "W_hh": "weight_hh", "b_ih": "bias_ih", "b_hh": "bias_hh"}
    if parts[:2] == ["encoder", "rnn"]:
        layer, direction, p = parts[3], parts[4], parts[5]
        return f"encoder.rnn.{cell[p]}_l{layer}" + ("_reverse" if direction == "backward" else "")
    if parts[1] == "cells":
        return f"decoder.cells.{parts[2]}.{cell[parts[3]]}"
    if parts[1] == "score":
        return f"decoder.score.{parts[2]}.weight"
    if parts[1] == "W_c":
        return "decoder.W_c.weight"
    return ".".join(parts[:-1]) + "." + {"W": "weight", "b": "bias"}[parts[-1]]


def load_init(model, path, data, args):
    """--init: the weights of an attend model file, after checking that it is this model on this data's vocabularies."""
    metadata, tensors = read_attend_model(path)
    config = metadata["model"]
    wanted = {"decoder": args.decoder, "cell": args.cell, "hidden_size": args.hidden, "embedding_dim": args.embed,
              "num_layers": args.layers, "bidirectional": args.bidirectional,
              "attention_size": args.attention_size or args.hidden,
              "source_vocab_size": len(data.source_tokens), "target_vocab_size": len(data.target_tokens)}
    if args.decoder.startswith("luong"):
        wanted["input_feeding"] = not args.no_input_feeding
    for key, value in wanted.items():
        if config.get(key) != value and not (key == "attention_size" and config.get(key) == 0):
            raise ValueError(f"{path}: the model's {key} is {config.get(key)}, but this run's is {value}")
    for side in ("source", "target"):
        if metadata[f"{side}_vocabulary"] != getattr(data, f"{side}_tokens"):
            raise ValueError(f"{path}: the {side} vocabulary differs from the data folder's {side}.vocab")
    model.load_state_dict({torch_name(name): tensor for name, tensor in tensors.items()}, strict=True)


def bucketed_batch_order(lengths, batch_size, rng):
    """attend's models::bucketed_batch_order: shuffle, sort windows of 32 batches by source length, cut, shuffle."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    window = 32 * batch_size
    batches = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start:start + window], key=lambda i: lengths[i])  # stable, like std::stable_sort
        batches += [chunk[k:k + batch_size] for k in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def make_batch(sources, targets=None):
    """attend's models::make_batch: source (B, S) padded with 0 and its lengths; target_in = <sos> y, target_out =
    y <eos>, both (B, T) padded with 0."""
    B = len(sources)
    S = max(len(s) for s in sources)
    source = torch.zeros(B, S, dtype=torch.long)
    for b, s in enumerate(sources):
        source[b, :len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in sources], dtype=torch.long)
    if targets is None:
        return source, lengths, None, None
    T = max(len(y) for y in targets) + 1
    target_in = torch.zeros(B, T, dtype=torch.long)
    target_out = torch.zeros(B, T, dtype=torch.long)
    for b, y in enumerate(targets):
        target_in[b, 0] = SOS
        target_in[b, 1:len(y) + 1] = torch.tensor(y, dtype=torch.long)
        target_out[b, :len(y)] = torch.tensor(y, dtype=torch.long)
        target_out[b, len(y)] = EOS
    return source, lengths, target_in, target_out


# ---- model -----------------------------------------------------------------------------------------------------------

class Encoder(nn.Module):
    """E_src x_i, then the recurrent stack over the packed batch (attend's nn::Encoder)."""

    def __init__(self, vocab_size, embed, hidden, cell, layers, bidirectional, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed, padding_idx=PAD)
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(embed, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=True,
                       dropout=dropout if layers > 1 else 0.0)

    def forward(self, source, lengths):
        # source (B, S), lengths (B,) → annotations (B, S, A), h_n and c_n (L·D, B, H) or None
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(source), lengths, batch_first=True,
                                                   enforce_sorted=False)
        outputs, final = self.rnn(packed)
        annotations, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True, total_length=source.shape[1])
        h_n, c_n = final if isinstance(final, tuple) else (final, None)
        return annotations, h_n, c_n


class Score(nn.Module):
    """attend's models/attention.cpp scores, split into keys (h_i only, once per batch) and the per-step score."""

    def __init__(self, kind, query_size, annotation_size, attention_size):
        super().__init__()
        self.kind = kind
        self.query_size = query_size
        if kind == "additive":
            self.W_a = nn.Linear(query_size, attention_size, bias=False)
            self.U_a = nn.Linear(annotation_size, attention_size, bias=False)
            self.v_a = nn.Linear(attention_size, 1, bias=False)
        elif kind == "general":
            self.W_a = nn.Linear(annotation_size, query_size, bias=False)
        elif kind == "concat":
            self.W_a = nn.Linear(query_size + annotation_size, attention_size, bias=False)
            self.v_a = nn.Linear(attention_size, 1, bias=False)
        elif kind == "dot":
            if query_size != annotation_size:
                raise ValueError("dot score: s_jᵀ h_i needs equal sizes (use luong-general with --bidirectional)")
        else:
            raise ValueError(f"unknown score {kind}")

    def keys(self, h):
        # h (B, S, A) → keys (B, S, K): U_a h_i, W_a h_i, W_a[:, Q:] h_i or h_i
        if self.kind == "additive":
            return self.U_a(h)
        if self.kind == "general":
            return self.W_a(h)
        if self.kind == "concat":
            return h @ self.W_a.weight[:, self.query_size:].t()
        return h

    def forward(self, query, keys):
        # query (B, Q), keys (B, S, K) → e (B, S)
        if self.kind == "additive":
            # e_ij = v_aᵀ tanh(W_a s + U_a h_i)
            return self.v_a(torch.tanh(self.W_a(query).unsqueeze(1) + keys)).squeeze(2)
        if self.kind == "concat":
            # e_ij = v_aᵀ tanh(W_a[:, :Q] s + W_a[:, Q:] h_i)
            projected = query @ self.W_a.weight[:, :self.query_size].t()
            return self.v_a(torch.tanh(projected.unsqueeze(1) + keys)).squeeze(2)
        # e_ij = s_jᵀ (W_a h_i) or s_jᵀ h_i
        return torch.bmm(keys, query.unsqueeze(2)).squeeze(2)


class Decoder(nn.Module):
    """attend's Decoder base and its three kinds (models/decoder.cpp), one step at a time."""

    def __init__(self, kind, score, vocab_size, embed, hidden, cell, layers, directions, attention_size,
                 input_feeding):
        super().__init__()
        self.kind, self.cell, self.hidden = kind, cell, hidden
        self.input_feeding = kind == "luong" and input_feeding
        annotation = directions * hidden
        self.embedding = nn.Embedding(vocab_size, embed, padding_idx=PAD)
        if kind == "luong":
            cell_input, features = embed + (hidden if self.input_feeding else 0), hidden
        else:
            cell_input, features = embed + annotation, hidden + annotation + embed
        Cell = nn.GRUCell if cell == "gru" else nn.LSTMCell
        self.cells = nn.ModuleList(Cell(cell_input if l == 0 else hidden, hidden) for l in range(layers))
        # bridges only when bidirectional: s_0^l = tanh(W_b^l [h→; h←] + b_b^l), an LSTM's c_0^l without tanh
        self.bridge = nn.ModuleList(nn.Linear(annotation, hidden) for _ in range(layers if directions == 2 else 0))
        self.bridge_c = nn.ModuleList(nn.Linear(annotation, hidden)
                                      for _ in range(layers if directions == 2 and cell == "lstm" else 0))
        self.output = nn.Linear(features, vocab_size)
        if kind != "vanilla":
            self.score = Score(score, hidden, annotation, attention_size)
        if kind == "luong":
            self.W_c = nn.Linear(annotation + hidden, hidden, bias=False)
        self.directions = directions

    def initial_state(self, annotations, h_n, c_n):
        """(h, c, feed): per-layer lists of (B, H); c empty unless LSTM; feed h̃_0 = 0 with input feeding."""
        D, L = self.directions, len(self.cells)
        h, c = [], []
        for l in range(L):
            if D == 1:
                h.append(h_n[l])
                if c_n is not None:
                    c.append(c_n[l])
            else:
                h.append(torch.tanh(self.bridge[l](torch.cat([h_n[2 * l], h_n[2 * l + 1]], 1))))
                if c_n is not None:
                    c.append(self.bridge_c[l](torch.cat([c_n[2 * l], c_n[2 * l + 1]], 1)))
        feed = annotations.new_zeros(annotations.shape[0], self.hidden) if self.input_feeding else None
        return h, c, feed

    def memory(self, annotations, h_n, lengths):
        """What every step reads: h_i, the keys, the mask (B, S) of real positions, the vanilla context."""
        S = annotations.shape[1]
        mask = torch.arange(S).unsqueeze(0) < lengths.unsqueeze(1)
        keys = self.score.keys(annotations) if self.kind != "vanilla" else None
        top = (len(self.cells) - 1) * self.directions
        context = h_n[top] if self.directions == 1 else torch.cat([h_n[top], h_n[top + 1]], 1)
        return annotations, keys, mask, context

    def advance(self, x, h, c):
        """The stacked cells: layer 1 reads x, layer l reads layer l-1's new state."""
        new_h, new_c = [], []
        for l, cell in enumerate(self.cells):
            if self.cell == "lstm":
                h_l, c_l = cell(x, (h[l], c[l]))
                new_c.append(c_l)
            else:
                h_l = cell(x, h[l])
            new_h.append(h_l)
            x = h_l
        return new_h, new_c

    def attend(self, query, memory):
        annotations, keys, mask, _ = memory
        # α_ij = softmax_i(e_ij) over the real positions: (B, S), exactly 0 at padding
        alpha = torch.softmax(self.score(query, keys).masked_fill(~mask, float("-inf")), dim=1)
        # c_j = Σ_i α_ij h_i: (B, A)
        return torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1), alpha

    def step(self, y_prev, state, memory):
        """y_prev (B,) → (features (B, F), α (B, S) or None, new state)."""
        h, c, feed = state
        y = self.embedding(y_prev)  # E y_{j-1}: (B, E)
        if self.kind == "vanilla":
            context = memory[3]
            h, c = self.advance(torch.cat([y, context], 1), h, c)
            return torch.cat([h[-1], context, y], 1), None, (h, c, feed)
        if self.kind == "bahdanau":
            c_j, alpha = self.attend(h[-1], memory)  # scores on s_{j-1}
            h, c = self.advance(torch.cat([y, c_j], 1), h, c)
            return torch.cat([h[-1], c_j, y], 1), alpha, (h, c, feed)
        h, c = self.advance(torch.cat([y, feed], 1) if self.input_feeding else y, h, c)
        c_j, alpha = self.attend(h[-1], memory)  # scores on s_j
        h_tilde = torch.tanh(self.W_c(torch.cat([c_j, h[-1]], 1)))
        return h_tilde, alpha, (h, c, h_tilde if self.input_feeding else None)


class Seq2seq(nn.Module):
    def __init__(self, source_vocab, target_vocab, args):
        super().__init__()
        kind, _, score = args.decoder.partition("-")
        directions = 2 if args.bidirectional else 1
        self.encoder = Encoder(source_vocab, args.embed, args.hidden, args.cell, args.layers, args.bidirectional,
                               args.dropout)
        self.decoder = Decoder(kind, score or "additive", target_vocab, args.embed, args.hidden, args.cell,
                               args.layers, directions, args.attention_size or args.hidden, not args.no_input_feeding)

    def encode(self, source, lengths):
        annotations, h_n, c_n = self.encoder(source, lengths)
        return self.decoder.memory(annotations, h_n, lengths), self.decoder.initial_state(annotations, h_n, c_n)

    def forward(self, source, lengths, target_in):
        """Teacher-forced logits (B, T, V)."""
        memory, state = self.encode(source, lengths)
        features = []
        for j in range(target_in.shape[1]):
            out, _, state = self.decoder.step(target_in[:, j], state, memory)
            features.append(out)
        # the output layer over all steps at once: (B, T, F) → (B, T, V)
        return self.decoder.output(torch.stack(features, 1))

    def loss(self, source, lengths, target_in, target_out):
        logits = self.forward(source, lengths, target_in)
        # -(1/N) Σ_{b,j: y_bj ≠ pad} log p(y_bj | y_b,<j, x_b)
        return F.cross_entropy(logits.reshape(-1, logits.shape[2]), target_out.reshape(-1), ignore_index=PAD)

    @torch.no_grad()
    def greedy(self, source, lengths, max_length):
        """Greedy decoding of a batch: token ids per sentence, without <eos>; also the α rows (for the self-test)."""
        memory, state = self.encode(source, lengths)
        B = source.shape[0]
        y_prev = torch.full((B,), SOS, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        outputs, alphas = [[] for _ in range(B)], []
        for _ in range(max_length):
            out, alpha, state = self.decoder.step(y_prev, state, memory)
            logits = self.decoder.output(out)
            logits[:, PAD] = float("-inf")  # never emitted, as attend's search
            logits[:, SOS] = float("-inf")
            best = logits.argmax(1)
            alphas.append(alpha)
            for b in range(B):
                if not done[b]:
                    if best[b] == EOS:
                        done[b] = True
                    else:
                        outputs[b].append(int(best[b]))
            if bool(done.all()):
                break
            y_prev = best
        return outputs, alphas


    @torch.no_grad()
    def beam_search(self, source, lengths, k, max_length, alpha=1.0):
        """attend's beam search (models/search.cpp) on a batch, as B·k decoder rows (row b·k + r is beam r of source
        b): every continuation of a source's live beams ranked by summed log-probability (computed in double), the
        best 2k kept; an <eos> among the k best finishes a hypothesis (score log p / (|y| + 1)^α), one ranked lower
        is skipped; the other continuations become the source's next beams (at most k); the source is done when its
        best continuation is <eos>, nothing is left to extend, or at max_length. Returns token ids per sentence."""
        memory, state = self.encode(source, lengths)
        B = source.shape[0]
        rows = torch.arange(B).repeat_interleave(k)
        memory, state = gather(memory, rows), gather(state, rows)
        live = [[([], 0.0)] for _ in range(B)]  # live[b][r]: (tokens, log p) of the beam on row b·k + r
        finished = [[] for _ in range(B)]  # (score, tokens)
        done = [False] * B
        y_prev = torch.full((B * k,), SOS, dtype=torch.long)
        for j in range(max_length):
            out, _, state = self.decoder.step(y_prev, state, memory)
            log_p = torch.log_softmax(self.decoder.output(out).double(), 1)
            log_p[:, PAD] = float("-inf")  # never emitted
            log_p[:, SOS] = float("-inf")
            base = [float("-inf")] * (B * k)
            for b in range(B):
                if not done[b]:
                    for r, (_, summed) in enumerate(live[b]):
                        base[b * k + r] = summed
            V = log_p.shape[1]
            total = (log_p + torch.tensor(base, dtype=torch.float64).unsqueeze(1)).view(B, k * V)
            top_values, top_indices = total.topk(2 * k, dim=1)
            top_values, top_indices = top_values.tolist(), top_indices.tolist()
            parents, y_next = list(range(B * k)), [PAD] * (B * k)
            for b in range(B):
                if done[b]:
                    continue
                beams = []
                for c in range(2 * k):
                    if len(beams) == k or top_values[b][c] == float("-inf"):
                        break
                    r, token = divmod(top_indices[b][c], V)
                    if token == EOS and c >= k:
                        continue
                    tokens = live[b][r][0]
                    if token == EOS:
                        finished[b].append((top_values[b][c] / (len(tokens) + 1) ** alpha, tokens))
                    else:
                        beams.append((tokens + [token], top_values[b][c], r))
                for r, (tokens, _, parent) in enumerate(beams):
                    parents[b * k + r] = b * k + parent
                    y_next[b * k + r] = tokens[-1]
                live[b] = [(tokens, summed) for tokens, summed, _ in beams]
                best_was_end = top_indices[b][0] % V == EOS
                done[b] = best_was_end or not beams or j == max_length - 1
            if all(done):
                break
            state = gather(state, torch.tensor(parents))
            y_prev = torch.tensor(y_next)
        outputs = []
        for b in range(B):
            pool = finished[b] or [(summed / max(len(tokens), 1) ** alpha, tokens) for tokens, summed in live[b]]
            outputs.append(max(pool, key=lambda scored: scored[0])[1])
        return outputs


def gather(x, rows):
    """Rows `rows` of every tensor in x (a tensor, None, or a list or tuple of them)."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return type(x)(gather(item, rows) for item in x)
    return x.index_select(0, rows)


def decode_all(model, sources, max_length, batch_size=64, beam=1):
    """Greedy (beam 1) or beam-search hypotheses (ids) of all sources, in batches of similar length, returned in the
    input order (attend's decode_by_length: a stable sort by source length, batches of 64 sources)."""
    model.eval()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    hypotheses = [None] * len(sources)
    for start in range(0, len(order), batch_size):
        indices = order[start:start + batch_size]
        source, lengths, _, _ = make_batch([sources[i] for i in indices])
        if beam == 1:
            outputs, _ = model.greedy(source, lengths, max_length)
        else:
            outputs = model.beam_search(source, lengths, beam, max_length)
        for i, output in zip(indices, outputs):
            hypotheses[i] = output
    return hypotheses


# ---- training and evaluation -----------------------------------------------------------------------------------------

def duration_text(seconds):
    total = int(round(max(0.0, seconds)))
    return f"{total // 3600}h{total // 60 % 60:02d}m" if total >= 3600 else f"{total // 60}m{total % 60:02d}s"


def batch_sequence(data, args, order=None):
    """The batches of training, one per step: those of --order, or epoch after epoch of bucketed_batch_order."""
    if order is not None:
        yield from order
        return
    rng = random.Random(args.seed)
    lengths = [len(s) for s, _ in data.train]
    while True:
        yield from bucketed_batch_order(lengths, args.batch, rng)


def train(model, data, args, order=None):
    """Exactly args.steps Adam steps (fewer if the time limit ends the run), on the batches of `order` if given.
    Returns (steps taken, seconds, target tokens, the loss of every step)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    losses, tokens, step = [], 0, 0
    shown_sum, shown_count = 0.0, 0
    start = time.perf_counter()
    model.train()
    for indices in batch_sequence(data, args, order):
        sources = [data.train[i][0] for i in indices]
        targets = [data.train[i][1] for i in indices]
        tokens += sum(len(y) + 1 for y in targets)
        source, source_lengths, target_in, target_out = make_batch(sources, targets)
        optimizer.zero_grad()
        # --precision bf16: PyTorch's CPU autocast (its products in bfloat16, float32 master weights and optimizer)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = model.loss(source, source_lengths, target_in, target_out)
        loss.backward()
        if args.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        value = loss.item()
        if not math.isfinite(value):
            raise RuntimeError(f"training diverged at step {step + 1} (loss {value})")
        optimizer.step()
        step += 1
        losses.append(value)
        shown_sum += value
        shown_count += 1
        elapsed = time.perf_counter() - start
        out_of_time = args.time_limit > 0 and elapsed > args.time_limit * 60
        if step % args.log_every == 0 or step == args.steps or out_of_time:
            print(f"step {step}/{args.steps}  loss {shown_sum / shown_count:.4f}  {tokens / elapsed:.0f} tok/s  "
                  f"elapsed {duration_text(elapsed)}  ETA {duration_text(elapsed / step * (args.steps - step))}",
                  file=sys.stderr, flush=True)
            shown_sum, shown_count = 0.0, 0
        if out_of_time:
            print(f"torch_translate: time limit of {args.time_limit} min reached after {step} steps",
                  file=sys.stderr, flush=True)
            return step, time.perf_counter() - start, tokens, losses
        if step == args.steps:
            break
    if step < args.steps:
        raise RuntimeError(f"the order holds only {step} batches, --steps is {args.steps}")
    return step, time.perf_counter() - start, tokens, losses


def corpus_bleu(references, hypotheses):
    """Corpus BLEU-4 ×100 of token lists against lists of references: NLTK's corpus_bleu without smoothing, except
    that it is exactly 0 when some n-gram order has no match (NLTK: 0 or a tiny number; attend's bleu.hpp: 0)."""
    from nltk.translate import bleu_score
    # m_n, the clipped n-gram matches of order n over the corpus
    matches = [sum(bleu_score.modified_precision(refs, h, n).numerator for refs, h in zip(references, hypotheses))
               for n in range(1, 5)]
    if min(matches) == 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 100.0 * bleu_score.corpus_bleu(references, hypotheses)


def evaluate(model, data, args):
    """BLEU ×100, exact match, the hypotheses as token lists, and the seconds the decoding took."""
    start = time.perf_counter()
    ids = decode_all(model, data.test_sources, args.max_length, batch_size=args.decode_batch, beam=args.beam)
    seconds = time.perf_counter() - start
    hypotheses = [[data.target_tokens[k] for k in h] for h in ids]
    bleu = corpus_bleu(data.test_references, hypotheses)
    exact = sum(any(h == r for r in refs) for h, refs in zip(hypotheses, data.test_references))
    return bleu, exact / max(1, len(hypotheses)), hypotheses, seconds


# ---- self-test -------------------------------------------------------------------------------------------------------

def self_test(args):
    """Padding invariance, zero attention at padding, batched = one-by-one greedy decoding, <unk> mapping."""
    generator = random.Random(1)
    B, source_vocab, target_vocab = 7, 23, 19
    sources = [[generator.randrange(1, source_vocab) for _ in range(generator.randint(1, 9))] for _ in range(B)]
    targets = [[generator.randrange(4, target_vocab) for _ in range(generator.randint(0, 8))] for _ in range(B)]
    sources[2] = sources[2][:1]  # a one-token source next to long ones
    worst = {torch.float32: 0.0, torch.float64: 0.0}
    tolerance = {torch.float32: 1e-5, torch.float64: 1e-10}
    configs = [(d, c, 1, False) for d in DECODERS for c in ("gru", "lstm")]
    configs += [(d, c, 2, True) for d in DECODERS if d != "luong-dot" for c in ("gru", "lstm")]
    for decoder, cell, layers, bidirectional in configs:
        for dtype in (torch.float32, torch.float64):
            config = argparse.Namespace(**{**vars(args), "decoder": decoder, "cell": cell, "layers": layers,
                                           "bidirectional": bidirectional, "hidden": 16, "embed": 8,
                                           "attention_size": 0, "dropout": 0.0})
            torch.manual_seed(0)
            model = Seq2seq(source_vocab, target_vocab, config).to(dtype)
            model.eval()
            name = f"{decoder} {cell} layers {layers}{' bidirectional' if bidirectional else ''} {dtype}"
            with torch.no_grad():
                batch_loss = model.loss(*make_batch(sources, targets)).item()
                # the same loss from one sentence at a time: no padding at all, weighted by target tokens (+ <eos>)
                weighted = sum(model.loss(*make_batch([s], [y])).item() * (len(y) + 1)
                               for s, y in zip(sources, targets))
                weighted /= sum(len(y) + 1 for y in targets)
            difference = abs(batch_loss - weighted)
            worst[dtype] = max(worst[dtype], difference)
            assert difference <= tolerance[dtype], f"{name}: batch loss {batch_loss} != per-sentence {weighted}"
            if dtype == torch.float64:
                source, lengths, _, _ = make_batch(sources)
                outputs, alphas = model.greedy(source, lengths, 12)
                for alpha in alphas:
                    if alpha is not None:
                        padding = torch.arange(source.shape[1]).unsqueeze(0) >= lengths.unsqueeze(1)
                        assert bool((alpha[padding] == 0).all()), f"{name}: attention on padding"
                        assert torch.allclose(alpha.sum(1), torch.ones(B, dtype=dtype)), f"{name}: α rows"
                for b, s in enumerate(sources):
                    alone, _ = model.greedy(*make_batch([s])[:2], 12)
                    assert alone[0] == outputs[b], f"{name}: sentence {b} decodes differently alone"
                # beam search: width 1 is greedy decoding; width 3 in a batch is width 3 one sentence at a time
                assert model.beam_search(source, lengths, 1, 12) == outputs, f"{name}: beam 1 differs from greedy"
                beams = model.beam_search(source, lengths, 3, 12)
                for b, s in enumerate(sources):
                    alone = model.beam_search(*make_batch([s])[:2], 3, 12)
                    assert alone[0] == beams[b], f"{name}: sentence {b} beam-decodes differently alone"
    print(f"padding invariance: worst |batch loss - per-sentence mean| {worst[torch.float32]:.2e} (float32, "
          f"tolerance 1e-5), {worst[torch.float64]:.2e} (float64, tolerance 1e-10) over {len(configs)} models",
          file=sys.stderr)

    with tempfile.TemporaryDirectory() as folder:
        for name, text in (("source.vocab", "<pad>\n<sos>\n<eos>\n<unk>\nhola\n"),
                           ("target.vocab", "<pad>\n<sos>\n<eos>\n<unk>\nhi\n"),
                           ("train.tsv", "hola\thi\nhola adiós\thi bye\n"),
                           ("test.tsv", "adiós hola\tbye hi\tbye , hi\n")):
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
        data = Data(folder)
        assert data.train == [([4], [4]), ([4, UNK], [4, UNK])], data.train
        assert data.test_sources == [[UNK, 4]] and data.test_references == [[["bye", "hi"], ["bye", ",", "hi"]]]
        # an order file as bench/translate_setup writes it; then one whose second pair differs from train.tsv
        order_path = os.path.join(folder, "order.txt")
        with open(order_path, "w", encoding="utf-8") as f:
            f.write("# header\n# more header\npairs 2\n4\t4\n4 3\t4 3\nsteps 3\n1 0\n0\n1\n")
        assert read_order(order_path) == (data.train, [[1, 0], [0], [1]])
        assert use_order(data, order_path, 2) == [[1, 0], [0], [1]]
        with open(order_path, "w", encoding="utf-8") as f:
            f.write("pairs 2\n4\t4\n4 3\t4\nsteps 1\n1 0\n")
        try:
            use_order(data, order_path, 2)
            raise AssertionError("an order file whose pairs differ from train.tsv was accepted")
        except ValueError as e:
            assert "pair 2" in str(e), e
        # training with an order visits exactly its batches: record what the loss sees
        config = argparse.Namespace(**{**vars(args), "decoder": "bahdanau", "cell": "gru", "layers": 1,
                                       "bidirectional": False, "hidden": 8, "embed": 4, "attention_size": 0,
                                       "dropout": 0.0, "steps": 3, "batch": 2, "clip": 1.0, "lr": 1e-3,
                                       "time_limit": 0.0, "log_every": 1000})
        model = Seq2seq(5, 5, config)
        seen, loss = [], model.loss
        model.loss = lambda source, lengths, *rest: seen.append(lengths.tolist()) or loss(source, lengths, *rest)
        steps, _, _, _ = train(model, data, config, [[1, 0], [0], [1], [0, 1]])
        assert steps == 3 and seen == [[2, 1], [1], [2]], seen
    references = [[["the", "cat", "sat", "on", "the", "mat"]], [["a", "b", "c", "d", "e"], ["a", "b"]]]
    assert corpus_bleu(references, [references[0][0], ["a", "b", "c", "d", "e"]]) == 100.0
    assert corpus_bleu(references, [["the", "cat", "sat", "on"], ["a", "b", "c"]]) > 0  # BP < 1, every order matches
    assert corpus_bleu(references, [["the", "cat", "on", "mat"], ["a", "c"]]) == 0.0  # no 3-gram match: NLTK 8e-155
    print("self-test passed", file=sys.stderr)


# ---- main ------------------------------------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="folder written by `attend data ... --write DIR`")
    parser.add_argument("--decoder", default="bahdanau", choices=DECODERS)
    parser.add_argument("--cell", default="gru", choices=["gru", "lstm"])
    parser.add_argument("--hidden", type=int, default=128, help="hidden size H (attend's default 128)")
    parser.add_argument("--embed", type=int, default=32, help="embedding size E (attend's default 32)")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--bidirectional", action="store_true")
    parser.add_argument("--dropout", type=float, default=0.0, help="between encoder layers")
    parser.add_argument("--attention-size", type=int, default=0, help="additive/concat score size K (0: H)")
    parser.add_argument("--no-input-feeding", action="store_true", help="Luong: do not feed h̃_{j-1}")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000, help="optimizer steps (epochs repeat as needed)")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--clip", type=float, default=1.0, help="global gradient norm (0: no clipping)")
    parser.add_argument("--seed", type=int, default=1, help="initial weights and batch order")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--precision", default="float32", choices=["float32", "bf16", "int8"],
                        help="training's forward under torch.autocast('cpu', dtype=torch.bfloat16) (bf16); with "
                        "--decode-only, int8 decodes with torch.ao.quantization.quantize_dynamic's model (int8)")
    parser.add_argument("--time-limit", type=float, default=0.0, help="stop training after MIN minutes (0: none)")
    parser.add_argument("--log-every", type=int, default=100)
    parser.add_argument("--max-length", type=int, default=50, help="greedy decoding: most tokens, <eos> included")
    parser.add_argument("--hypotheses", help="write one tokenised test hypothesis per line to this file")
    parser.add_argument("--init", help="start from the weights of this attend model file (bench/translate_setup)")
    parser.add_argument("--order", help="train on the pairs and batches of this file (bench/translate_setup)")
    parser.add_argument("--losses", help="write every step's training loss to this file, one per line")
    parser.add_argument("--beam", type=int, default=1, help="decoding: beam width (1: greedy)")
    parser.add_argument("--decode-batch", type=int, default=64,
                        help="decoding: sources a batch (64, as attend eval's batches)")
    parser.add_argument("--decode-only", action="store_true",
                        help="no training: decode the test split with the weights of --init and time it")
    parser.add_argument("--self-test", action="store_true", help="check the model (no data needed) and exit")
    args = parser.parse_args(argv)
    if not args.self_test and not args.data:
        parser.error("--data is required (or --self-test)")
    if args.decode_only and not args.init:
        parser.error("--decode-only decodes the weights of --init FILE")
    if args.beam < 1:
        parser.error("--beam must be at least 1")
    if args.precision == "int8" and not args.decode_only:
        parser.error("--precision int8 is for decoding: give --decode-only")
    for name in ("hidden", "embed", "layers", "batch", "steps", "threads", "log_every", "max_length", "decode_batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.decoder == "luong-dot" and args.bidirectional:
        parser.error("luong-dot needs equal sizes; with --bidirectional use luong-general or luong-concat")
    return args


def write_hypotheses(args, hypotheses):
    if args.hypotheses:
        with open(args.hypotheses, "w", encoding="utf-8") as f:
            f.writelines(" ".join(h) + "\n" for h in hypotheses)


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.self_test:
        self_test(args)
        return 0
    data = Data(args.data)
    order = None
    if args.order:
        order = use_order(data, args.order, args.batch)
        if len(order) < args.steps:
            raise ValueError(f"{args.order}: {len(order)} steps, but --steps is {args.steps}")
    torch.manual_seed(args.seed)
    model = Seq2seq(len(data.source_tokens), len(data.target_tokens), args)
    if args.init:
        load_init(model, args.init, data, args)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"torch_translate: {len(data.train)} training pairs, {len(data.test_sources)} test sources; "
          f"{args.decoder} {args.cell}{' bidirectional' if args.bidirectional else ''}, {parameters} parameters; "
          f"{args.steps} steps of {args.batch}; torch {torch.__version__}, {torch.get_num_threads()} thread(s)"
          f"{'; weights of ' + args.init if args.init else ''}{'; batches of ' + args.order if args.order else ''}",
          file=sys.stderr, flush=True)
    if args.decode_only:
        if args.precision == "int8":
            # PyTorch's dynamic quantization: every Linear, GRU/LSTM and GRU/LSTM cell's weights in int8 per output
            # channel, their inputs quantized per tensor as they come (the fbgemm engine on x86)
            model = torch.ao.quantization.quantize_dynamic(
                model, {nn.Linear, nn.GRU, nn.LSTM, nn.GRUCell, nn.LSTMCell}, dtype=torch.qint8)
        bleu, exact, hypotheses, decode_seconds = evaluate(model, data, args)
        write_hypotheses(args, hypotheses)
        print(json.dumps({
            "beam": args.beam, "test_count": len(hypotheses), "decode_seconds": decode_seconds,
            "sentences_per_s": len(hypotheses) / decode_seconds, "bleu": bleu, "exact_match": exact,
            "threads": torch.get_num_threads(), "torch": torch.__version__, "init": args.init,
            "precision": args.precision, "quantized_engine": torch.backends.quantized.engine}))
        return 0
    steps, seconds, tokens, losses = train(model, data, args, order)
    if args.losses:
        with open(args.losses, "w", encoding="utf-8") as f:
            f.writelines(f"{value!r}\n" for value in losses)
    bleu, exact, hypotheses, decode_seconds = evaluate(model, data, args)
    write_hypotheses(args, hypotheses)
    tail = losses[-100:]
    print(json.dumps({
        "decoder": args.decoder, "cell": args.cell, "hidden": args.hidden, "embed": args.embed,
        "layers": args.layers, "bidirectional": args.bidirectional, "batch": args.batch, "steps": steps,
        "seed": args.seed, "lr": args.lr, "clip": args.clip, "parameters": parameters,
        "train_pairs": len(data.train), "seconds_train": seconds, "tokens_per_s": tokens / seconds,
        "final_train_loss": sum(tail) / len(tail), "test_count": len(hypotheses), "bleu": bleu,
        "exact_match": exact, "beam": args.beam, "decode_seconds": decode_seconds, "threads": torch.get_num_threads(), "torch": torch.__version__, "init": args.init,
        "order": args.order}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
