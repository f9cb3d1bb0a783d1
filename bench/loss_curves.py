#!/usr/bin/python3
"""Compares the training losses of `attend train --log-every 1` and `bench/torch_translate.py --losses FILE` step by
step, for two runs that start from the same weights and see the same batches (bench/translate_setup, --init/--order):
where do the curves part?

  /usr/bin/python3 bench/loss_curves.py ATTEND.log TORCH.losses [--window 200]

ATTEND.log is attend's standard error: with --log-every 1 its progress lines ("epoch 1/100  step 7/2400  loss 4.7348
…") hold each step's loss, printed with 4 decimals. TORCH.losses has one loss per line at full precision. Prints, per
window of steps: both mean losses and their relative difference, the mean and largest per-step |attend − torch| /
torch, and how many steps are equal up to attend's printing (|attend − torch| ≤ 5e-5, half the last printed
decimal); then the first step whose relative difference exceeds 1e-4, 1e-3, 1e-2 and 1e-1.
"""
import argparse
import re
import sys


def attend_losses(path):
    losses = {}
    pattern = re.compile(r"step (\d+)/\d+  loss ([0-9.]+|nan|inf)")
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = pattern.search(line)
            if match:
                losses[int(match.group(1))] = float(match.group(2))
    steps = sorted(losses)
    if steps != list(range(1, len(steps) + 1)):
        raise ValueError(f"{path}: not one loss line per step (run attend train with --log-every 1)")
    return [losses[s] for s in steps]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("attend_log")
    parser.add_argument("torch_losses")
    parser.add_argument("--window", type=int, default=200)
    args = parser.parse_args(argv)
    a = attend_losses(args.attend_log)
    with open(args.torch_losses, encoding="utf-8") as f:
        t = [float(line) for line in f if line.strip()]
    n = min(len(a), len(t))
    if len(a) != len(t):
        print(f"note: attend has {len(a)} steps, torch {len(t)}; comparing the first {n}")
    relative = [abs(a[k] - t[k]) / abs(t[k]) for k in range(n)]
    same = [abs(a[k] - t[k]) <= 5e-5 for k in range(n)]  # attend prints 4 decimals: equal up to its rounding
    print(f"{'steps':>11}  {'attend':>7}  {'torch':>7}  {'mean rel diff':>13}  {'per-step |rel diff|':>23}  "
          f"{'equal':>13}")
    print(f"{'':>11}  {'mean':>7}  {'mean':>7}  {'':>13}  {'mean':>11}  {'max':>11}  {'(|d| ≤ 5e-5)':>13}")
    for start in range(0, n, args.window):
        end = min(n, start + args.window)
        mean_a = sum(a[start:end]) / (end - start)
        mean_t = sum(t[start:end]) / (end - start)
        window = relative[start:end]
        print(f"{start + 1:>5}-{end:<5}  {mean_a:7.4f}  {mean_t:7.4f}  {(mean_a - mean_t) / mean_t:+13.2e}  "
              f"{sum(window) / len(window):11.2e}  {max(window):11.2e}  {sum(same[start:end]):>6}/{end - start:<6}")
    mean_a, mean_t = sum(a[:n]) / n, sum(t[:n]) / n
    print(f"{'all':>11}  {mean_a:7.4f}  {mean_t:7.4f}  {(mean_a - mean_t) / mean_t:+13.2e}  "
          f"{sum(relative) / n:11.2e}  {max(relative):11.2e}  {sum(same):>6}/{n:<6}")
    for threshold in (1e-4, 1e-3, 1e-2, 1e-1):
        first = next((k + 1 for k in range(n) if relative[k] > threshold), None)
        print(f"first step with |rel diff| > {threshold:g}: {first if first else 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
