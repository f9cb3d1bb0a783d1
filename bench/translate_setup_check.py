#!/usr/bin/python3
"""Checks that bench/translate_setup writes what `attend train` starts from, against a one-step run of attend itself:

  translate_setup --init INIT --order ORDER train … --seed S …           (the setup)
  attend train … --seed S … --max-steps 1 --log-every 1 --out STEP1     (the same command line, one step)
  /usr/bin/python3 bench/translate_setup_check.py INIT ORDER STEP1 DIR [STEP1_LOSS]

DIR is the data folder of `attend data … --seed S --write DIR`; STEP1_LOSS the loss attend printed for step 1. STEP1
holds the weights after one Adam step and the optimizer's state m = (1 − β1) g, v = (1 − β2) g², g the clipped
gradient of step 1. The checks:
  1. weights: INIT, moved by one Adam step computed from STEP1's own m and v in float32 as nn/optim.cpp does, gives
     STEP1's weights (all equal up to a float rounding of w): INIT is the model attend started from.
  2. gradient: PyTorch (bench/torch_translate.py's model) from INIT on ORDER's first batch gives the loss attend printed
     and, after clipping, a gradient g with 0.1 g ≈ STEP1's m (the largest difference relative to the largest |m| of
     each parameter, and the cosine): the first batch is attend's, pair for pair and token for token (a different batch
     would give a different gradient everywhere), and the two implementations compute the same function.
  3. ORDER's pairs equal DIR/train.tsv as torch_translate.py encodes it (its --order check).
Prints one line per check and exits with status 1 if one fails. Needs Debian's python3-torch.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_translate as tt  # noqa: E402


def read_with_optimizer(path):
    """Metadata, weights and the Adam state (exp_avg, exp_avg_sq by parameter name, and the step) of an attend file."""
    metadata, tensors = tt.read_attend_file(path)
    weights = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
    m = {k[len("optimizer.adam.exp_avg."):]: v for k, v in tensors.items() if k.startswith("optimizer.adam.exp_avg.")}
    v = {k[len("optimizer.adam.exp_avg_sq."):]: t for k, t in tensors.items()
         if k.startswith("optimizer.adam.exp_avg_sq.")}
    return metadata, weights, m, v, tensors.get("optimizer.adam.step")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("init")
    parser.add_argument("order")
    parser.add_argument("step1")
    parser.add_argument("data")
    parser.add_argument("step1_loss", nargs="?", type=float, help="the loss `attend train` printed for step 1")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--clip", type=float, default=1.0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    failed = []

    init_meta, w0, _, _, _ = read_with_optimizer(args.init)
    step1_meta, w1, m, v, step = read_with_optimizer(args.step1)
    for key in ("model", "source_vocabulary", "target_vocabulary"):
        if init_meta[key] != step1_meta[key]:
            failed.append(f"the files' {key} differ")
    if step is None or float(step) != 1.0 or set(m) != set(w0) or set(w1) != set(w0):
        failed.append(f"{args.step1}: not one Adam step of the same parameters (step {step})")
        print("\n".join(failed))
        return 1

    # 1. one Adam step from INIT with STEP1's m and v, in float32 with nn/optim.cpp's (PyTorch's) formula
    lr = args.lr
    step_size = torch.tensor(lr / (1 - 0.9), dtype=torch.float32)
    bias_correction2_sqrt = torch.tensor((1 - 0.999) ** 0.5, dtype=torch.float32)
    eps = torch.tensor(1e-8, dtype=torch.float32)
    total = equal = 0
    worst = 0.0
    for name in w0:
        predicted = w0[name] - step_size * m[name] / (v[name].sqrt() / bias_correction2_sqrt + eps)
        total += predicted.numel()
        equal += int((predicted == w1[name]).sum())
        worst = max(worst, float(((predicted - w1[name]).abs() / w1[name].abs().clamp_min(1e-30)).max()))
    moved = sum(int((w0[n] != w1[n]).sum()) for n in w0)
    ok = worst < 1e-6
    print(f"1. weights: INIT + one Adam step (STEP1's m, v) = STEP1's weights: {equal}/{total} bit-identical, largest "
          f"relative difference {worst:.2e}; {moved} weights moved in that step  {'ok' if ok else 'FAILED'}")
    if not ok:
        failed.append("weights")

    # 3. the order's pairs are the data folder's training pairs; then 2. the gradient of the first batch
    data = tt.Data(args.data)
    batches = tt.use_order(data, args.order, max(len(b) for b in tt.read_order(args.order)[1]))
    print(f"3. pairs: the order file's {len(data.train)} pairs = {args.data}/train.tsv encoded  ok")
    config = step1_meta["model"]
    model_args = argparse.Namespace(decoder=config["decoder"], cell=config["cell"], hidden=config["hidden_size"],
                                    embed=config["embedding_dim"], layers=config["num_layers"],
                                    bidirectional=config["bidirectional"], dropout=config["dropout"],
                                    attention_size=config["attention_size"],
                                    no_input_feeding=not config["input_feeding"])
    model = tt.Seq2seq(len(data.source_tokens), len(data.target_tokens), model_args)
    tt.load_init(model, args.init, data, model_args)
    model.train()
    first = batches[0]
    source, lengths, target_in, target_out = tt.make_batch([data.train[i][0] for i in first],
                                                           [data.train[i][1] for i in first])
    loss = model.loss(source, lengths, target_in, target_out)
    loss.backward()
    norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip))
    parameters = dict(model.named_parameters())
    worst_name, worst_relative, dot, mm, gg = "", 0.0, 0.0, 0.0, 0.0
    for name in m:
        g = parameters[tt.torch_name(name)].grad
        expected = 0.1 * g  # m after one step: (1 − β1) g
        scale = float(m[name].abs().max())
        relative = float((expected - m[name]).abs().max()) / scale if scale > 0 else float(expected.abs().max())
        if relative > worst_relative:
            worst_name, worst_relative = name, relative
        dot += float((expected.double() * m[name].double()).sum())
        mm += float((m[name].double() ** 2).sum())
        gg += float((expected.double() ** 2).sum())
    cosine = dot / (mm * gg) ** 0.5
    loss_ok = args.step1_loss is None or abs(loss.item() - args.step1_loss) < 1e-4
    ok = worst_relative < 1e-3 and cosine > 1 - 1e-6 and loss_ok
    print(f"2. gradient of step 1 (batch of {len(first)} pairs, source length {int(lengths.max())}, target length "
          f"{target_in.shape[1]}): PyTorch loss {loss.item():.6f}"
          f"{f' (attend printed {args.step1_loss:.4f})' if args.step1_loss is not None else ''}, gradient norm "
          f"{norm:.4f} before clipping; 0.1·g vs attend's m: largest difference {worst_relative:.2e} of the "
          f"parameter's largest |m| ({worst_name}), cosine {cosine:.9f}  {'ok' if ok else 'FAILED'}")
    if not ok:
        failed.append("gradient")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
