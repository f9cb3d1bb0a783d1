#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/): a few valid and a few broken inputs each.

    python3 tests/fuzz/make_corpus.py BUILD/apps/attend [CORPUS_FOLDER]

The attend program makes the valid model files (a tiny `attend train` of each task) and the generated date texts, so
that the seeds are what the project itself writes; this script writes the rest, and breaks copies of the valid files
in the ways a reader must refuse. Each seed is named for what it is; files found later by the fuzzer (crash
reproducers included) are added beside them under their own names. The output is deterministic, but for the
training time a model file records.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


# ---- safetensors ------------------------------------------------------------------------------------------------

def safetensors(header, data, pad=True):
    """A file: 8-byte little-endian header length, the header (JSON text, padded with spaces to 8 bytes), the data."""
    text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    if pad:
        text += " " * (-len(text) % 8)
    return struct.pack("<Q", len(text.encode("utf-8"))) + text.encode("utf-8") + data


def split(blob):
    """A safetensors file as (header dict, data bytes)."""
    (length,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + length]), blob[8 + length:]


def linear_checkpoint():
    """A checkpoint of the fuzz target's layer, Linear(3 -> 2): W (2, 3), b (2,), plus an optimizer tensor it skips."""
    w = struct.pack("<6f", 0.5, -0.25, 1.0, 2.0, -3.5, 0.125)
    b = struct.pack("<2f", 0.0, -1.0)
    m = struct.pack("<6f", *([0.01] * 6))
    header = {
        "__metadata__": {"format": "attend", "attend": json.dumps({"step": 3, "note": "fuzz seed"})},
        "W": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]},
        "optimizer.W.m": {"dtype": "F32", "shape": [2, 3], "data_offsets": [32, 56]},
    }
    return header, w + b + m


