#!/usr/bin/env python3
"""The PyTorch side of attend serve's benchmark: an HTTP server of the same API, written the way a PyTorch user would.

    /usr/bin/python3 bench/torch_serve.py --model dates.safetensors [--port 8081] [--threads 1]

It loads an attend model file (a seq2seq model of the dates or the pairs task) into bench/torch_translate.py's model,
which decodes exactly as `attend predict` does, and answers POST /v1/predict ({"inputs": [...], "beam": k}) with
{"outputs": [{"output": text}, ...]} — Python's http.server.ThreadingHTTPServer, a thread a connection, one request
decoded at a time under a lock (no batching across clients), torch.inference_mode(). Inputs are read as the task
reads them: the dates task's characters; the pairs task's words split at spaces, so its inputs must already be in the
task's normal form (a test split written by `attend data --task pairs --write`: bench/compare_serve sends both servers
those). Prints "torch_serve: listening on http://127.0.0.1:PORT" when ready; SIGTERM or SIGINT stop it.

A benchmark helper, not part of the library: it needs Debian's python3-torch, and CI never runs it.
"""
import argparse
import http.server
import json
import os
import signal
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_translate as tt  # noqa: E402  (sets the BLAS thread variables before torch is imported)
import torch  # noqa: E402


class Translator:
    """An attend seq2seq model file in torch_translate's model, with the task's tokenisation."""

    def __init__(self, path):
        metadata, tensors = tt.read_attend_model(path)
        config, task = metadata["model"], metadata["task"]["name"]
        if task not in ("dates", "pairs"):
            raise ValueError(f"{path}: task {task}; this server reads the dates and pairs tasks")
        args = argparse.Namespace(decoder=config["decoder"], cell=config["cell"], hidden=config["hidden_size"],
                                  embed=config["embedding_dim"], layers=config["num_layers"],
                                  bidirectional=config["bidirectional"], dropout=0.0,
                                  attention_size=config["attention_size"],
                                  no_input_feeding=not config.get("input_feeding", True))
        self.source = {token: k for k, token in enumerate(metadata["source_vocabulary"])}
        self.target = metadata["target_vocabulary"]
        self.model = tt.Seq2seq(len(self.source), len(self.target), args)
        self.model.load_state_dict({tt.torch_name(name): t for name, t in tensors.items()}, strict=True)
        self.model.eval()
        self.characters = task == "dates"
        self.max_target = config.get("max_target_length", 50)
        self.lock = threading.Lock()

    def encode(self, text):
        tokens = list(text) if self.characters else tt.tokens_of(text)
        if not tokens:
            raise ValueError("empty input: nothing to read")
        return [self.source.get(token, tt.UNK) for token in tokens]

    def translate(self, texts, beam):
        """Outputs of texts (one batch: the request's own inputs), joined as the task joins them."""
        sources = [self.encode(text) for text in texts]
        with self.lock, torch.inference_mode():
            ids = tt.decode_all(self.model, sources, self.max_target, beam=beam)
        outputs = []
        for output in ids:
            tokens = [self.target[i] for i in output]
            outputs.append(("" if self.characters else " ").join(tokens))
        return outputs


def handler(translator):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep connections alive, as attend serve does
        # headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm holds the body until the
        # client's delayed ACK (40 ms on Linux) — an artefact, not PyTorch's speed
        disable_nagle_algorithm = True

        def answer(self, status, body):
            data = (json.dumps(body) + "\n").encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != "/v1/predict":
                return self.answer(404, {"error": f"no such path: {self.path}"})
            try:
                request = json.loads(body)
                outputs = translator.translate(request["inputs"], int(request.get("beam", 1)))
            except (ValueError, KeyError, TypeError) as e:
                return self.answer(400, {"error": str(e)})
            self.answer(200, {"outputs": [{"output": text} for text in outputs]})

        def log_message(self, *args):  # no line a request
            pass

    return Handler


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler(Translator(args.model)))
    server.daemon_threads = True
    stop = threading.Thread(target=server.shutdown)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.start())
    print(f"torch_serve: listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
