"""Firefox driven through WebDriver BiDi, the W3C protocol Firefox itself serves (`--remote-debugging-port`), over a
WebSocket (python3-websocket): Debian packages Firefox ESR but no geckodriver, which Selenium would need. The class
offers the part of Selenium's WebDriver API the explorer's test uses, so that the same checks run in both browsers:
find_element(s) by id, CSS selector or tag name; an element's text, attributes, clicks, keys and files; scripts;
screenshots; the console's errors.

Input is the browser's own: clicks, pointer moves and keys are input.performActions (the element scrolled to the
middle of the view first, as WebDriver's click does), files input.setFiles. Choosing an option of a <select> sets its
value and fires "input" and "change", which is what WebDriver's click on an <option> does."""
import base64
import itertools
import json
import shutil
import socket
import subprocess
import tempfile
import time

import websocket  # python3-websocket


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BidiError(RuntimeError):
    pass


def _local(value):
    """A Python value as a BiDi LocalValue (script arguments)."""
    if isinstance(value, Element):
        return {"sharedId": value.shared_id}
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, float)):
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "value": [_local(v) for v in value]}
    raise TypeError(f"no BiDi value for {type(value).__name__}")


class Element:
    def __init__(self, driver, shared_id):
        self.driver, self.shared_id = driver, shared_id

    def _call(self, function, *args):
        return self.driver._call(function, self, *args)

    @property
    def text(self):
        return self._call("(e) => e.innerText.trim()")

    def get_attribute(self, name):
        # as Selenium's: a property where the element has one ("value"), a boolean attribute as "true" or None
        return self._call("""(e, name) => {
            if (name === "value" && "value" in e) return String(e.value);
            if (name === "hidden") return e.hidden ? "true" : null;
            return e.getAttribute(name);
          }""", name)

    def is_displayed(self):
        return self._call("""(e) => {
            const style = getComputedStyle(e);
            return style.visibility !== "hidden" && style.display !== "none" && e.getClientRects().length > 0;
          }""")

    def find_elements(self, by, value):
        return self.driver.find_elements(by, value, within=self)

    def _pointer(self, *actions):
        self._call("(e) => e.scrollIntoView({block: 'center', inline: 'center'})")
        move = {"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": _local(self)}}
        self.driver._command("input.performActions", {"context": self.driver.context, "actions": [
            {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
             "actions": [move, *actions]}]})

    def click(self):
        self._pointer({"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0})

    def hover(self):
        self._pointer()

    def clear(self):
        self._call("(e) => { e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); }")

    def send_keys(self, text):
        if self._call("(e) => e.type") == "file":
            self.driver._command("input.setFiles", {"context": self.driver.context, "element": _local(self),
                                                    "files": [text]})
            return
        self._call("(e) => e.focus()")
        self.driver.press(*text)

    def select(self, value):
        self._call("""(e, value) => {
            e.value = value;
            e.dispatchEvent(new Event("input", {bubbles: true}));
            e.dispatchEvent(new Event("change", {bubbles: true}));
          }""", str(value))


class Firefox:
    """A headless Firefox of its own profile, on a free port; quit() ends it."""

    def __init__(self, width, height):
        self.profile = tempfile.mkdtemp(prefix="attend-firefox-")
        port = _free_port()
        self.process = subprocess.Popen(
            [shutil.which("firefox-esr") or shutil.which("firefox"), "--headless", "--no-remote", "--profile",
             self.profile, "--remote-debugging-port", str(port), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ids = itertools.count(1)
        self.errors = []
        self.socket = self._connect(port)
        self._command("session.new", {"capabilities": {}})
        self.context = self._command("browsingContext.getTree", {})["contexts"][0]["context"]
        self._command("session.subscribe", {"events": ["log.entryAdded"]})
        self._command("browsingContext.setViewport", {"context": self.context,
                                                      "viewport": {"width": width, "height": height}})

    def _connect(self, port):
        end = time.time() + 60
        while True:
            try:
                # no Origin header: Firefox refuses a WebSocket from a page's origin
                return websocket.create_connection(f"ws://127.0.0.1:{port}/session", timeout=60,
                                                   suppress_origin=True)
            except (OSError, websocket.WebSocketException):
                if time.time() > end or self.process.poll() is not None:
                    raise
                time.sleep(0.2)

    def _command(self, method, params):
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("type") == "event":
                entry = message["params"]
                if message["method"] == "log.entryAdded" and entry.get("level") == "error":
                    self.errors.append(entry.get("text"))
            elif message.get("id") == number:
                if message.get("type") == "error":
                    raise BidiError(f"{method}: {message.get('error')}: {message.get('message')}")
                return message["result"]

    def _value(self, remote):
        """A BiDi RemoteValue as a Python value (nodes as Elements)."""
        kind = remote["type"]
        if kind in ("undefined", "null"):
            return None
        if kind == "node":
            return Element(self, remote["sharedId"])
        if kind in ("array", "nodelist", "htmlcollection"):
            return [self._value(v) for v in remote.get("value", [])]
        if kind == "object":
            return {k: self._value(v) for k, v in remote.get("value", [])}
        return remote.get("value")

    def _call(self, function, *args):
        result = self._command("script.callFunction", {
            "functionDeclaration": function, "awaitPromise": False, "target": {"context": self.context},
            "arguments": [_local(a) for a in args], "serializationOptions": {"maxObjectDepth": 10}})
        if result["type"] == "exception":
            raise BidiError("script: " + result["exceptionDetails"]["text"])
        return self._value(result["result"])

    # ---- Selenium's names ----------------------------------------------------------------------------------------

    def get(self, url):
        self._command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def execute_script(self, code, *args):
        return self._call("function() {" + code + "\n}", *args)

    def find_elements(self, by, value, within=None):
        selector = {"id": lambda v: "#" + v, "css selector": lambda v: v, "tag name": lambda v: v}[by](value)
        params = {"context": self.context, "locator": {"type": "css", "value": selector}}
        if within is not None:
            params["startNodes"] = [_local(within)]
        return [Element(self, node["sharedId"]) for node in self._command("browsingContext.locateNodes",
                                                                          params)["nodes"]]

    def find_element(self, by, value):
        found = self.find_elements(by, value)
        if not found:
            raise BidiError(f"no element {by} {value!r}")
        return found[0]

    def press(self, *keys):
        """Keys pressed on the element that has the focus."""
        actions = [a for k in keys for a in ({"type": "keyDown", "value": k}, {"type": "keyUp", "value": k})]
        self._command("input.performActions", {"context": self.context, "actions": [
            {"type": "key", "id": "keyboard", "actions": actions}]})

    def save_screenshot(self, path):
        shot = self._command("browsingContext.captureScreenshot", {"context": self.context})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def quit(self):
        try:
            self._command("session.end", {})
        except Exception:  # noqa: BLE001 — it is going anyway
            pass
        self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
