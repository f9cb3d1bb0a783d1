"""Compares model files written by `attend train` as a refactoring must leave them: the tensors byte for byte, and the
header (configuration, task, training state) as JSON with the wall-clock fields masked ("seconds" anywhere in the
metadata: training time changes from run to run, nothing else may).

Usage: compare_models.py DIR_A DIR_B     compares every *.safetensors of DIR_A with the same name in DIR_B
       compare_models.py FILE_A FILE_B
       ... --without /PATH/IN/HEADER     a field that A has and a change meant to drop (repeatable), e.g.
                                         /__metadata__/attend/training/state/options/decoder
Exits 1 naming the first difference of each file that differs (or is missing)."""
import json
import pathlib
import struct
import sys

TIME_FIELDS = {"seconds"}


def read(path):
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    return header, data[8 + size :]


def masked(value):
    """The metadata with every time field replaced; JSON strings inside the metadata are parsed and masked too."""
    if isinstance(value, dict):
        return {k: ("<time>" if k in TIME_FIELDS else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return masked(json.loads(value))
        except ValueError:
            return value
    return value


def first_difference(a, b, where=""):
    if type(a) is not type(b):
        return f"{where or '/'}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}/{k}: only in {'second' if k not in a else 'first'}"
            d = first_difference(a[k], b[k], f"{where}/{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{where}: {a!r} != {b!r}"


def without(header, paths):
    """The header with each of `paths` ("/__metadata__/attend/training/state/options/decoder") removed, if present."""
    for path in paths:
        keys, node = path.strip("/").split("/"), header
        for key in keys[:-1]:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(keys[-1], None)
    return header


def compare(a, b, dropped=()):
    if not b.exists():
        return f"{b} missing"
    (ha, da), (hb, db) = read(a), read(b)
    d = first_difference(without(masked(ha), dropped), masked(hb))
    if d:
        return f"header {d}"
    if da != db:
        return "tensor bytes differ"
    return None


args = sys.argv[1:]
dropped = [args[k + 1] for k in range(len(args) - 1) if args[k] == "--without"]
args = [x for k, x in enumerate(args) if x != "--without" and (k == 0 or args[k - 1] != "--without")]
a, b = pathlib.Path(args[0]), pathlib.Path(args[1])
pairs = [(f, b / f.name) for f in sorted(a.glob("*.safetensors"))] if a.is_dir() else [(a, b)]
failures = 0
for fa, fb in pairs:
    problem = compare(fa, fb, dropped)
    print(f"{fa.name}: {'same' if problem is None else problem}")
    failures += problem is not None
print(f"{len(pairs) - failures} of {len(pairs)} model files the same (time fields masked)")
sys.exit(1 if failures or not pairs else 0)
