#!/usr/bin/env python3
"""Writers that promise their files stay under a folder, raced against a folder swapped for a link.

    python3 Tests/Hostile/containment_race.py --bin .build/debug/gpuencode [--seconds 4] [--only studio|batch|upgrade]

A thread swaps a subfolder with a symbolic link to a folder outside, atomically (renameat2
RENAME_EXCHANGE), thousands of times, while the writer runs again and again:

  studio   `gpuencode studio` saves `sub/N.json` (POST /api/save) in the preset's folder, where
           `sub` flips. Nothing may land outside; every save is in the real folder or refused with
           one error message.
  batch    `gpuencode batch clips --recursive --out-dir out` writes `out/sub/*.mp4`, where
           `out/sub` flips. Nothing may land outside; every job's output is in the real folder
           (and plays: ffprobe counts its frames) or the job failed with one error line.
  upgrade  `gpuencode presets upgrade old.json -o dst/N.json`, where `dst` (the output's own
           folder, as the user named it) flips. The folder is the user's and is opened once, so
           the file may land on either side of the link; what must hold is that the temporary and
           the rename happen in that one folder: a folder is there at every instant, so every run
           succeeds and leaves its whole file in exactly one place, and no temporary anywhere.

The oracle is the file system itself (listings, ffprobe, json.loads); the binary is only run.
Prints one line per writer with its numbers and exits 1 when any contract broke.
"""
import argparse
import ctypes
import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2
libc = ctypes.CDLL(None, use_errno=True)


def exchange(a, b):
    """Swaps the two names atomically: at every instant `a` is either the folder or the link."""
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


class Flipper:
    """Swaps `path` (a real folder) with a link to `outside`, as fast as it can, until stopped."""

    def __init__(self, path, outside):
        self.path = path
        self.other = path + ".swap"
        os.symlink(outside, self.other)
        self.stop = threading.Event()
        self.flips = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            exchange(self.path, self.other)
            self.flips += 1
            time.sleep(0.0002)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        if os.path.islink(self.path):
            exchange(self.path, self.other)
        os.unlink(self.other)


def files_under(folder):
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            found.append(os.path.relpath(os.path.join(dirpath, name), folder))
    return sorted(found)


def run(command, cwd=None, timeout=120):
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def ffmpeg(*args):
    r = run(["ffmpeg", "-nostdin", "-v", "error", *args])
    if r.returncode != 0:
        raise RuntimeError(f"ffmpeg {' '.join(args)}: {r.stderr.strip()}")


PRESET = {"version": 2, "name": "look", "filters": [{"filter": "sepia", "intensity": 0.5}]}


# ---------------------------------------------------------------------------------------------

def race_studio(binary, root, seconds):
    looks = os.path.join(root, "looks")
    outside = os.path.join(root, "outside")
    os.makedirs(os.path.join(looks, "sub"))
    os.makedirs(outside)
    with open(os.path.join(looks, "look.json"), "w") as f:
        json.dump(PRESET, f)
    clip = os.path.join(root, "clip.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-t", "0.5", "-pix_fmt", "yuv420p", clip)
    server = subprocess.Popen([binary, "studio", clip, "--preset", "looks/look.json", "--port", "0"], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in server.stdout], daemon=True).start()
    problems = []
    try:
        try:
            first = lines.get(timeout=120)
        except queue.Empty:
            first = ""
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64})", first or "")
        if not m:
            return [f"studio did not start: {first!r}"], "studio: did not start"
        port, token = int(m.group(1)), m.group(2)
        text = json.dumps(PRESET)

        def save(name):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                body = json.dumps({"preset": text, "name": name}).encode()
                conn.request("POST", "/api/save", body, {"Host": f"127.0.0.1:{port}", "X-Studio-Token": token,
                                                          "Content-Type": "application/json"})
                r = conn.getresponse()
                return r.status, r.read()
            finally:
                conn.close()

        saved, refused = [], []
        with Flipper(os.path.join(looks, "sub"), outside) as flipper:
            deadline = time.time() + seconds
            n = 0
            while time.time() < deadline:
                name = f"sub/s{n}.json"
                status, body = save(name)
                try:
                    answer = json.loads(body)
                except ValueError:
                    answer = None
                if status == 200 and answer and "saved" in answer:
                    saved.append((name, answer["saved"]))
                elif status in (403, 500) and answer and isinstance(answer.get("error"), str) and "\n" not in answer["error"]:
                    refused.append(answer["error"])
                else:
                    problems.append(f"save {name}: {status} {body[:200]!r} is neither a save nor one error message")
                n += 1
            flips = flipper.flips
        stray = files_under(outside)
        if stray:
            problems.append(f"{len(stray)} files landed outside the preset's folder: {stray[:5]}")
        inside = set(files_under(os.path.join(looks, "sub")))
        for name, path in saved:
            base = os.path.basename(name)
            if base not in inside:
                problems.append(f"{name}: answered saved as {path}, but it is not in the real folder")
            else:
                with open(os.path.join(looks, "sub", base)) as f:
                    if json.load(f) != PRESET:
                        problems.append(f"{name}: the saved file is not the preset sent")
        leftovers = [p for p in inside if p.endswith(".partial")]
        if leftovers:
            problems.append(f"temporaries left in the folder: {leftovers[:5]}")
        summary = (f"studio: {n} saves, {len(saved)} saved inside, {len(refused)} refused, {len(stray)} outside, "
                   f"{flips} flips")
        return problems, summary
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def race_batch(binary, root, seconds):
    clips = os.path.join(root, "clips", "sub")
    out = os.path.join(root, "out")
    outside = os.path.join(root, "outside")
    os.makedirs(clips)
    os.makedirs(os.path.join(out, "sub"))
    os.makedirs(outside)
    first = os.path.join(clips, "c00.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-t", "0.3", "-pix_fmt", "yuv420p", "-c:v", "libx264", first)
    count = 40
    for i in range(1, count):
        shutil.copy(first, os.path.join(clips, f"c{i:02d}.mp4"))
    problems = []
    runs, ok_jobs, failed_jobs = 0, 0, 0
    stray = []
    with Flipper(os.path.join(out, "sub"), outside) as flipper:
        deadline = time.time() + seconds
        while time.time() < deadline or runs == 0:
            report = os.path.join(root, f"report{runs}.json")
            r = run([binary, "batch", "clips", "--recursive", "--out-dir", "out", "--force", "--jobs", "2",
                     "--report", report, "--codec", "h264", "--speed", "ultrafast"], cwd=root, timeout=300)
            runs += 1
            try:
                with open(report) as f:
                    jobs = json.load(f)["jobs"]
            except (OSError, ValueError, KeyError) as e:
                problems.append(f"batch run {runs}: exit {r.returncode}, no report ({e}): {r.stderr.strip()[-300:]}")
                continue
            for job in jobs:
                if job.get("status") == "ok":
                    ok_jobs += 1
                elif job.get("status") == "failed":
                    failed_jobs += 1
                    error = job.get("error") or ""
                    if not error or "\n" in error:
                        problems.append(f"{job.get('input')}: failed without one error line: {error!r}")
            stray = files_under(outside)
            if stray:
                break
        flips = flipper.flips
    stray = files_under(outside)
    if stray:
        problems.append(f"{len(stray)} files landed outside --out-dir: {stray[:5]}")
    inside = files_under(os.path.join(out, "sub"))
    leftovers = [p for p in inside if p.endswith(".partial")]
    if leftovers:
        problems.append(f"temporaries left under --out-dir: {leftovers[:5]}")
    for name in [p for p in inside if p.endswith(".mp4")][:5]:
        frames = run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                      "stream=nb_read_frames", "-of", "csv=p=0", os.path.join(out, "sub", name)]).stdout.strip()
        if frames != "3":
            problems.append(f"out/sub/{name}: {frames or 'no'} frames, expected 3")
    summary = (f"batch: {runs} runs, {ok_jobs} jobs written, {failed_jobs} failed, {len(stray)} files outside, "
               f"{flips} flips")
    return problems, summary


