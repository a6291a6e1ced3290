#!/usr/bin/env python3
"""Browser tests of `gpuencode studio`: the page (Sources/GPUEncodeStudio/studio.html) in headless
Chromium, driven by Selenium, against the real server.

    bash Tests/Studio/run.sh --bin .build/debug/gpuencode [--shots DIR]

The oracles are independent of the server: the page's pixels are compared with pictures that the
CLI's existing `gpuencode preview` renders on its own, and the split is checked with a copy of the
split filter's maths (Sources/GPUEncodeFilters/SplitFilter.swift) and against `preview --compare`.
Every test prints `ok NAME` or `FAIL NAME: why`; the last line is `studio: N passed, M failed`, and
the exit status is non-zero when anything failed.
"""

import argparse
import base64
import http.client
import json
import math
import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"
WAIT = 30            # seconds: llvmpipe on 2 cores, a debug build, is slow
START_WAIT = 90      # the server opens the movie and a GL context before it prints its URL
TOLERANCE = 2        # code values between the page's pixels and `preview`'s
MARGIN = 4           # pixels left out on each side of the divider

LOOK = {
    "version": 2,
    "name": "look",
    "description": "Studio browser tests: sepia, then a vignette",
    "filters": [
        {"filter": "sepia", "intensity": 0.8},
        {"filter": "vignette", "start": 0.2, "end": 0.6},
    ],
}


class Failure(Exception):
    """A check that did not hold: the test fails with this message."""


def check(condition, message):
    if not condition:
        raise Failure(message)


# ---------------------------------------------------------------------------------------------
# The session: fixtures, the server, the browser.

class Server:
    """One `gpuencode studio` process: its URL, port and token from the line it prints."""

    def __init__(self, binary, cwd, args, log):
        self.command = [binary, "studio", *args]
        self.cwd = cwd
        self.log = log
        self.lines = queue.Queue()
        self.process = None

    def start(self):
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(self.command, cwd=self.cwd, stdout=subprocess.PIPE, stderr=log, text=True)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        first = self._next_line(START_WAIT)
        m = re.fullmatch(r"gpuencode studio: (http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64}))", first or "")
        check(m, f"expected 'gpuencode studio: http://127.0.0.1:PORT/?token=64HEX' on stdout, got {first!r}{self.tail()}")
        self.url, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        self.second_line = self._next_line(5)   # checked by test a: "...; Ctrl-C stops."
        print(f"studio server: {' '.join(self.command)} (cwd {self.cwd}) -> {self.url}")

    def _read_stdout(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _next_line(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def tail(self):
        """The end of the server's stderr, for failure messages."""
        try:
            with open(self.log) as f:
                tail = f.read()[-2000:]
        except OSError:
            tail = ""
        return f"\n  server stderr: {tail}" if tail.strip() else ""

    def stop(self):
        """SIGINT, as Ctrl-C; the exit status, which must be 0 within a few seconds."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return "still running 10 s after SIGINT (killed)"

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Session:
    """The fixtures, the server under test and the browser, shared by the tests."""

    def __init__(self, binary, shots):
        self.bin = os.path.abspath(binary)
        self.shots = shots
        self.tmp = tempfile.mkdtemp(prefix="studio-tests-")
        self.dir = os.path.join(self.tmp, "looks")          # the preset's folder
        self.look = os.path.join(self.dir, "look.json")
        self.clip = os.path.join(self.tmp, "clip.mp4")
        self.server = None
        self.driver = None
        self.previews = {}                                  # (preset, time, extra) -> picture

    # Fixtures --------------------------------------------------------------------------------

    def make_fixtures(self):
        os.makedirs(self.dir)
        run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "3",
             "-c:v", "libx264", "-pix_fmt", "yuv420p", self.clip])
        with open(self.look, "w") as f:
            f.write(json.dumps(LOOK, indent=2) + "\n")
        self.look_text = open(self.look).read()

    # The server ------------------------------------------------------------------------------

    def start_server(self, *extra, log="server.log"):
        """`BIN studio clip.mp4 --preset looks/look.json --port 0 [extra]` in the temporary folder."""
        help_run = subprocess.run([self.bin, "studio", "--help"], capture_output=True, text=True)
        check(help_run.returncode == 0 and "studio" in help_run.stdout,
              f"{self.bin} studio --help: exit {help_run.returncode}; is there a studio subcommand?")
        server = Server(self.bin, self.tmp, ["clip.mp4", "--preset", os.path.relpath(self.look, self.tmp), "--port", "0", *extra],
                        os.path.join(self.tmp, log))
        try:
            server.start()
        except BaseException:
            server.kill()
            raise
        return server

    @property
    def url(self):
        return self.server.url

    @property
    def port(self):
        return self.server.port

    @property
    def token(self):
        return self.server.token

    def server_tail(self):
        return self.server.tail() if self.server else ""

    # HTTP without a browser ------------------------------------------------------------------

    def request(self, method, path, body=None, headers=None, token=True, host=None):
        """(status, headers, body bytes). `token`: True for the session's in the header, False for
        none, or a string to send instead. `host`: the Host header (default 127.0.0.1:PORT)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            if token is True:
                conn.putheader("X-Studio-Token", self.token)
            elif isinstance(token, str):
                conn.putheader("X-Studio-Token", token)
            for k, v in (headers or {}).items():
                conn.putheader(k, v)
            data = body.encode() if isinstance(body, str) else body
            if data is not None:
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders()
            if data is not None:
                try:
                    conn.send(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # a server may answer (413) and close before reading a large body
            try:
                response = conn.getresponse()
                return response.status, dict(response.getheaders()), response.read()
            except (http.client.HTTPException, ConnectionError) as e:
                raise Failure(f"{method} {path}: the server closed the connection without an answer ({e})")
        finally:
            conn.close()

    def state(self):
        status, _, body = self.request("GET", "/api/state")
        check(status == 200, f"GET /api/state: expected 200, got {status} {body[:200]!r}")
        return json.loads(body)

    # The browser -----------------------------------------------------------------------------

    def start_browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
                    "--force-device-scale-factor=1", "--disable-gpu"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_script_timeout(WAIT)

    def open_page(self):
        """A fresh page (each test starts from the preset as the server was given it), first picture drawn."""
        self.driver.get(self.url)
        self.wait(lambda d: self.js("return !!(window.studio && window.studio.ready && !window.studio.busy)"),
                  "window.studio.ready (the first picture)")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, condition, what, timeout=WAIT):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
        except Exception as e:
            status = self.js("return document.getElementById('status').textContent") if self.driver else ""
            error = self.js("return document.getElementById('json-error').textContent") if self.driver else ""
            raise Failure(f"timed out after {timeout} s waiting for {what} (#status {status!r}, #json-error {error!r})"
                          f"{self.server_tail()}") from e

    def renders(self):
        return self.js("return window.studio.renders")

    def render_time(self):
        """The time the scrubber is at (what the next render asks for)."""
        return float(self.find("#time").get_attribute("value"))

    def wait_picture(self, before, what="a new picture"):
        """Until a picture newer than render count `before` is drawn and nothing else is pending."""
        self.wait(lambda d: self.js("return window.studio.renders > arguments[0] && !window.studio.busy", before), what)

    def set_value(self, element, value):
        """Sets a control's value as a user would end up with, with `input` and `change` events."""
        self.js("""
            const [el, value] = arguments;
            const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype
                        : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
            Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, value);
            el.dispatchEvent(new Event('input', {bubbles: true}));
            el.dispatchEvent(new Event('change', {bubbles: true}));
        """, element, str(value))

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def finds(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def json_text(self):
        return self.find("#json").get_attribute("value")

    def json_doc(self):
        text = self.json_text()
        try:
            return json.loads(text)
        except ValueError as e:
            raise Failure(f"#json is not JSON ({e}): {text!r}")

    def canvas(self):
        """The #view canvas's pixels as an HxWx4 uint8 array (getImageData, base64 through the driver)."""
        w, h, data = self.js("""
            const c = document.getElementById('view');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let s = '';
            for (let i = 0; i < d.length; i += 0x8000) s += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
            return [c.width, c.height, btoa(s)];
        """)
        return np.frombuffer(base64.b64decode(data), np.uint8).reshape(h, w, 4)

    def screenshot(self, name):
        path = os.path.join(self.shots, name)
        self.driver.save_screenshot(path)
        print(f"  screenshot {path}")

    def browser_errors(self):
        """SEVERE console messages (script errors, CSP refusals, failed requests) since the last call."""
        try:
            return [e["message"] for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]
        except Exception:
            return []

    # The oracle: the CLI's own preview -------------------------------------------------------

    def preview(self, preset, at, extra=()):
        """`gpuencode preview CLIP --preset PRESET --at AT [extra] -o x.png` as an HxWx4 array."""
        key = (preset, at, tuple(extra))
        if key not in self.previews:
            png = os.path.join(self.tmp, f"preview-{len(self.previews)}.png")
            run([self.bin, "preview", self.clip, "--preset", preset, "--at", repr(at), *extra, "-o", png, "-y"], cwd=self.tmp)
            self.previews[key] = decode_png(png)
        return self.previews[key]

    def write_preset(self, name, doc):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
        return path

    def close(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:
                pass


def run(command, cwd=None):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failure(f"{' '.join(command)}: exit {result.returncode}: {(result.stderr or result.stdout).strip()[-800:]}")
    return result


def decode_png(path):
    """RGBA8 pixels of a picture, decoded by the ffmpeg CLI."""
    probe = json.loads(run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "json", path]).stdout)["streams"][0]
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(probe["height"], probe["width"], 4)


# ---------------------------------------------------------------------------------------------
# Pixel checks.

def sides(width, height, split, angle, margin=MARGIN):
    """Masks of the pixels on A's side and on B's side of the divider, `margin` pixels or more away
    from it. A copy of the split filter's maths (SplitFilter.swift): n = (cos a, sin a) with y down,
    reach = |n.x| w/2 + |n.y| h/2, d = dot(p - centre, n) - (2 split - 1) reach at pixel centres;
    A (the overlay) where d < 0."""
    a = math.radians(angle)
    nx, ny = math.cos(a), math.sin(a)
    ys, xs = np.mgrid[0:height, 0:width]
    reach = abs(nx) * width / 2 + abs(ny) * height / 2
    d = (xs + 0.5 - width / 2) * nx + (ys + 0.5 - height / 2) * ny - (2 * split - 1) * reach
    return d < -margin, d > margin


def same_pixels(got, want, mask, what):
    """The RGB of `got` equals `want` within TOLERANCE wherever `mask` holds."""
    check(got.shape == want.shape, f"{what}: the canvas is {got.shape[1]}x{got.shape[0]}, the preview {want.shape[1]}x{want.shape[0]}")
    check(mask.sum() > 1000, f"{what}: only {mask.sum()} pixels to compare")
    diff = np.abs(got[..., :3].astype(np.int16) - want[..., :3].astype(np.int16)).max(axis=2)
    bad = (diff > TOLERANCE) & mask
    if bad.any():
        ys, xs = np.nonzero(bad)
        raise Failure(f"{what}: {bad.sum()} of {mask.sum()} pixels differ by more than {TOLERANCE} "
                      f"(max {diff[mask].max()}; first at x={xs[0]} y={ys[0]}: page {got[ys[0], xs[0], :3].tolist()}, "
                      f"preview {want[ys[0], xs[0], :3].tolist()})")


def differ(a, b, mask, what):
    """The two renders really differ there, so comparing against the right one means something."""
    mean = np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16))[mask].mean()
    check(mean > 8, f"{what}: the original and the preset are too alike there (mean difference {mean:.1f}) for the check to tell them apart")