def checkpoint_seeds(folder, model_files):
    header, data = linear_checkpoint()
    write(folder, "linear-valid", safetensors(header, data))
    write(folder, "linear-no-metadata", safetensors({k: v for k, v in header.items() if k != "__metadata__"}, data))
    f64 = {"__metadata__": {}, "W": {"dtype": "F64", "shape": [2, 3], "data_offsets": [0, 48]},
           "b": {"dtype": "F64", "shape": [2], "data_offsets": [48, 64]}}
    write(folder, "linear-f64", safetensors(f64, bytes(64)))
    write(folder, "empty-header", safetensors({}, b""))
    write(folder, "scalar-bf16", safetensors({"x": {"dtype": "BF16", "shape": [], "data_offsets": [0, 2]}}, b"\x80\x3f"))
    # headers whose length claims far more than the file holds: refused by size, never allocated
    valid = safetensors(header, data)
    write(folder, "length-1GiB", struct.pack("<Q", 1 << 30) + valid[8:])
    write(folder, "length-max", b"\xff" * 8 + valid[8:])
    write(folder, "length-only", struct.pack("<Q", 1 << 40))
    write(folder, "truncated-data", valid[:-5])
    write(folder, "trailing-bytes", valid + b"\0" * 8)
    broken = dict(header, b={"dtype": "F32", "shape": [2], "data_offsets": [20, 28]})
    write(folder, "overlap", safetensors(broken, data))
    broken = dict(header, W={"dtype": "F32", "shape": [1 << 62, 4], "data_offsets": [0, 24]})
    write(folder, "shape-overflows", safetensors(broken, data))
    broken = dict(header, W={"dtype": "Q4", "shape": [2, 3], "data_offsets": [0, 24]})
    write(folder, "unknown-dtype", safetensors(broken, data))
    broken = dict(header, __metadata__={"attend": "{\"step\": ", "format": "attend"})
    write(folder, "metadata-not-json", safetensors(broken, data))
    broken = dict(header, __metadata__={"step": 3})
    write(folder, "metadata-not-strings", safetensors(broken, data))
    write(folder, "header-array", safetensors("[1, 2]", b""))
    write(folder, "header-nested", safetensors("[" * 200 + "]" * 200, b""))
    write(folder, "not-safetensors", b"PK\x03\x04 this is a zip file, not a checkpoint\n")

    for name, blob in model_files.items():
        write(folder, name + "-valid", blob)
        model_header, model_data = split(blob)
        metadata = json.loads(model_header["__metadata__"]["attend"])

        def edited(change):
            copy = json.loads(json.dumps(metadata))
            change(copy)
            return safetensors(dict(model_header, __metadata__={"format": "attend", "attend": json.dumps(copy)}),
                               model_data)

        write(folder, name + "-other-format", edited(lambda m: m.update(format="something-else")))
        write(folder, name + "-version-2", edited(lambda m: m.update(version=2)))
        write(folder, name + "-hidden-3", edited(lambda m: m["model"].update(hidden_size=3)))
        write(folder, name + "-no-eos", edited(lambda m: m["target_vocabulary"].remove("<eos>")))
        write(folder, name + "-vocabulary-size", edited(lambda m: m["source_vocabulary"].append("zzz")))
        write(folder, name + "-task-unknown", edited(lambda m: m["task"].update(name="translation")))
        write(folder, name + "-truncated", blob[:len(blob) // 2])


def model_files(attend, scratch):
    """Tiny models of the three tasks, as `attend train` writes them (with the optimizer's state)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    tiny = ["--hidden", "2", "--embed", "2", "--epochs", "1", "--batch", "8"]
    dates = os.path.join(scratch, "dates.safetensors")
    subprocess.run([attend, "train", "--task", "dates", "--train-size", "16", "--valid-size", "4", "--test-size", "4",
                    *tiny, "--out", dates], check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = os.path.join(scratch, "spa-eng.tsv")
    with open(data, "w", encoding="utf-8") as f:
        f.write("\n".join(f"{a}\t{b}" for a, b in PAIR_LINES) + "\n")
    pairs = os.path.join(scratch, "pairs.safetensors")
    subprocess.run([attend, "train", "--task", "pairs", "--data", data, "--source", "spa", "--target", "eng",
                    "--valid-size", "2", "--test-size", "2", "--min-count", "1", "--decoder", "luong-general",
                    "--cell", "lstm", "--bidirectional", *tiny, "--out", pairs],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    digits_data = os.path.join(scratch, "digits.csv")
    with open(digits_data, "w") as f:
        f.write("".join(digit_line(k) + "\n" for k in range(24)))
    digits = os.path.join(scratch, "digits.safetensors")
    subprocess.run([attend, "train", "--task", "digits", "--data", digits_data, "--valid-digits", "2", "--test-digits",
                    "2", "--train-size", "8", "--valid-size", "2", "--test-size", "2", "--annotation-size", "2",
                    "--patch-hidden", "0", *tiny, "--out", digits],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    result = {}
    for name, path in (("model-dates", dates), ("model-pairs", pairs), ("model-digits", digits)):
        with open(path, "rb") as f:
            result[name] = f.read()
    return result


# ---- images and digits ------------------------------------------------------------------------------------------

def digit_line(k):
    """A line of a digits file: 64 intensities 0..16 (a pattern, not a real digit) and the label k mod 10."""
    return ",".join(str((k * 7 + i * 3) % 17) for i in range(64)) + "," + str(k % 10)


def images_seeds(folder):
    write(folder, "p5-2x2", b"P5\n2 2\n255\n\x00\x10\x80\xff")
    write(folder, "p2-comments", b"P2\n# a comment\n3 2 # width height\n15\n0 1 2\n3 4 15\n")
    write(folder, "p5-16bit", b"P5\n2 1\n65535\n\x00\x01\xff\xff")
    write(folder, "p5-12x64", b"P5\n64 12\n255\n" + bytes((i * 7) % 256 for i in range(768)))
    write(folder, "p5-truncated", b"P5\n64 12\n255\n" + bytes(40))
    write(folder, "p2-above-maxval", b"P2\n2 1\n9\n1 10\n")
    write(folder, "digits-two-lines", digit_line(3) + "\n" + digit_line(9) + "\n")
    write(folder, "digits-bad-field", ",".join(["0"] * 63) + ",x,3\n")
    write(folder, "digits-crlf", ",".join(["16"] * 64) + ",0\r\n")
    write(folder, "empty", b"")


# ---- sentence pairs ---------------------------------------------------------------------------------------------

# Short Spanish-English pairs in the style of the Tatoeba files (written for these seeds).
PAIR_LINES = [
    ("Hola.", "Hello."),
    ("¿Dónde está la estación?", "Where is the station?"),
    ("No lo sé.", "I don't know."),
    ("Tengo 3,5 euros.", "I have 3.5 euros."),
    ("¡Qué día tan bonito!", "What a nice day!"),
    ("Ella vive en la ciudad.", "She lives in the city."),
    ("El tren sale a las 9.", "The train leaves at 9."),
    ("Es un libro muy conocido.", "It's a well-known book."),
]


def pairs_seeds(folder):
    lines = "".join(f"{a}\t{b}\n" for a, b in PAIR_LINES)
    write(folder, "spa-eng", lines)
    write(folder, "bom-crlf", "\ufeff" + lines.replace("\n", "\r\n"))
    write(folder, "attribution-column",
          "Hola.\tHello.\tCC-BY 2.0 (France) Attribution: tatoeba.org #1 (someone) & #2 (someone else)\n")
    write(folder, "blank-lines", "\n   \n\t\nHola.\tHello.\n\n")
    write(folder, "no-final-newline", "Adiós.\tGoodbye.")
    write(folder, "unicode-spaces", "Son las\u00a09\u202fh.\tIt is 9\u2009o'clock.\nl\u2019homme\u200b\tthe man\u00ad\n")
    write(folder, "combining-accents", "Cafe\u0301 CAFÉ\tCoffee\nΣΟΦΊΑ Ωmega \u2126\tWisdom\n")
    write(folder, "hindi", "मैं घर जा रहा हूँ।\tI am going home.\n")
    write(folder, "japanese", "私は学生です。\tI am a student.\n")
    write(folder, "space-token", "\u2581 x\tspace token\n")
    write(folder, "no-tab", "Hola. Hello.\nAdiós.\tGoodbye.\n")
    write(folder, "empty-side", "Hola.\t \n\tHello.\n")
    write(folder, "invalid-utf8", b"Hola.\tHello.\nCaf\xe9\tCoffee\n\xed\xa0\x80\tsurrogate\n\xc0\xafoverlong\tx\n")
    write(folder, "truncated-utf8", b"Adi\xc3")
    write(folder, "control-characters", "a\x00b\tc\x01d\x7f\n")
    write(folder, "empty", "")


# ---- dates ------------------------------------------------------------------------------------------------------

HAND_WRITTEN_DATES = [
    "Saturday 09 May 2018", "le 1er août 1999", "9 de mayo de 2018", "05/09/18", "MIÉRCOLES, 7 DE JULIO DE 2010",
    "the 21st of March, 1987", "am 3. März 2001", "sábado, 1º de mayo de 2021", "2000-02-29", "1900-02-29",
    "03/04/2018", "31 April 2001", "Feb 30 2020", "mar 3 2020", "12.13.2014", "99-12-31", "68-01-01", "69-01-01",
    "2099-12-31", "2100-01-01", "9th May", "  9   MAY   2018  ", "9 mai 2018 ☃", "Mo. 9. Mai 18",
]


def generated_dates(attend, scratch, count=24):
    """Sources the dates task generates (attend data writes them as space-separated characters)."""
    folder = os.path.join(scratch, "dates-data")
    subprocess.run([attend, "data", "--task", "dates", "--train-size", str(count), "--valid-size", "1", "--test-size",
                    "1", "--write", folder], check=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sources = []
    with open(os.path.join(folder, "train.tsv"), encoding="utf-8") as f:
        for line in f:
            characters = line.split("\t")[0]
            sources.append(characters[0::2])  # one character, one space, one character, ...
    return sources


def dates_seeds(folder, attend, scratch):
    for k, text in enumerate(HAND_WRITTEN_DATES):
        write(folder, f"written-{k:02d}", text)
    for k, text in enumerate(generated_dates(attend, scratch)):
        write(folder, f"generated-{k:02d}", text)
    write(folder, "invalid-utf8", b"9 ma\xffi 2018")


# ---- command lines ----------------------------------------------------------------------------------------------

COMMAND_LINES = [
    ["train", "--task", "dates", "--train-size", "1000", "--valid-size", "100", "--test-size", "100", "--epochs", "1",
     "--hidden", "32", "--embed", "16", "--out", "/tmp/attend-docs-dates.safetensors"],
    ["eval", "--model", "/tmp/attend-docs-dates.safetensors"],
    ["predict", "--model", "/tmp/attend-docs-dates.safetensors", "Saturday 09 May 2018", "le 1er août 1999"],
    ["train", "--task", "pairs", "--data", "spa-eng.tsv", "--source", "spa", "--target", "eng", "--hidden", "256",
     "--embed", "128", "--out", "spa-eng.safetensors"],
    ["eval", "--model", "spa-eng.safetensors", "--beam", "5", "--split", "validation", "--output", "out.txt"],
    ["translate", "--model", "spa-eng.safetensors", "--svg", "where.svg", "¿Dónde está la biblioteca?"],
    ["data", "--task", "pairs", "--data", "hin-eng.tsv", "--source", "hin", "--target", "eng", "--valid-size", "200",
     "--test-size", "300", "--write", "splits"],
    ["train", "--decoder", "luong-general", "--cell", "lstm", "--bidirectional", "--layers", "2", "--dropout", "0.2",
     "--attention-size", "64", "--lr=0.001", "--clip", "5", "--max-steps", "100", "--log-every", "10",
     "--save-every", "50", "--threads", "2", "--detect-anomaly", "--out", "m.safetensors"],
    ["train", "--resume", "m.last.safetensors", "--epochs", "8", "--time-limit", "30"],
    ["train", "--task", "pairs", "--data", "jpn.tsv", "--source-tokens", "characters", "--max-words", "0",
     "--min-count", "1", "--skip-bad-lines", "--out", "j.safetensors"],
    ["--help"], ["--version"], ["train", "--help"], [],
    ["train", "--hidden", "abc", "--out", "x"], ["train", "--decoder", "luong-cosine", "--out", "x"],
    ["predict"], ["train", "--task", "dates", "--data", "x.tsv", "--out", "x"], ["frobnicate"],
    ["train", "--resume", "a", "--hidden", "8"], ["eval", "--model", "m", "extra argument"],
]


def cli_seeds(folder):
    for k, args in enumerate(COMMAND_LINES):
        write(folder, f"line-{k:02d}", "\0".join(args))


SERVE_REQUESTS = {
    "request-minimal": '{"inputs": ["May 9, 2018"]}',
    "request-all-fields": '{"model": "dates", "inputs": ["May 9, 2018", "9.5.18"], "beam": 4, "scores": true, '
                          '"attention": true}',
    "request-escapes": '{"inputs": ["\\u00e9t\\u00e9 \\ud83d\\ude00 \\n\\t"]}',
    "request-stream": '{"inputs": ["May 9, 2018"], "stream": true, "attention": true}',
    "refused-stream-of-two": '{"inputs": ["May 9, 2018", "9.5.18"], "stream": true}',
    "translate-json": '{"q": ["Hola.", "Adiós."], "source": "auto", "target": "en", "format": "html", '
                      '"alternatives": 2, "api_key": "k"}',
    "translate-form": "q=Hola+mundo%21&source=es&target=en&format=text&alternatives=1",
    "translate-multipart": '--x\r\nContent-Disposition: form-data; name="q"\r\n\r\nHola\r\n'
                           '--x\r\nContent-Disposition: form-data; name="target"\r\n\r\nen\r\n--x--\r\n',
    "refused-unknown-field": '{"inputs": ["a"], "temperature": 0.5}',
    "refused-deep": '{"inputs": [[["a"]]]}',
    "refused-huge-number": '{"inputs": ["a"], "beam": 1e400}',
    "refused-too-many": '{"inputs": ["1","2","3","4","5","6","7","8","9"]}',
    "refused-malformed": '{"inputs": ["a"',
    "refused-invalid-utf8": b'{"inputs": ["May \xff 9"]}',
    "base64-image": "UDIgMiAyIDI1NQoxIDIgMyA0Cg==",
    "base64-padded": "Zm9vYg==",
    "explain-all-fields": '{"model": "dates", "input": "May 9, 2018", "beam": 3, "attribution": true, "steps": 16, '
                          '"precision": "int8"}',
    "explain-refused-precision": '{"input": "May 9, 2018", "precision": "fp8"}',
    "explain-refused-unknown-field": '{"input": "May 9, 2018", "inputs": ["a"]}',
    "query-examples": "model=dates&count=5",
    "query-escapes": "model=spa%2Deng+v2&count=1000&",
}


def serve_seeds(folder):
    """Bodies of POST /v1/predict, read and refused, base64 texts and GET /v1/examples's queries (the target reads
    each every way)."""
    for name, body in SERVE_REQUESTS.items():
        write(folder, name, body)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    attend = os.path.abspath(argv[1])
    corpus = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    with tempfile.TemporaryDirectory() as scratch:
        checkpoint_seeds(os.path.join(corpus, "checkpoint"), model_files(attend, scratch))
        pairs_seeds(os.path.join(corpus, "pairs"))
        dates_seeds(os.path.join(corpus, "dates"), attend, scratch)
        cli_seeds(os.path.join(corpus, "cli"))
        images_seeds(os.path.join(corpus, "images"))
        serve_seeds(os.path.join(corpus, "serve"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