def race_upgrade(binary, root, seconds):
    old = os.path.join(root, "old.json")
    with open(old, "w") as f:
        json.dump({"version": 1, "name": "old", "encode": {"x264Preset": "fast"}, "filters": [{"filter": "sepia"}]}, f)
    expected = json.loads(run([binary, "presets", "upgrade", old]).stdout)
    dst = os.path.join(root, "dst")
    outside = os.path.join(root, "outside")
    os.makedirs(dst)
    os.makedirs(outside)
    problems = []
    written, failed, n = [], 0, 0
    reasons = set()
    with Flipper(dst, outside) as flipper:
        deadline = time.time() + seconds
        while time.time() < deadline:
            name = f"u{n}.json"
            r = run([binary, "presets", "upgrade", old, "-o", f"dst/{name}"], cwd=root)
            n += 1
            if r.returncode == 0:
                written.append(name)
            else:
                failed += 1
                reasons.add(re.sub(r"u\d+\.json", "uN.json", r.stderr.strip()))
                if len(r.stderr.strip().splitlines()) != 1:
                    problems.append(f"upgrade -o dst/{name}: exit {r.returncode} without one error line: {r.stderr!r}")
        flips = flipper.flips
    real, link_side = files_under(dst), files_under(outside)
    leftovers = [p for p in real + link_side if p.endswith(".partial")]
    if leftovers:
        problems.append(f"{len(leftovers)} temporaries left behind (the temporary and the rename were in different folders): {leftovers[:4]}")
    # The folder is a folder at every instant (the link leads to one): no run has a reason to fail.
    # One that makes its temporary through one and renames through the other does.
    if failed:
        problems.append(f"{failed} of {n} runs failed though their folder was always there: {sorted(reasons)[:2]}")
    for name in written:
        places = [d for d in (dst, outside) if name in (real if d == dst else link_side)]
        if len(places) != 1:
            problems.append(f"dst/{name}: exit 0 but the file is in {len(places)} places")
            continue
        with open(os.path.join(places[0], name)) as f:
            if json.load(f) != expected:
                problems.append(f"dst/{name}: not the upgraded preset")
    summary = (f"upgrade: {n} runs, {len(written)} written, {failed} failed, {len(leftovers)} temporaries left, "
               f"{flips} flips" + "".join(f"\n  failure: {r}" for r in sorted(reasons)))
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/debug/gpuencode")
    parser.add_argument("--seconds", type=float, default=4, help="how long each writer is raced")
    parser.add_argument("--only", choices=["studio", "batch", "upgrade"])
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    broken = 0
    for name, race in (("studio", race_studio), ("batch", race_batch), ("upgrade", race_upgrade)):
        if args.only and args.only != name:
            continue
        root = tempfile.mkdtemp(prefix=f"race-{name}-")
        try:
            problems, summary = race(binary, root, args.seconds)
        except Exception as e:
            problems, summary = [f"{type(e).__name__}: {e}"], f"{name}: crashed"
        print(summary)
        for p in problems[:10]:
            print(f"  FAIL {p}")
        broken += bool(problems)
        if not problems:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"  (kept {root})")
    print("containment race: " + ("FAIL" if broken else "ok"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