def check_split(s, split, angle, name, expected_b=None, at=None):
    """The canvas shows the original (preview --preset identity) on A's side and the look on B's,
    of the frame at `at` (default: the time the page says it shows)."""
    t = s.js("return window.studio.time") if at is None else at
    got = s.canvas()
    h, w = got.shape[:2]
    original = s.preview("identity", t)
    look = expected_b if expected_b is not None else s.preview(s.look, t)
    a_side, b_side = sides(w, h, split, angle)
    differ(original, look, a_side, f"{name}, A side")
    differ(original, look, b_side, f"{name}, B side")
    same_pixels(got, original, a_side, f"{name}: A side (split {split:.4f}, angle {angle}) vs preview --preset identity --at {t}")
    same_pixels(got, look, b_side, f"{name}: B side (split {split:.4f}, angle {angle}) vs preview --preset look.json --at {t}")


def drag(s, start, end, touch=False):
    """Drags on #view from `start` to `end`, each (x, y) as fractions of the canvas, with the
    mouse or (`touch`) a finger."""
    view = s.find("#view")
    box = s.js("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height];", view)
    # Selenium 4 offsets are from the element's centre, in CSS pixels.
    offset = lambda p: (round((p[0] - 0.5) * box[0]), round((p[1] - 0.5) * box[1]))
    x0, y0 = offset(start)
    x1, y1 = offset(end)
    if touch:
        finger = ActionBuilder(s.driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
        finger.pointer_action.move_to(view, x0, y0).pointer_down()
        for i in range(1, 6):
            finger.pointer_action.move_to(view, round(x0 + (x1 - x0) * i / 5), round(y0 + (y1 - y0) * i / 5))
        finger.pointer_action.pointer_up()
        finger.perform()
        return box
    chain = ActionChains(s.driver).move_to_element_with_offset(view, x0, y0).click_and_hold()
    steps = 5
    for i in range(1, steps + 1):
        chain.move_by_offset(round(x0 + (x1 - x0) * i / steps) - round(x0 + (x1 - x0) * (i - 1) / steps),
                             round(y0 + (y1 - y0) * i / steps) - round(y0 + (y1 - y0) * (i - 1) / steps))
    chain.release().perform()
    return box


def card_control(s, index, selector):
    return s.find(f'#filters .filter-card[data-index="{index}"] {selector}')


def frame_step(s):
    return 1 / s.state()["fps"]


# ---------------------------------------------------------------------------------------------
# The tests.

def test_a_page_loads(s):
    s.browser_errors()
    s.open_page()
    state = s.state()
    size = s.js("const c = document.getElementById('view'); return [c.width, c.height];")
    check(size == [state["width"], state["height"]], f"#view is {size}, the state says {state['width']}x{state['height']}")
    check(size == [1280, 720], f"#view is {size}, the clip is 1280x720")
    t = s.js("return window.studio.time")
    check(abs(t - state["time"]) < 1e-6, f"window.studio.time {t}, the state's first time {state['time']}")
    check(abs(state["time"] - 0.3) < 0.02, f"the first frame shown should be 10% into the 3 s clip, got {state['time']}")
    check(s.json_doc() == LOOK, f"#json holds {s.json_text()!r}, not look.json")
    cards = s.finds("#filters .filter-card")
    check(len(cards) == 2, f"{len(cards)} .filter-card, the preset has 2 filters")
    check([c.get_attribute("data-index") for c in cards] == ["0", "1"], "cards' data-index should be 0, 1")
    check(s.find("#save-name").get_attribute("value") == "look.json",
          f"#save-name is {s.find('#save-name').get_attribute('value')!r}, expected look.json")
    check(s.find("#json-error").text == "", f"#json-error shows {s.find('#json-error').text!r} for a valid preset")
    studio = s.js("return window.studio")
    check(studio["renders"] >= 1 and studio["split"] == 0.5 and studio["angle"] == 0,
          f"window.studio after load: {studio}")
    check(s.find("#latency").text != "", "#latency is empty after the first picture")
    for control, low, high in (("#angle", "0", "180"), ("#split", "0", "1")):
        element = s.find(control)
        check((element.get_attribute("type"), element.get_attribute("min"), element.get_attribute("max")) == ("range", low, high),
              f"{control} should be a range input {low}...{high}")
    # The default split: the original left, the look right.
    check_split(s, 0.5, 0, "page load")
    s.screenshot("a-loaded.png")
    errors = [e for e in s.browser_errors() if "favicon" not in e]
    check(not errors, f"browser console errors: {errors}")

    # At 1280x800 everything is on screen: the picture beside the panel, the panel's parts in view.
    s.driver.set_window_size(1280, 800)
    try:
        s.wait(lambda d: s.js("return window.innerWidth") <= 1280, "the window to shrink")
        time.sleep(0.3)   # the canvas is fitted to its area on the next resize observation
        rects = s.js("""
            const r = (id) => { const b = document.getElementById(id).getBoundingClientRect();
                                return [b.left, b.top, b.right, b.bottom]; };
            return {view: r('view'), panel: r('panel'), json: r('json'), save: r('save'), add: r('add'),
                    time: r('time'), w: innerWidth, h: innerHeight};
        """)
        view, panel = rects["view"], rects["panel"]
        check(view[2] <= panel[0] + 1, f"at 1280x800 the picture {view} runs under the panel {panel}")
        check(view[2] - view[0] >= 600, f"at 1280x800 the picture is only {view[2] - view[0]:.0f} px wide")
        aspect = (view[2] - view[0]) / (view[3] - view[1])
        check(abs(aspect - 16 / 9) < 0.02, f"at 1280x800 the picture is {aspect:.3f}:1, the clip 16:9")
        for name in ("json", "save", "add", "time"):
            box = rects[name]
            check(0 <= box[0] and box[2] <= rects["w"] + 1 and 0 <= box[1] and box[3] <= rects["h"] + 1,
                  f"at 1280x800 #{name} {box} is not inside the window {rects['w']}x{rects['h']}")
        s.screenshot("a-1280x800.png")
    finally:
        s.driver.set_window_size(1400, 900)
    # Last, so a wording difference does not hide the checks above.
    check(s.server.second_line.endswith("Ctrl-C stops."),
          f"the server's second line on stdout is {s.server.second_line!r}: it should say how to stop it")


def test_b_divider_drag(s):
    s.open_page()
    before = s.renders()
    # Angle 0: a vertical line that follows the pointer's x.
    drag(s, (0.3, 0.5), (0.7, 0.5))
    split = s.js("return window.studio.split")
    check(abs(split - 0.7) < 0.01, f"after dragging to x = 0.7 of the width, window.studio.split is {split}")
    slider = float(s.find("#split").get_attribute("value"))
    check(abs(slider - split) < 0.002, f"#split shows {slider}, window.studio.split is {split}")
    check(s.renders() == before, "moving the divider made a render request; both halves should come from the last one")
    check_split(s, split, 0, "drag at angle 0")
    s.screenshot("b-drag-angle0.png")

    # A finger (touch pointer events) moves it the same way.
    drag(s, (0.6, 0.5), (0.4, 0.5), touch=True)
    split = s.js("return window.studio.split")
    check(abs(split - 0.4) < 0.01, f"after a finger drag to x = 0.4 of the width, window.studio.split is {split}")
    check_split(s, split, 0, "finger drag at angle 0")

    # Angle 90: a horizontal line, the original on top.
    s.set_value(s.find("#angle"), 90)
    check(s.js("return window.studio.angle") == 90, "window.studio.angle did not follow #angle")
    check_split(s, split, 90, "angle 90 after the drag")
    drag(s, (0.5, 0.6), (0.5, 0.35))
    split = s.js("return window.studio.split")
    check(abs(split - 0.35) < 0.01, f"after dragging to y = 0.35 of the height at angle 90, window.studio.split is {split}")
    check_split(s, split, 90, "drag at angle 90")
    check(s.renders() == before, "moving the divider made a render request")
    s.screenshot("b-drag-angle90.png")

    # Angle 30 at split 0.5 against the CLI's own comparison (`preview --compare`), labels left out.
    s.set_value(s.find("#angle"), 30)
    s.set_value(s.find("#split"), 0.5)
    check(abs(s.js("return window.studio.split") - 0.5) < 1e-9, "window.studio.split did not follow #split")
    t = s.js("return window.studio.time")
    got = s.canvas()
    cli = s.preview(s.look, t, ("--compare", "--split", "0.5", "--split-angle", "30"))
    a_side, b_side = sides(got.shape[1], got.shape[0], 0.5, 30)
    labels = np.zeros(a_side.shape, bool)
    labels[:80, :] = labels[-80:, :] = True   # the CLI labels the corners; the page does not
    same_pixels(got, cli, (a_side | b_side) & ~labels, f"angle 30 vs preview --compare --split 0.5 --split-angle 30 --at {t}")
    check_split(s, 0.5, 30, "angle 30")
    s.screenshot("b-angle30.png")


def test_c_slider_and_save(s):
    s.open_page()
    slider = card_control(s, 0, 'input[type=range][data-param="intensity"]')
    check(abs(float(slider.get_attribute("value")) - 0.8) < 1e-9, f"sepia's intensity slider shows {slider.get_attribute('value')}, the preset 0.8")
    check(slider.get_attribute("min") == "0" and slider.get_attribute("max") == "1",
          f"intensity's slider has min {slider.get_attribute('min')} max {slider.get_attribute('max')}, declared 0...1")
    before = s.renders()
    s.set_value(slider, 0.4)
    s.wait_picture(before, "the picture after intensity 0.4")
    doc = s.json_doc()
    check(doc["filters"][0].get("intensity") == 0.4, f"#json after the slider: {doc['filters'][0]}")
    box = card_control(s, 0, 'input[type=number][data-param="intensity"]')
    check(abs(float(box.get_attribute("value")) - 0.4) < 1e-9, f"intensity's number box shows {box.get_attribute('value')}")
    expected = json.loads(json.dumps(LOOK))
    expected["filters"][0]["intensity"] = 0.4
    t = s.js("return window.studio.time")
    check_split(s, 0.5, 0, "intensity 0.4", expected_b=s.preview(s.write_preset("intensity-0.4.json", expected), t))
    s.screenshot("c-slider.png")

    s.set_value(s.find("#save-name"), "studio-saved.json")
    s.find("#save").click()
    target = os.path.join(os.path.realpath(s.dir), "studio-saved.json")
    s.wait(lambda d: re.match(r"(saved|not saved)\b", s.find("#status").text), "#status after #save")
    status = s.find("#status").text
    check(target in status and "not saved" not in status, f"#status after saving: {status!r}, expected the path {target}")
    check(os.path.isfile(target), f"{target} was not written")
    saved = json.load(open(target))
    check(saved["filters"][0].get("intensity") == 0.4, f"the saved preset has {saved['filters'][0]}, expected intensity 0.4")
    validate = subprocess.run([s.bin, "validate", target], capture_output=True, text=True)
    check(validate.returncode == 0, f"gpuencode validate {target}: exit {validate.returncode}: {validate.stdout}{validate.stderr}")
    check(json.load(open(s.look)) == LOOK, "saving under another name changed look.json")
    s.screenshot("c-saved.png")


def test_d_json_errors(s):
    s.open_page()
    original = s.json_text()
    lines = original.split("\n")

    def expect_error(text, line, what):
        s.set_value(s.find("#json"), text)
        s.wait(lambda d: s.find("#json-error").text != "", f"#json-error for {what}")
        shown = s.find("#json-error").text
        m = re.match(r"line (\d+), column (\d+): \S", shown)
        check(m, f"{what}: #json-error shows {shown!r}, expected 'line L, column C: message'")
        check(int(m.group(1)) == line, f"{what}: #json-error says line {m.group(1)}, the fault is on line {line}: {shown!r}")

    def expect_clear(text, what):
        before = s.renders()
        s.set_value(s.find("#json"), text)
        s.wait(lambda d: s.find("#json-error").text == "", f"#json-error to clear after {what}")
        s.wait_picture(before, f"a picture after {what}")

    # A number out of its range.
    line = next(i for i, l in enumerate(lines) if '"intensity": 0.8' in l) + 1
    expect_error(original.replace('"intensity": 0.8', '"intensity": 7'), line, "intensity 7 (range 0...1)")
    s.screenshot("d-json-error.png")
    expect_clear(original, "fixing the intensity")

    # An unknown filter name.
    line = next(i for i, l in enumerate(lines) if '"sepia"' in l) + 1
    expect_error(original.replace('"sepia"', '"sepiaa"'), line, "the unknown filter sepiaa")
    # The fix typed with the keyboard, as a user would.
    area = s.find("#json")
    area.click()
    area.send_keys(Keys.CONTROL, "a")
    area.send_keys(Keys.DELETE)
    before = s.renders()
    area.send_keys(original)
    s.wait(lambda d: s.find("#json-error").text == "", "#json-error to clear after typing the preset back")
    s.wait_picture(before, "a picture after typing the preset back")
    check(json.loads(s.json_text()) == LOOK, f"#json after typing: {s.json_text()!r}")

    # JSON syntax: a stray character at the start of line 3.
    broken = lines[:]
    broken[2] = "@" + broken[2]
    expect_error("\n".join(broken), 3, "a stray @ on line 3")
    expect_clear(original, "removing the @")
    check(len(s.finds("#filters .filter-card")) == 2, "the cards did not come back after the JSON was fixed")


def test_e_keyboard(s):
    s.open_page()
    step = frame_step(s)
    t0 = s.js("return window.studio.time")
    code0 = s.find("#timecode").text

    def press(key, expected, what, shift=False):
        """`key` typed with nothing focused (the page's keyboard shortcuts, not a field's)."""
        before = s.renders()
        s.js("document.activeElement && document.activeElement.blur()")
        keys = ActionChains(s.driver)
        if shift:
            keys.key_down(Keys.SHIFT).send_keys(key).key_up(Keys.SHIFT)
        else:
            keys.send_keys(key)
        keys.perform()
        s.wait_picture(before, f"the picture after {what}")
        t = s.js("return window.studio.time")
        check(abs(t - expected) < 1e-3, f"{what}: window.studio.time {t}, expected {expected:.6f}")
        return t

    t1 = press(Keys.ARROW_RIGHT, t0 + step, "ArrowRight")
    check(s.find("#timecode").text != code0, f"#timecode still shows {code0!r} after ArrowRight")
    # The new picture is of the new frame: A is the original at t1.
    got = s.canvas()
    a_side, _ = sides(got.shape[1], got.shape[0], 0.5, 0)
    same_pixels(got, s.preview("identity", t1), a_side, f"A side after ArrowRight vs preview --preset identity --at {t1}")
    moved = (np.abs(s.preview("identity", t0)[..., :3].astype(np.int16) - s.preview("identity", t1)[..., :3]).max(axis=2) > 16) & a_side
    check(moved.sum() > 500, f"frames {t0} and {t1} are too alike on A's side ({moved.sum()} pixels differ) to tell them apart")
    press(Keys.ARROW_LEFT, t0, "ArrowLeft")
    t2 = press(Keys.ARROW_RIGHT, t0 + 1, "Shift+ArrowRight", shift=True)
    # I and O: the playback range's start and end at the frame shown.
    ActionChains(s.driver).send_keys("i").perform()
    check(abs(float(s.find("#range-start").get_attribute("value")) - t2) < 1e-6,
          f"I should set #range-start to {t2}, it shows {s.find('#range-start').get_attribute('value')}")
    t3 = press(Keys.ARROW_RIGHT, t2 + step, "ArrowRight")
    ActionChains(s.driver).send_keys("o").perform()
    check(abs(float(s.find("#range-end").get_attribute("value")) - t3) < 1e-6,
          f"O should set #range-end to {t3}, it shows {s.find('#range-end').get_attribute('value')}")
    s.screenshot("e-keyboard.png")


def test_f_add_reorder_remove(s):
    s.open_page()

    def filters():
        return [f.get("filter") for f in s.json_doc()["filters"]]

    def cards():
        return [c.find_element(By.CSS_SELECTOR, ".name").text for c in s.finds("#filters .filter-card")]

    Select(s.find("#add-filter")).select_by_value("brightness")
    before = s.renders()
    s.find("#add").click()
    check(filters() == ["sepia", "vignette", "brightness"], f"after adding brightness, #json has {filters()}")
    check(cards() == ["sepia", "vignette", "brightness"], f"after adding brightness, the cards are {cards()}")
    card_control(s, 2, 'input[type=range][data-param="brightness"]')   # its controls are there
    s.wait_picture(before, "the picture after adding a filter")
    check(s.find("#json-error").text == "", f"adding brightness with its defaults gave {s.find('#json-error').text!r}")

    before = s.renders()
    card_control(s, 2, ".up").click()
    check(filters() == ["sepia", "brightness", "vignette"], f"after moving brightness up, #json has {filters()}")
    check(cards() == ["sepia", "brightness", "vignette"], f"after moving brightness up, the cards are {cards()}")
    card_control(s, 0, ".down").click()
    check(filters() == ["brightness", "sepia", "vignette"], f"after moving sepia down, #json has {filters()}")
    s.wait_picture(before, "the picture after reordering")

    before = s.renders()
    card_control(s, 0, ".remove").click()
    check(filters() == ["sepia", "vignette"], f"after removing brightness, #json has {filters()}")
    check(s.json_doc() == LOOK, f"after add, moves and remove the preset should be look.json again: {s.json_text()!r}")
    s.wait_picture(before, "the picture after removing a filter")
    check_split(s, 0.5, 0, "after add, reorder, remove")
    s.screenshot("f-filters.png")

    # A preset in graph form: the JSON editor only, with a note.
    graph = {"version": 2, "name": "graph", "graph": {"nodes": {
        "toned": {"filter": "sepia", "intensity": 0.5, "inputs": ["source"]}}, "output": "toned"}}
    before = s.renders()
    s.set_value(s.find("#json"), json.dumps(graph, indent=2))
    s.wait_picture(before, "the picture of a graph preset")
    check(s.find("#json-error").text == "", f"the graph preset gave {s.find('#json-error').text!r}")
    check(not s.finds("#filters .filter-card"), "a graph preset should have no cards")
    note = s.find("#filters").text
    check("chain form" in note, f"a graph preset should get a note that controls need the chain form, #filters shows {note!r}")
    check(not s.find("#add").is_enabled(), "#add should be disabled for a graph preset")


def test_g_security(s):
    state_path = "/api/state"
    good = json.dumps({"preset": s.look_text})

    def expect(status, want, what, body=b""):
        check(status == want, f"{what}: expected {want}, got {status} {body[:200]!r}")

    status, _, body = s.request("GET", state_path)
    expect(status, 200, "GET /api/state with the token in X-Studio-Token", body)
    status, _, body = s.request("GET", f"{state_path}?token={s.token}", token=False)
    expect(status, 200, "GET /api/state?token=TOKEN", body)
    status, _, body = s.request("GET", f"/?token={s.token}", token=False)
    expect(status, 200, "GET /?token=TOKEN (the page)", body)
    status, _, body = s.request("GET", state_path, token=False)
    expect(status, 403, "GET /api/state without a token", body)
    status, _, body = s.request("GET", "/", token=False)
    expect(status, 403, "GET / without a token", body)
    status, _, body = s.request("GET", state_path, token="0" * 64)
    expect(status, 403, "GET /api/state with a wrong token", body)
    status, _, body = s.request("GET", f"{state_path}?token={'f' * 64}", token=False)
    expect(status, 403, "GET /api/state?token=WRONG", body)
    status, _, body = s.request("POST", "/api/validate", good, token=False)
    expect(status, 403, "POST /api/validate without a token", body)
    status, _, body = s.request("GET", state_path, host=f"evil.example:{s.port}")
    expect(status, 403, "Host: evil.example:PORT (DNS rebinding)", body)
    status, _, body = s.request("GET", state_path, host=f"localhost:{s.port}")
    expect(status, 200, "Host: localhost:PORT", body)
    status, _, body = s.request("POST", "/api/validate", good, headers={"Origin": "http://evil.example"})
    expect(status, 403, "Origin: http://evil.example", body)
    status, _, body = s.request("POST", "/api/validate", good, headers={"Origin": f"http://127.0.0.1:{s.port}"})
    expect(status, 200, "Origin: http://127.0.0.1:PORT", body)
    check(json.loads(body).get("ok") is True, f"/api/validate of look.json: {body!r}")

    big = json.dumps({"preset": " " * (2 << 20)})
    status, _, body = s.request("POST", "/api/validate", big)
    expect(status, 413, "a 2 MiB body", body)
    status, _, body = s.request("POST", "/api/render", "not json")
    expect(status, 400, "body `not json`", body)
    status, _, body = s.request("POST", "/api/render", "{}")
    expect(status, 400, "body {} (no preset)", body)
    error = json.loads(body)
    check(isinstance(error.get("error"), str), f"an /api error should be {{\"error\": ...}}, got {body!r}")

    outside_dir = os.path.join(s.tmp, "elsewhere")
    os.makedirs(outside_dir, exist_ok=True)
    for name, path in [("../outside.json", os.path.join(s.tmp, "outside.json")),
                       (os.path.join(outside_dir, "absolute.json"), os.path.join(outside_dir, "absolute.json"))]:
        status, _, body = s.request("POST", "/api/save", json.dumps({"preset": s.look_text, "name": name}))
        expect(status, 403, f"save as {name}", body)
        check(not os.path.exists(path), f"save as {name} was refused, yet {path} exists")

    target = os.path.join(outside_dir, "target.json")
    with open(target, "w") as f:
        f.write("the target's own text\n")
    link = os.path.join(s.dir, "link.json")
    os.symlink(target, link)
    status, _, body = s.request("POST", "/api/save", json.dumps({"preset": s.look_text, "name": "link.json"}))
    check(open(target).read() == "the target's own text\n", f"saving over the symlink link.json wrote its target {target} (status {status})")
    if status == 200:
        check(not os.path.islink(link), "save over link.json answered 200 but the link is still there")
        check(open(link).read() == s.look_text, "save over link.json answered 200 but link.json does not hold the preset")
    else:
        check(400 <= status < 500, f"save over a symlink: expected a refusal (4xx) or 200, got {status} {body!r}")
        check(os.path.islink(link), "a refused save should leave link.json as it was")
    os.unlink(link)

    # An invalid preset is not saved.
    bad = s.look_text.replace('"intensity": 0.8', '"intensity": 7')
    status, _, body = s.request("POST", "/api/save", json.dumps({"preset": bad, "name": "bad.json"}))
    expect(status, 422, "save of an invalid preset", body)
    check(not os.path.exists(os.path.join(s.dir, "bad.json")), "an invalid preset was saved")
    check(json.loads(body).get("line") is not None, f"the 422 of a save should give the line: {body!r}")


def test_h_latency(s):
    s.open_page()
    page, server, read, draw = [], [], [], []
    for i in range(10):
        value = round(0.1 * (i + 1), 1) if i % 2 == 0 else round(1 - 0.1 * i, 1)
        slider = card_control(s, 0, 'input[type=range][data-param="intensity"]')
        before = s.renders()
        s.set_value(slider, value)
        s.wait_picture(before, f"the picture for intensity {value}")
        check(s.json_doc()["filters"][0]["intensity"] == value, f"#json did not take intensity {value}")
        latency, render_ms, breakdown = s.js("return [window.studio.lastLatencyMs, window.studio.lastRenderMs, window.studio.lastBreakdown]")
        if breakdown:
            read.append(breakdown["read"])
            draw.append(breakdown["draw"])
        check(isinstance(latency, (int, float)) and latency > 0, f"window.studio.lastLatencyMs is {latency!r}")
        page.append(latency)
        if isinstance(render_ms, (int, float)):
            server.append(render_ms)
    shown = s.find("#latency").text
    check(re.search(r"\d", shown), f"#latency shows {shown!r}")

    def summary(values):
        if not values:
            return "n/a"
        return f"min {min(values):.0f} / median {statistics.median(values):.0f} / max {max(values):.0f} ms"
    print(f"studio latency 720p: change to picture {summary(page)}; server X-Render-Ms {summary(server)} "
          f"({len(page)} slider changes, renderer {s.state()['renderer']})")
    if read:
        print(f"studio latency 720p, in the page: reading the pictures {summary(read)}; drawing {summary(draw)}")


def test_i_controls_and_keyframes(s):
    """Controls show the JSON's values or the declared defaults; colours in every preset form; keyframes."""
    s.open_page()
    doc = json.loads(json.dumps(LOOK))
    del doc["filters"][0]["intensity"]
    forms = [("rgba(255,0,0,0.5)", "#ff0000", 0.5), ("#00ff00", "#00ff00", 1.0), ([0, 0, 1, 0.25], "#0000ff", 0.25)]
    for written, hex_value, alpha in forms:
        doc["filters"][1]["color"] = written
        before = s.renders()
        s.set_value(s.find("#json"), json.dumps(doc, indent=2))
        s.wait_picture(before, f"the picture with color {written}")
        intensity = card_control(s, 0, 'input[type=range][data-param="intensity"]').get_attribute("value")
        check(float(intensity) == 1.0, f"sepia's intensity is absent: the slider should show the default 1, shows {intensity}")
        picker = card_control(s, 1, 'input[type=color][data-param="color"]')
        check(picker.get_attribute("value") == hex_value, f"color {written!r}: the picker shows {picker.get_attribute('value')}, expected {hex_value}")
        shown_alpha = float(card_control(s, 1, '.alpha[data-param="color"]').get_attribute("value"))
        check(abs(shown_alpha - alpha) < 1e-6, f"color {written!r}: the alpha slider shows {shown_alpha}, expected {alpha}")
    start = card_control(s, 1, 'input[type=range][data-param="start"]').get_attribute("value")
    check(float(start) == 0.2, f"vignette's start slider shows {start}, the preset 0.2")

    before = s.renders()
    s.set_value(card_control(s, 1, 'input[type=color][data-param="color"]'), "#336699")
    s.wait_picture(before, "the picture after the colour picker")
    color = s.json_doc()["filters"][1]["color"]
    check(isinstance(color, list) and np.allclose(color, [0.2, 0.4, 0.6, 0.25], atol=0.003),
          f"the page should write colours as [r, g, b, a] in 0...1: {color!r}")

    # Keyframes: toggle on at this frame, edit, step a frame, edit again.
    t0 = s.js("return window.studio.time")
    step = frame_step(s)
    card_control(s, 0, '.key[data-key="intensity"]').click()
    intensity = s.json_doc()["filters"][0]["intensity"]
    check(isinstance(intensity, dict) and len(intensity.get("keyframes", [])) == 1,
          f"after the key toggle, intensity should be {{\"keyframes\": [[t, v]]}}: {intensity!r}")
    check(abs(intensity["keyframes"][0][0] - t0) < 1e-3 and intensity["keyframes"][0][1] == 1,
          f"the first keyframe should be [{t0}, 1] (the frame shown, the value shown): {intensity!r}")
    before = s.renders()
    s.set_value(card_control(s, 0, 'input[type=range][data-param="intensity"]'), 0.5)
    s.wait_picture(before, "the picture after editing a keyframe")
    keys = s.json_doc()["filters"][0]["intensity"]["keyframes"]
    check(len(keys) == 1 and keys[0][1] == 0.5, f"editing at the keyframe's time should replace it: {keys!r}")
    before = s.renders()
    s.js("document.activeElement && document.activeElement.blur()")
    ActionChains(s.driver).send_keys(Keys.ARROW_RIGHT).perform()
    s.wait_picture(before, "the next frame")
    before = s.renders()
    s.set_value(card_control(s, 0, 'input[type=range][data-param="intensity"]'), 0.2)
    s.wait_picture(before, "the picture after a second keyframe")
    keys = s.json_doc()["filters"][0]["intensity"]["keyframes"]
    check(len(keys) == 2 and abs(keys[1][0] - (t0 + step)) < 1e-3 and keys[1][1] == 0.2 and keys[0][1] == 0.5,
          f"a second keyframe at {t0 + step:.4f} = 0.2 expected: {keys!r}")
    check(s.find("#json-error").text == "", f"keyframes gave {s.find('#json-error').text!r}")
    s.screenshot("i-keyframes.png")
    # Off again: the value shown at this frame.
    card_control(s, 0, '.key[data-key="intensity"]').click()
    check(s.json_doc()["filters"][0]["intensity"] == 0.2, f"turning keyframes off should keep the value shown: {s.json_doc()['filters'][0]}")


def test_j_playback(s):
    """#play plays the range in a loop, frame after frame; pressing it again stops."""
    s.open_page()
    t0 = s.js("return window.studio.time")
    step = frame_step(s)
    s.set_value(s.find("#range-start"), t0)
    s.set_value(s.find("#range-end"), t0 + 3 * step)
    before = s.renders()
    s.find("#play").click()
    seen = set()
    deadline = time.time() + 4 * WAIT
    while time.time() < deadline and (len(seen) < 4 or s.renders() < before + 6):
        seen.add(round(s.js("return window.studio.time") / step))
        time.sleep(0.02)
    s.find("#play").click()
    frames = sorted(seen)
    first = round(t0 / step)
    check(frames == list(range(first, first + 4)), f"playing {t0:.3f}...{t0 + 3 * step:.3f} showed frames {frames}, expected {first}...{first + 3}")
    check(s.renders() >= before + 6, "playback did not loop (fewer than 6 pictures)")
    s.wait(lambda d: not s.js("return window.studio.busy"), "playback to stop")
    after = s.renders()
    time.sleep(1)
    check(s.renders() == after, "pictures kept coming after the second press of #play")

    # Space plays and pauses too (with nothing focused).
    s.js("document.activeElement && document.activeElement.blur()")
    ActionChains(s.driver).send_keys(Keys.SPACE).perform()
    s.wait(lambda d: s.renders() >= after + 3, "pictures after Space")
    ActionChains(s.driver).send_keys(Keys.SPACE).perform()
    s.wait(lambda d: not s.js("return window.studio.busy"), "playback to stop after the second Space")
    after = s.renders()
    time.sleep(1)
    check(s.renders() == after, "pictures kept coming after the second Space")


def test_l_compare_with(s):
    """`--compare-with B`: A is preset B instead of the original (a second server, stopped after)."""
    mono = os.path.join(s.dir, "mono.json")
    with open(mono, "w") as f:
        json.dump({"version": 2, "name": "mono", "filters": [{"filter": "grayscale"}]}, f, indent=2)
    main = s.server
    s.server = s.start_server("--compare-with", os.path.relpath(mono, s.tmp), log="server-compare.log")
    try:
        state = s.state()
        check(state.get("compare") and state["compare"].get("name") == "mono", f"the state's compare: {state.get('compare')!r}")
        s.open_page()
        check(s.find("#name-a").text == "mono", f"the page names A {s.find('#name-a').text!r}, expected mono")
        t = s.js("return window.studio.time")
        got = s.canvas()
        a_side, b_side = sides(got.shape[1], got.shape[0], 0.5, 0)
        b_picture = s.preview(mono, t)
        differ(b_picture, s.preview(s.look, t), a_side, "mono against look")
        same_pixels(got, b_picture, a_side, f"A side with --compare-with mono.json vs preview --preset mono.json --at {t}")
        same_pixels(got, s.preview(s.look, t), b_side, f"B side with --compare-with vs preview --preset look.json --at {t}")
        s.screenshot("l-compare-with.png")
    finally:
        compare, s.server = s.server, main
        status = compare.stop()
    check(status == 0, f"after SIGINT the --compare-with server's exit status is {status!r}, expected 0{compare.tail()}")


def test_m_coalescing(s):
    """Changes made while a render runs are coalesced: one request in flight at most, the last value wins."""
    s.open_page()
    slider = card_control(s, 0, 'input[type=range][data-param="intensity"]')
    values = [round(0.05 * i, 2) for i in range(1, 20)] + [0.55]
    # Count the page's render requests and how many are open at once, then move the slider 20
    # times, 5 ms apart: faster than any render (reading the two pictures alone takes longer).
    s.js("""
        const [slider, values] = arguments;
        const count = window.renderRequests = {open: 0, most: 0, made: 0, fired: 0};
        const fetch = window.fetch;
        window.fetch = async (url, init) => {
            if (!String(url).includes('/api/render')) return fetch(url, init);
            count.made++; count.open++; count.most = Math.max(count.most, count.open);
            try { return await fetch(url, init); } finally { count.open--; }
        };
        values.forEach((v, i) => setTimeout(() => {
            slider.value = String(v);
            slider.dispatchEvent(new Event('input', {bubbles: true}));
            count.fired++;
        }, 5 * i));
    """, slider, values)
    s.wait(lambda d: s.js("return window.renderRequests.fired === arguments[0] && !window.studio.busy", len(values)),
           "the pictures after 20 quick slider moves")
    count = s.js("return window.renderRequests")
    check(count["most"] == 1, f"{count['most']} render requests were open at once; at most one may be")
    check(1 <= count["made"] < len(values), f"{count['made']} render requests for {len(values)} quick changes: they were not coalesced")
    check(s.json_doc()["filters"][0]["intensity"] == 0.55, f"#json after the moves: {s.json_doc()['filters'][0]}")
    expected = json.loads(json.dumps(LOOK))
    expected["filters"][0]["intensity"] = 0.55
    t = s.js("return window.studio.time")
    check_split(s, 0.5, 0, "after 20 quick moves", expected_b=s.preview(s.write_preset("intensity-0.55.json", expected), t))
    print(f"  {len(values)} slider moves 5 ms apart made {count['made']} render requests")


def test_n_cropped_b(s):
    """A preset that crops makes picture B smaller (X-Width-B/X-Height-B): the page draws it at A's size."""
    s.open_page()
    cropped = json.loads(json.dumps(LOOK))
    cropped["filters"].append({"filter": "crop", "x": 0.25, "y": 0.25, "width": 0.5, "height": 0.5})
    before = s.renders()
    s.set_value(s.find("#json"), json.dumps(cropped, indent=2))
    s.wait_picture(before, "the picture of a cropping preset")
    check(s.find("#json-error").text == "", f"the crop gave {s.find('#json-error').text!r}")
    got = s.canvas()
    check(got.shape[:2] == (720, 1280), f"the canvas became {got.shape[1]}x{got.shape[0]}; it keeps A's size")
    t = s.js("return window.studio.time")
    small = s.preview(s.write_preset("cropped.json", cropped), t)
    check(small.shape[:2] == (360, 640), f"preview of the crop is {small.shape[1]}x{small.shape[0]}, expected 640x360")
    a_side, b_side = sides(1280, 720, 0.5, 0, margin=16)
    same_pixels(got, s.preview("identity", t), a_side, "A side beside a cropped B")
    # B is scaled up (smoothed), so compare on average, not pixel for pixel.
    scaled = small.repeat(2, axis=0).repeat(2, axis=1)
    mean = np.abs(got[..., :3].astype(np.int16) - scaled[..., :3])[b_side].mean()
    check(mean < 6, f"B side against the cropped preview scaled 2x: mean difference {mean:.1f} code values")
    s.screenshot("n-cropped-b.png")


def test_o_folders(s):
    """Files: the page's file lists come from the preset's folder and the --allow-path folders; a
    preset reads and the studio saves only there (a second server with --allow-path shared)."""
    shared = os.path.join(s.tmp, "shared")
    outside = os.path.join(s.tmp, "outside")
    os.makedirs(shared, exist_ok=True)
    os.makedirs(outside, exist_ok=True)
    # Lookup images made by the CLI itself (512x512 identity grades), one in each folder.
    for path in (os.path.join(s.dir, "paper.png"), os.path.join(shared, "grade.png"), os.path.join(outside, "secret.png")):
        run([s.bin, "lut", "identity", path, "-y"])
    escape = os.path.join(s.dir, "escape")          # a folder inside the preset's that leads outside
    os.symlink(outside, escape)
    main = s.server
    s.server = s.start_server("--allow-path", os.path.relpath(shared, s.tmp), log="server-folders.log")
    try:
        files = s.state()["files"]
        check("paper.png" in files, f"state.files should name paper.png of the preset's folder: {files}")
        check(os.path.join(os.path.realpath(shared), "grade.png") in files, f"state.files should name the --allow-path folder's grade.png: {files}")
        check(not any("secret" in f for f in files), f"state.files names a file outside the allowed folders: {files}")

        # The page offers them for a file parameter.
        s.open_page()
        Select(s.find("#add-filter")).select_by_value("lookup")
        before = s.renders()
        s.find("#add").click()
        select = card_control(s, 2, 'select[data-param="image"]')
        offered = [o.get_attribute("value") for o in select.find_elements(By.TAG_NAME, "option")]
        check("paper.png" in offered, f"the lookup card's image list should offer paper.png: {offered}")
        s.wait_picture(before, "the picture after adding a lookup")
        check(s.find("#json-error").text == "", f"adding lookup with paper.png gave {s.find('#json-error').text!r}")

        def render(image):
            preset = {"version": 2, "name": "l", "filters": [{"filter": "lookup", "image": image}]}
            return s.request("POST", "/api/render", json.dumps({"preset": json.dumps(preset), "time": 0.5}))

        status, _, body = render("paper.png")
        check(status == 200, f"a lookup image in the preset's folder: expected 200, got {status} {body[:200]!r}")
        status, _, body = render(os.path.join(shared, "grade.png"))
        check(status == 200, f"a lookup image in the --allow-path folder: expected 200, got {status} {body[:200]!r}")
        for image in (os.path.join(outside, "secret.png"), "../outside/secret.png", "escape/secret.png"):
            status, _, body = render(image)
            check(status == 422 and b"outside the preset's folder" in body,
                  f"a lookup image at {image}: expected 422 naming the preset's folder, got {status} {body[:300]!r}")

        # Saves: into the --allow-path folder yes; through a folder link that leads out, no.
        saved = os.path.join(shared, "shared-look.json")
        status, _, body = s.request("POST", "/api/save", json.dumps({"preset": s.look_text, "name": saved}))
        check(status == 200 and os.path.exists(saved) and open(saved).read() == s.look_text,
              f"save into the --allow-path folder: {status} {body[:200]!r}")
        status, _, body = s.request("POST", "/api/save", json.dumps({"preset": s.look_text, "name": "escape/x.json"}))
        check(status == 403 and not os.path.exists(os.path.join(outside, "x.json")),
              f"save through a folder link leading out: expected 403 and no file, got {status} {body[:200]!r}")
        status, _, body = s.request("POST", "/api/save", json.dumps({"preset": s.look_text, "name": "look.txt"}))
        check(status == 403, f"save as look.txt (not .json): expected 403, got {status} {body[:200]!r}")
        leftovers = [n for d in (s.dir, shared) for n in os.listdir(d) if n.startswith(".gpuencode-")]
        check(not leftovers, f"temporary files left behind by saves: {leftovers}")
        s.screenshot("o-folders.png")
    finally:
        folders, s.server = s.server, main
        status = folders.stop()
        os.unlink(escape)
    check(status == 0, f"after SIGINT the --allow-path server's exit status is {status!r}, expected 0{folders.tail()}")


def test_p_loopback_only(s):
    """The server listens on 127.0.0.1 only: the machine's other addresses refuse the connection."""
    import socket
    addresses = []
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
        addresses = [m for m in re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out) if not m.startswith("127.")]
    except OSError:
        pass
    if not addresses:
        # No other address (a bare network namespace): make one, so the check still means something.
        addresses = ["127.0.0.2"]   # on Linux all of 127/8 is local, but the server bound 127.0.0.1 alone
    for address in addresses:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
            c.settimeout(5)
            refused = False
            try:
                c.connect((address, s.port))
            except (ConnectionRefusedError, socket.timeout, OSError):
                refused = True
            check(refused, f"{address}:{s.port} accepted a connection; the studio must listen on 127.0.0.1 only")
    print(f"  refused on {', '.join(addresses)}")


def test_q_choice(s):
    """An enum parameter is a select of its declared choices; choosing one rewrites the JSON and
    renders what `preview` renders for that value."""
    s.open_page()
    doc = {"version": 2, "name": "turned", "filters": [{"filter": "transform", "rotation": 20, "scale": [0.8, 0.8]}]}
    before = s.renders()
    s.set_value(s.find("#json"), json.dumps(doc, indent=2))
    s.wait_picture(before, "the picture of the transform preset")
    select = card_control(s, 0, 'select[data-param="fill"]')
    options = [o.get_attribute("value") for o in select.find_elements(By.TAG_NAME, "option")]
    check(options == ["black", "edge", "transparent"], f"transform's fill offers {options}, declared black, edge, transparent")
    check(select.get_attribute("value") == "black", f"fill is absent: the select should show the default black, shows {select.get_attribute('value')}")
    before = s.renders()
    Select(select).select_by_value("edge")
    s.wait_picture(before, "the picture after fill edge")
    got = s.json_doc()["filters"][0]
    check(got.get("fill") == "edge", f"#json after choosing edge: {got}")
    t = s.js("return window.studio.time")
    edge = dict(doc, filters=[dict(doc["filters"][0], fill="edge")])
    black_picture = s.preview(s.write_preset("fill-black.json", doc), t)
    edge_picture = s.preview(s.write_preset("fill-edge.json", edge), t)
    canvas = s.canvas()
    _, b_side = sides(canvas.shape[1], canvas.shape[0], 0.5, 0)
    differ(black_picture, edge_picture, b_side, "fill black against fill edge")
    same_pixels(canvas, edge_picture, b_side, f"B side with fill edge vs preview --preset fill-edge.json --at {t}")
    s.screenshot("q-choice.png")


def test_r_scrub_to_end(s):
    """Dragging the scrubber to its end (the clip's duration, past the last frame's time) shows the
    last frame, as `preview --at LAST` renders it; an earlier time renders after it as before."""
    s.open_page()
    duration = s.state()["duration"]
    probe = json.loads(run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "frame=best_effort_timestamp_time", "-of", "json", s.clip]).stdout)
    times = [float(f["best_effort_timestamp_time"]) for f in probe["frames"]]
    last = max(times)
    check(duration > last, f"the clip's duration {duration} should end after its last frame starts ({last})")
    scrubber = s.find("#time")
    check(abs(float(scrubber.get_attribute("max")) - duration) < 1e-6,
          f"#time's max is {scrubber.get_attribute('max')}, the duration {duration}")
    width = s.js("return arguments[0].getBoundingClientRect().width", scrubber)
    before = s.renders()
    ActionChains(s.driver).move_to_element(scrubber).click_and_hold().move_by_offset(round(width / 2) + 40, 0).release().perform()
    # The scrubber is at the duration until the picture comes, then at the frame's time.
    check(s.render_time() > last - 1e-3, f"after the drag the scrubber is at {s.render_time()}, not at its end {duration}")
    s.wait_picture(before, "the picture at the scrubber's end")
    shown = s.js("return window.studio.time")
    check(abs(shown - last) < 1e-3, f"at the scrubber's end the page shows the frame at {shown} s, expected the last one at {last} s")
    error = s.js("return document.getElementById('json-error').textContent")
    check(error == "", f"at the scrubber's end the page shows an error: {error!r}")
    check_split(s, 0.5, 0, "scrubber at its end", at=last)
    s.screenshot("r-scrub-end.png")

    # An earlier time works after it, and the end again after that.
    for wanted, what in ((1.0, "1.0 s after the end"), (duration, "the end again"), (0.5, "0.5 s")):
        before = s.renders()
        s.set_value(scrubber, wanted)
        s.wait_picture(before, f"the picture at {what}")
        expected = min((t for t in times if t + 0.5 / 30 >= wanted), default=last)
        shown = s.js("return window.studio.time")
        check(abs(shown - expected) < 1e-3, f"asked for {what}: the page shows {shown} s, expected the frame at {expected} s")
        check_split(s, 0.5, 0, f"scrubber at {what}", at=expected)


def test_k_stop(s):
    """SIGINT ends the server with exit status 0."""
    status = s.server.stop()
    check(status == 0, f"after SIGINT the server's exit status is {status!r}, expected 0{s.server_tail()}")


TESTS = [test_a_page_loads, test_b_divider_drag, test_c_slider_and_save, test_d_json_errors, test_e_keyboard,
         test_f_add_reorder_remove, test_g_security, test_h_latency, test_i_controls_and_keyframes, test_j_playback,
         test_l_compare_with, test_m_coalescing, test_n_cropped_b, test_o_folders, test_p_loopback_only, test_q_choice, test_r_scrub_to_end, test_k_stop]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="the gpuencode binary (with the studio subcommand)")
    parser.add_argument("--shots", help="where screenshots go (default: a new temporary folder)")
    parser.add_argument("-k", dest="only", help="run only the tests whose name contains this")
    args = parser.parse_args()
    shots = args.shots or tempfile.mkdtemp(prefix="studio-shots-")
    os.makedirs(shots, exist_ok=True)
    print(f"studio tests: screenshots in {shots}")

    s = Session(args.bin, shots)
    passed, failed = 0, 0
    try:
        try:
            s.make_fixtures()
            s.server = s.start_server()
            s.start_browser()
        except Exception as e:
            print(f"FAIL setup: {e}")
            traceback.print_exc()
            print(f"studio: 0 passed, {len(TESTS)} failed")
            return 1
        for test in TESTS:
            name = test.__name__[len("test_"):]
            if args.only and args.only not in name and test is not test_k_stop:
                continue
            started = time.time()
            try:
                test(s)
                passed += 1
                print(f"ok   {name} ({time.time() - started:.1f} s)")
            except Exception as e:
                failed += 1
                message = str(e) if isinstance(e, Failure) else f"{type(e).__name__}: {e}"
                print(f"FAIL {name}: {message}")
                if not isinstance(e, Failure):
                    traceback.print_exc()
                if s.driver is not None and name != "k_stop":
                    try:
                        s.screenshot(f"FAIL-{name}.png")
                    except Exception:
                        pass
            sys.stdout.flush()
    finally:
        s.close()
        if s.server is not None:
            s.server.kill()
        if failed == 0:
            shutil.rmtree(s.tmp, ignore_errors=True)
        else:
            print(f"studio tests: fixtures and server log kept in {s.tmp}")
    print(f"studio: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
