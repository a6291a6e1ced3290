#!/usr/bin/env python3
"""Checks docs/ci.md's CI examples: lints them with real linters and runs them as written.

Run through Tests/CIExamples/check.sh, which installs the linters. Every block of docs/ci.md marked
`<!-- ci-example: NAME -->` is read by NAME:

  github            the GitHub Actions workflow      actionlint (+ shellcheck), the workflow JSON schema
  gitlab            the .gitlab-ci.yml               GitLab's CI JSON schema, and the keys used here
  kubernetes        the Indexed Job                  kubernetes-validate --strict at 1.29 and 1.33
  kubernetes-merge  the merge Job                    likewise
  kubernetes-image  docker build / push (sh)         shellcheck
  kubernetes-run    kubectl apply / wait (sh)        shellcheck

Then each example's commands run as written against a built gpuencode on PATH, in temporary folders
holding a few clips made by ffmpeg at the paths the examples use: the GitHub matrix once per
matrix.shard (its ${{ matrix.shard }} substituted) in a workspace of its own, its artifacts carried
to the report job as upload/download-artifact would; GitLab's `parallel:` job once per
CI_NODE_INDEX with CI_NODE_TOTAL, its artifacts given to the merge job; the Kubernetes Job once per
JOB_COMPLETION_INDEX with $(VAR) expanded as Kubernetes does, on one shared folder standing for the
volume (its mountPath mapped there), then the merge Job. Only the installs are skipped (no release
can be downloaded here); they are checked to name the release's assets instead. The merged report
must hold every clip exactly once, with status ok.

The last line is `ci-examples: N passed, M failed`; the exit status is 1 when anything failed.
"""

import argparse
import collections
import fnmatch
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEB = "gpuencode_0.4.0_amd64.deb"
TARBALL = "gpuencode-0.4.0-linux-x86_64.tar.gz"
TARBALL_BIN = "gpuencode-0.4.0-linux-x86_64/bin"
IMAGE = "REGISTRY/gpuencode:0.4.0"
RELEASE = re.compile(r"^https://github\.com/[^/]+/gpuencode/releases/download/v0\.4\.0$")
EXAMPLES = ["github", "gitlab", "kubernetes", "kubernetes-merge", "kubernetes-image", "kubernetes-run"]
# Kubernetes versions the manifests are validated against: the first with backoffLimitPerIndex on by
# default (beta), and the one where it is GA. 1.27 must reject it (shows --strict does check fields).
K8S_VERSIONS = ["1.29.0", "1.33.0"]
K8S_TOO_OLD = "1.27.0"
# The clips, at the paths the examples read (clips/, recursively); the first has audio. These names
# put at least one clip in each of the 4 shards of clips/ with --preset sepia (checked below).
CLIPS = ["intro.mp4", "interview.mov", "broll-01.mp4", "broll-02.mp4", "drone/take1.mp4",
         "drone/take2.mkv", "outro.mp4", "logo.mov"]
# Variables of the CI systems gpuencode reads: none may leak in from the machine running this.
CI_VARIABLES = ["CI_NODE_INDEX", "CI_NODE_TOTAL", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL",
                "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", "JOB_COMPLETION_INDEX"]


class Failure(Exception):
    pass


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def run(self, name, fn, *args):
        start = time.monotonic()
        try:
            note = fn(*args)
        except Failure as e:
            self.failed.append(name)
            print(f"FAIL {name}: {e}", flush=True)
            return False
        except Exception as e:  # a bug here or an unexpected shape: still one clear line
            self.failed.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            return False
        self.passed += 1
        print(f"ok   {name}{' (' + note + ')' if note else ''} [{time.monotonic() - start:.1f}s]", flush=True)
        return True


def need(condition, message):
    if not condition:
        raise Failure(message)


# ---------------------------------------------------------------------------------------------
# Reading the document

def extract(doc_path):
    text = open(doc_path, encoding="utf-8").read()
    blocks = {}
    fence = re.compile(r"^```([A-Za-z0-9_-]*)\n(.*?)^```\s*$", re.S | re.M)
    marker = re.compile(r"<!--\s*ci-example:\s*([A-Za-z0-9_-]+)\s*-->\s*$")
    unmarked = []
    for m in fence.finditer(text):
        lang, body = m.group(1), m.group(2)
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mk = marker.search(before)
        line = text.count("\n", 0, m.start()) + 1
        if mk:
            name = mk.group(1)
            if name in blocks:
                raise Failure(f"{doc_path}:{line}: a second block marked ci-example: {name}")
            blocks[name] = {"lang": lang, "text": body, "line": line}
        elif lang in ("yaml", "yml"):
            unmarked.append(line)
    return text, blocks, unmarked


def load_yaml(block, name):
    try:
        data = yaml.safe_load(block["text"])
    except yaml.YAMLError as e:
        raise Failure(f"docs/ci.md:{block['line']}: the {name} block is not valid YAML: {e}")
    need(isinstance(data, dict), f"the {name} block is not a YAML mapping")
    return data


# ---------------------------------------------------------------------------------------------
# Linters

def tool(tools, name):
    path = os.path.join(tools, name)
    need(os.access(path, os.X_OK), f"{path} not found: run Tests/CIExamples/check.sh, which installs it")
    return path


def run_tool(argv, what, ok_codes=(0,)):
    p = subprocess.run(argv, capture_output=True, text=True)
    out = (p.stdout + p.stderr).strip()
    if p.returncode not in ok_codes:
        raise Failure(f"{what} (exit {p.returncode}):\n{out}")
    return out


def version_of(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else "?"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def lint_github(ctx):
    path = write(os.path.join(ctx.tmp, "lint", ".github", "workflows", "transcode.yml"), ctx.blocks["github"]["text"])
    actionlint = tool(ctx.tools, "actionlint")
    shellcheck = tool(ctx.tools, "shellcheck")
    # -shellcheck: the run: scripts are shellchecked too; -pyflakes= : no Python steps here.
    run_tool([actionlint, "-shellcheck", shellcheck, "-pyflakes=", "-no-color", path], "actionlint")
    return version_of([actionlint, "--version"])


def schema_github(ctx):
    path = os.path.join(ctx.tmp, "lint", ".github", "workflows", "transcode.yml")
    write(path, ctx.blocks["github"]["text"])
    run_tool([tool(ctx.tools, "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", path],
             "check-jsonschema vendor.github-workflows")
    return "check-jsonschema " + version_of([tool(ctx.tools, "check-jsonschema"), "--version"]).split()[-1]


def schema_gitlab(ctx):
    path = write(os.path.join(ctx.tmp, "lint", ".gitlab-ci.yml"), ctx.blocks["gitlab"]["text"])
    run_tool([tool(ctx.tools, "check-jsonschema"), "--builtin-schema", "vendor.gitlab-ci", path],
             "check-jsonschema vendor.gitlab-ci")
    return "GitLab's CI schema, as vendored by check-jsonschema"


def validate_kubernetes(ctx, name):
    path = write(os.path.join(ctx.tmp, "lint", f"{name}.yaml"), ctx.blocks[name]["text"])
    kv = tool(ctx.tools, "kubernetes-validate")
    for v in K8S_VERSIONS:
        run_tool([kv, "--strict", "--no-warn", "-k", v, path], f"kubernetes-validate --strict -k {v} {name}")
    return f"kubernetes-validate {version_of([kv, '--version'])} --strict, Kubernetes {' and '.join(K8S_VERSIONS)}"


def kubernetes_too_old(ctx):
    # The Job with only backoffLimitPerIndex added to what 1.27 knows (its podFailurePolicy schema
    # differs too, and would be reported first).
    probe = json.loads(json.dumps(ctx.yaml["kubernetes"]))
    probe["spec"].pop("podFailurePolicy", None)
    path = write(os.path.join(ctx.tmp, "lint", "kubernetes-probe.yaml"), yaml.safe_dump(probe))
    p = subprocess.run([tool(ctx.tools, "kubernetes-validate"), "--strict", "-k", K8S_TOO_OLD, path],
                       capture_output=True, text=True)
    need(p.returncode != 0 and "backoffLimitPerIndex" in p.stdout + p.stderr,
         f"kubernetes-validate --strict -k {K8S_TOO_OLD} accepted backoffLimitPerIndex: the strict check checks nothing")
    return f"{K8S_TOO_OLD} rejects backoffLimitPerIndex, so --strict checks the fields"


def shellcheck(ctx, name, script, shell="bash"):
    path = write(os.path.join(ctx.tmp, "lint", f"{name}.sh"), f"#!/usr/bin/env {shell}\n{script}\n")
    run_tool([tool(ctx.tools, "shellcheck"), "-s", shell, path], f"shellcheck {name}")


def shellcheck_blocks(ctx):
    gl = ctx.yaml["gitlab"]
    scripts = {"kubernetes-image": ctx.blocks["kubernetes-image"]["text"],
               "kubernetes-run": ctx.blocks["kubernetes-run"]["text"],
               "gitlab-before_script": "\n".join(gl["default"]["before_script"])}
    for job, spec in gitlab_jobs(gl).items():
        scripts[f"gitlab-{job}"] = "\n".join(spec["script"])
    merge = ctx.yaml["kubernetes-merge"]["spec"]["template"]["spec"]["containers"][0]
    if merge.get("command", [None])[:2] == ["sh", "-c"]:
        scripts["kubernetes-merge-sh-c"] = merge["args"][0]
    for name, script in scripts.items():
        shellcheck(ctx, name, script, "sh" if name == "kubernetes-merge-sh-c" else "bash")
    version = re.search(r"version: (\S+)", run_tool([tool(ctx.tools, "shellcheck"), "--version"], "shellcheck --version"))
    return f"{len(scripts)} scripts, shellcheck {version.group(1) if version else '?'}"


# ---------------------------------------------------------------------------------------------
# What the examples say

def gitlab_jobs(gl):
    reserved = {"variables", "default", "stages", "workflow", "include", "image", "services", "cache",
                "before_script", "after_script", "pages"}
    return {k: v for k, v in gl.items() if k not in reserved and not k.startswith(".") and isinstance(v, dict)}


def check_install_commands(text, where):
    """An install must fetch the .deb from $GPUENCODE_RELEASE and give apt-get install a path."""
    need(f"$GPUENCODE_RELEASE/{DEB}" in text, f"{where}: does not download $GPUENCODE_RELEASE/{DEB}")
    need(re.search(r"apt-get install[^\n]*\s(\./|/)\S*" + re.escape(DEB), text),
         f"{where}: does not `apt-get install` the .deb by path (./{DEB} or /tmp/{DEB}), so apt would not resolve its dependencies")
    need("DEBIAN_FRONTEND=noninteractive" in text, f"{where}: apt-get without DEBIAN_FRONTEND=noninteractive")


def github_semantics(ctx):
    wf = ctx.yaml["github"]
    need(True in wf or "on" in wf, "the workflow has no `on:`")
    release = (wf.get("env") or {}).get("GPUENCODE_RELEASE", "")
    need(RELEASE.match(release), f"workflow env GPUENCODE_RELEASE={release!r} is not the v0.4.0 release download URL")
    need(list(wf["env"]).index("GPUENCODE_RELEASE") == 0, "GPUENCODE_RELEASE is not the first variable")
    runs = 0
    for job_name, job in wf["jobs"].items():
        steps = job.get("steps", [])
        installs = [i for i, s in enumerate(steps) if s.get("name") == "Install gpuencode"]
        users = [i for i, s in enumerate(steps) if re.search(r"\bgpuencode\s+(batch|report)", s.get("run", ""))]
        if not users:
            continue
        runs += 1
        need(installs and installs[0] < users[0], f"job {job_name} runs gpuencode without an `Install gpuencode` step before it")
        check_install_commands(steps[installs[0]]["run"], f"job {job_name}'s install step")
        need(job.get("container") in ("debian:12", {"image": "debian:12"}),
             f"job {job_name} installs the Debian 12 .deb but does not run in container debian:12")
    need(runs >= 2, "expected a transcode and a merge job that run gpuencode")
    shards = wf["jobs"]["transcode"]["strategy"]["matrix"]["shard"]
    need(shards == list(range(1, len(shards) + 1)), f"matrix.shard {shards} is not 1..N")
    run = "\n".join(s.get("run", "") for s in wf["jobs"]["transcode"]["steps"])
    need(f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in run, f"the transcode step does not say --shard ${{{{ matrix.shard }}}}/{len(shards)}")
    # The tarball alternative, in the text.
    need(f"$GPUENCODE_RELEASE/{TARBALL}" in ctx.doc and TARBALL_BIN in ctx.doc,
         f"the tarball alternative does not name $GPUENCODE_RELEASE/{TARBALL} and {TARBALL_BIN}")
    return f"{runs} jobs install the .deb before gpuencode, matrix 1..{len(shards)}"


def gitlab_semantics(ctx):
    gl = ctx.yaml["gitlab"]
    variables = gl.get("variables") or {}
    need(RELEASE.match(str(variables.get("GPUENCODE_RELEASE", ""))), "variables.GPUENCODE_RELEASE is not the v0.4.0 release download URL")
    need(list(variables).index("GPUENCODE_RELEASE") == 0, "GPUENCODE_RELEASE is not the first variable")
    default = gl.get("default") or {}
    need(default.get("image") == "debian:12", f"default.image is {default.get('image')!r}, not debian:12")
    check_install_commands("\n".join(default.get("before_script", [])), "default.before_script")
    jobs = gitlab_jobs(gl)
    stages = gl.get("stages", ["build", "test", "deploy"])
    parallel = [j for j, s in jobs.items() if isinstance(s.get("parallel"), int)]
    need(len(parallel) == 1, f"expected one `parallel:` job, found {parallel}")
    t = jobs[parallel[0]]
    need(t["parallel"] == 4, f"{parallel[0]}: parallel is {t['parallel']}, not 4")
    merges = [j for j, s in jobs.items() if any("gpuencode report merge" in line for line in s.get("script", []))]
    need(len(merges) == 1, f"expected one job running gpuencode report merge, found {merges}")
    m = jobs[merges[0]]
    need(m.get("when") == "always", f"{merges[0]}: not `when: always`, so it would not run after a failed shard")
    need(parallel[0] in m.get("needs", []), f"{merges[0]}: does not need {parallel[0]} (its artifacts)")
    for j, s in jobs.items():
        need(s.get("stage") in stages, f"{j}: stage {s.get('stage')!r} is not in stages {stages}")
        need("script" in s and isinstance(s["script"], list), f"{j}: no script list")
        need("before_script" not in s, f"{j}: a before_script of its own would replace the install")
    need(stages.index(m["stage"]) > stages.index(t["stage"]), "the merge job's stage does not come after the transcode's")
    need(t.get("artifacts", {}).get("when") == "always", f"{parallel[0]}: artifacts not `when: always`: a failed shard's report would be lost")
    need(not re.search(r"--shard\b", " ".join(t["script"])), f"{parallel[0]}: gives --shard; GitLab's CI_NODE_INDEX/CI_NODE_TOTAL should decide")
    return f"{parallel[0]} parallel: 4, {merges[0]} when: always, needs {parallel[0]}"


def job_code(name):
    src = open(os.path.join(ROOT, "Sources/GPUEncodeCore/GPUEncodeError.swift"), encoding="utf-8").read()
    m = re.search(r"case \." + name + r": return (\d+)", src)
    need(m, f"Sources/GPUEncodeCore/GPUEncodeError.swift has no `case .{name}: return N`")
    return int(m.group(1))


def kubernetes_semantics(ctx):
    job = ctx.yaml["kubernetes"]
    spec = job["spec"]
    pod = spec["template"]["spec"]
    need(spec.get("completionMode") == "Indexed", "not completionMode: Indexed")
    need(isinstance(spec.get("backoffLimitPerIndex"), int), "no backoffLimitPerIndex: one bad shard would use the whole backoff budget")
    need("backoffLimit" not in spec, "backoffLimit beside backoffLimitPerIndex: it caps the retries of all shards together")
    need(pod.get("restartPolicy") == "Never", "restartPolicy is not Never (backoffLimitPerIndex and podFailurePolicy need it)")
    containers = {c["name"]: c for c in pod["containers"]}
    need(len(containers) == 1, "expected one container")
    name, container = next(iter(containers.items()))
    need(container.get("image") == IMAGE, f"image is {container.get('image')!r}, not {IMAGE}")
    args = container["args"]
    need(args[:1] == ["batch"] and "command" not in container, "the container should run the image's entrypoint (gpuencode) with args batch ...")
    count = args[args.index("--shard-count") + 1] if "--shard-count" in args else None
    need(count == str(spec["completions"]), f"--shard-count {count} is not completions {spec['completions']}")
    need(spec.get("parallelism", 1) <= spec["completions"], "parallelism above completions")

    failed = job_code("jobsFailed")
    table = open(os.path.join(ROOT, "Sources/GPUEncodeCore/GPUEncodeError.swift"), encoding="utf-8").read()
    need(f'({failed}, "batch: some jobs failed' in table, f"the exit code table does not document {failed} as 'some jobs failed'")
    need(re.search(rf"\b{failed} some jobs failed", ctx.doc), f"docs/ci.md's exit codes do not say {failed} some jobs failed")
    rules = spec["podFailurePolicy"]["rules"]
    fail_index = [r for r in rules if r["action"] == "FailIndex"]
    need(len(fail_index) == 1, "expected one FailIndex rule")
    on = fail_index[0].get("onExitCodes") or {}
    need(on.get("containerName") == name, f"the FailIndex rule names container {on.get('containerName')!r}, the pod's is {name!r}")
    need(on.get("operator") == "In" and on.get("values") == [failed],
         f"the FailIndex rule is {on.get('operator')} {on.get('values')}, not In [{failed}] (gpuencode's 'some jobs failed')")
    ignore = [r for r in rules if r["action"] == "Ignore"]
    need(any(c.get("type") == "DisruptionTarget" for r in ignore for c in r.get("onPodConditions", [])),
         "no Ignore rule for DisruptionTarget: evictions (SIGTERM, 143) would count as failures")
    for r in rules:
        need(r["action"] in ("FailJob", "FailIndex", "Ignore", "Count"), f"unknown podFailurePolicy action {r['action']}")
        codes = r.get("onExitCodes")
        if codes:
            need(codes.get("containerName") in containers, f"rule {r['action']} names container {codes.get('containerName')!r}, not in the pod")
            need(0 not in codes.get("values", []) or codes.get("operator") == "NotIn", f"rule {r['action']} matches exit 0")
    # The merge Job: same image and volume, a shell for the glob.
    merge = ctx.yaml["kubernetes-merge"]
    mc = merge["spec"]["template"]["spec"]["containers"][0]
    need(mc.get("image") == IMAGE, f"the merge Job's image is {mc.get('image')!r}, not {IMAGE}")
    need(mc.get("command") == ["sh", "-c"] and "gpuencode report merge" in mc["args"][0],
         "the merge Job does not run `gpuencode report merge` through sh -c (the glob needs a shell)")
    need(merge["spec"]["template"]["spec"]["volumes"] == pod["volumes"], "the merge Job does not mount the batch Job's volume")
    # The image is the one built, and the commands apply these two manifests by their names.
    image_sh = ctx.blocks["kubernetes-image"]["text"]
    need('docker build -t "$REGISTRY/gpuencode:0.4.0" .' in image_sh, "the image block does not `docker build -t \"$REGISTRY/gpuencode:0.4.0\" .`")
    need(re.search(r"^REGISTRY=\S+", image_sh, re.M), "the image block does not set REGISTRY first")
    run_sh = ctx.blocks["kubernetes-run"]["text"]
    for manifest, data in (("gpuencode-batch.yaml", job), ("gpuencode-merge.yaml", merge)):
        need(f'sed "s|REGISTRY|$REGISTRY|" {manifest} | kubectl apply -f -' in run_sh, f"the run block does not apply {manifest} with REGISTRY filled in")
        need(f"`{manifest}`" in ctx.doc, f"the text does not say to save a manifest as {manifest}")
        need(f"finished {data['metadata']['name']}" in run_sh, f"the run block does not wait for Job {data['metadata']['name']}")
    need(re.search(r"Kubernetes 1\.29 or later", ctx.doc), "the text does not say which Kubernetes version this needs")
    dockerfile = os.path.join(ROOT, "Dockerfile")
    if os.path.exists(dockerfile):
        text = open(dockerfile, encoding="utf-8").read()
        need(re.search(r'^ENTRYPOINT\s+\["gpuencode"\]', text, re.M), "Dockerfile: ENTRYPOINT is not [\"gpuencode\"], which the Job's args rely on")
        need(re.search(r"^FROM\s+debian:12", text, re.M), "Dockerfile: not FROM debian:12 (the merge Job needs sh)")
        note = "Dockerfile's ENTRYPOINT is gpuencode"
    else:
        note = "no Dockerfile in this checkout yet: its ENTRYPOINT not checked"
    return f"FailIndex on container {name} exit {failed}, --shard-count = completions = {spec['completions']}; {note}"


def exit_code_80(ctx):
    """gpuencode's 'some jobs failed' code, as the FailIndex rule expects it, by running a bad clip."""
    expected = job_code("jobsFailed")
    work = os.path.join(ctx.tmp, "exit-code")
    os.makedirs(os.path.join(work, "clips"))
    good = os.path.join(ctx.fixture, "clips", CLIPS[0])
    shutil.copy(good, os.path.join(work, "clips", "good.mp4"))
    with open(good, "rb") as f:
        head = f.read(300)
    with open(os.path.join(work, "clips", "broken.mp4"), "wb") as f:
        f.write(head)
    p = subprocess.run(["gpuencode", "batch", "clips", "--out-dir", "out", "--progress", "none"],
                       cwd=work, env=ctx.env(), capture_output=True, text=True, timeout=300)
    need(p.returncode == expected, f"a batch with one broken clip exited {p.returncode}, not {expected}: {p.stderr.strip()}")
    return f"a batch with a broken clip exits {expected}"


# ---------------------------------------------------------------------------------------------
# Running the examples

class Context:
    def __init__(self, args):
        self.tmp = tempfile.mkdtemp(prefix="ci-examples-")
        self.tools = args.tools
        self.bin = os.path.abspath(args.bin)
        self.blocks = {}
        self.yaml = {}
        self.doc = ""
        self.fixture = os.path.join(self.tmp, "fixture")
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        os.symlink(self.bin, os.path.join(bindir, "gpuencode"))
        self.path = bindir + os.pathsep + os.environ.get("PATH", "")

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES and not k.startswith("GITHUB_")
               and not k.startswith("GITLAB_")}
        env["PATH"] = self.path
        env.update(extra or {})
        return env


def make_clips(ctx):
    for i, rel in enumerate(CLIPS):
        path = os.path.join(ctx.fixture, "clips", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        argv = ["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
                f"testsrc=size=160x120:rate=10:duration=0.5"]
        if i == 0:
            argv += ["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "aac"]
        argv += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path]
        p = subprocess.run(argv, capture_output=True, text=True)
        need(p.returncode == 0, f"ffmpeg could not make {rel}: {p.stderr.strip()}")
    return f"{len(CLIPS)} clips under clips/ by ffmpeg"


def checkout(ctx, workspace):
    shutil.copytree(os.path.join(ctx.fixture, "clips"), os.path.join(workspace, "clips"))


def sh(ctx, script, cwd, env, shell, what):
    p = subprocess.run(shell + [script], cwd=cwd, env=ctx.env(env), capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise Failure(f"{what} exited {p.returncode}:\n$ {script.strip()}\n{p.stderr.strip()[-2000:]}")
    return p


def check_shard_reports(folder, where):
    """Every shard's report has jobs: the clips exercise the sharding, no shard ran empty."""
    reports = glob.glob(os.path.join(folder, "reports", "*.json"))
    need(reports, f"{where}: no report under reports/")
    for r in reports:
        report = json.load(open(r, encoding="utf-8"))
        need(report.get("jobs"), f"{where}: {os.path.relpath(r, folder)} has no jobs: the clips no longer cover every shard (change CLIPS)")


def check_merged(report_path, where, outputs_root=None):
    need(os.path.exists(report_path), f"{where}: no merged report at {report_path}")
    report = json.load(open(report_path, encoding="utf-8"))
    need(report.get("schema") == "gpuencode-batch-report", f"{where}: {report_path} is not a gpuencode batch report")
    jobs = report.get("jobs", [])
    seen = collections.Counter()
    for j in jobs:
        m = re.search(r"(?:^|/)clips/(.+)$", j.get("input", ""))
        need(m, f"{where}: a job's input {j.get('input')!r} is not under clips/")
        seen[m.group(1)] += 1
        need(j.get("status") == "ok", f"{where}: {m.group(1)} has status {j.get('status')!r} ({j.get('error')})")
        if outputs_root is not None:
            out = j["output"] if os.path.isabs(j["output"]) else os.path.join(outputs_root, j["output"])
            need(os.path.exists(out) and os.path.getsize(out) > 0, f"{where}: the output {j['output']} of {m.group(1)} is missing or empty")
            # ffprobe, not the report, says the output is a whole video: every frame of the clip (0.5 s at 10 fps).
            p = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                "stream=codec_name,nb_read_frames", "-of", "csv=p=0", out], capture_output=True, text=True)
            need(p.returncode == 0 and p.stdout.strip() == "h264,5",
                 f"{where}: ffprobe of {j['output']} says {p.stdout.strip() or p.stderr.strip()!r}, not h264 with 5 frames")
    twice = sorted(c for c, n in seen.items() if n > 1)
    missing = sorted(set(CLIPS) - set(seen))
    extra = sorted(set(seen) - set(CLIPS))
    need(not twice and not missing and not extra,
         f"{where}: merged report: twice {twice}, missing {missing}, unexpected {extra}")
    need(report.get("plan", {}).get("jobs") == len(CLIPS), f"{where}: plan.jobs is {report.get('plan')}, not {len(CLIPS)}")
    return f"{len(jobs)} clips once each, all ok"


GITHUB_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def github_expand(text, values, where):
    def sub(m):
        need(m.group(1) in values, f"{where}: unknown expression ${{{{ {m.group(1)} }}}}")
        return str(values[m.group(1)])
    return GITHUB_EXPR.sub(sub, text)


def paths_of(spec):
    return [p.strip() for p in str(spec).splitlines() if p.strip()]


def upload(store, name, workspace, spec):
    """actions/upload-artifact: the files matched, relative to their least common ancestor."""
    files = []
    for pattern in paths_of(spec):
        for match in glob.glob(os.path.join(workspace, pattern), recursive=True):
            if os.path.isdir(match):
                for d, _, fs in os.walk(match):
                    files += [os.path.join(d, f) for f in fs if not f.startswith(".")]  # hidden files are left out
            else:
                files.append(match)
    if not files:
        print(f"     note: upload-artifact {name}: no files match {spec!r}, no artifact (as if-no-files-found: warn)")
        return
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    for f in files:
        dest = os.path.join(store, name, os.path.relpath(f, root))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(f, dest)


def download(store, workspace, spec):
    names = sorted(n for n in os.listdir(store) if fnmatch.fnmatchcase(n, spec.get("pattern", "*")))
    need(names, f"download-artifact: no artifact matches {spec.get('pattern')!r}")
    for n in names:
        dest = os.path.join(workspace, spec.get("path", "."))
        if not spec.get("merge-multiple"):
            dest = os.path.join(dest, n)
        shutil.copytree(os.path.join(store, n), dest, dirs_exist_ok=True)


def run_github_job(ctx, job_name, job, values, store, workspace):
    env = dict(ctx.yaml["github"].get("env") or {})
    env.update(job.get("env") or {})
    ran = 0
    for i, step in enumerate(job["steps"]):
        where = f"jobs.{job_name}.steps[{i}]"
        if step.get("name") == "Install gpuencode":
            continue  # the release cannot be downloaded here; checked in github-semantics
        uses = step.get("uses", "")
        with_ = {k: github_expand(str(v), values, where) if isinstance(v, str) else v for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            checkout(ctx, workspace)
        elif uses.startswith("actions/cache@"):
            pass  # a first run: nothing cached yet
        elif uses.startswith("actions/upload-artifact@"):
            need(with_.get("if-no-files-found", "warn") == "warn", f"{where}: if-no-files-found is not simulated here")
            upload(store, with_["name"], workspace, with_["path"])
        elif uses.startswith("actions/download-artifact@"):
            download(store, workspace, with_)
        elif "run" in step:
            script = github_expand(step["run"], values, where)
            step_env = {**env, **{k: str(v) for k, v in (step.get("env") or {}).items()}}
            # GitHub's default shell on Linux where bash exists: bash -e {0}.
            sh(ctx, script, workspace, step_env, ["bash", "--noprofile", "--norc", "-e", "-c"], f"{where} ({values})")
            ran += 1
        else:
            raise Failure(f"{where}: a step this check does not know how to run: {uses or step}")
    return ran


def run_github(ctx):
    wf = ctx.yaml["github"]
    store = os.path.join(ctx.tmp, "github", "artifacts")
    os.makedirs(store)
    transcode = wf["jobs"]["transcode"]
    for shard in transcode["strategy"]["matrix"]["shard"]:
        ws = os.path.join(ctx.tmp, "github", f"transcode-{shard}")  # each matrix job on its own machine
        os.makedirs(ws)
        run_github_job(ctx, "transcode", transcode, {"matrix.shard": shard, "github.sha": "0" * 40}, store, ws)
        check_shard_reports(ws, f"github shard {shard}")
    for name, job in wf["jobs"].items():
        if name == "transcode":
            continue
        need(job.get("needs") in ("transcode", ["transcode"]), f"job {name} does not need transcode")
        ws = os.path.join(ctx.tmp, "github", name)
        os.makedirs(ws)
        run_github_job(ctx, name, job, {}, store, ws)
    report = os.path.join(ctx.tmp, "github", "report", "reports", "all.json")
    outputs = os.path.join(ctx.tmp, "github", "outputs")
    for n in os.listdir(store):
        if n.startswith("out-"):
            shutil.copytree(os.path.join(store, n), os.path.join(outputs, "out"), dirs_exist_ok=True)
    need(os.path.exists(os.path.join(store, "merged-report", "all.json")), "the merged report was not uploaded")
    return check_merged(report, "github", outputs)


def run_gitlab(ctx):
    gl = ctx.yaml["gitlab"]
    variables = {k: str(v) for k, v in (gl.get("variables") or {}).items()}
    jobs = gitlab_jobs(gl)
    stages = gl.get("stages", ["build", "test", "deploy"])
    artifacts = {}  # job name -> folders of its runs' artifacts
    merged = None
    for job_name, job in sorted(jobs.items(), key=lambda kv: stages.index(kv[1]["stage"])):
        total = job.get("parallel", 1)
        for index in range(1, total + 1):
            ws = os.path.join(ctx.tmp, "gitlab", f"{job_name}-{index}")
            os.makedirs(ws)
            checkout(ctx, ws)
            for need_name in job.get("needs", []):
                for folder in artifacts.get(need_name, []):
                    shutil.copytree(folder, ws, dirs_exist_ok=True)
            env = dict(variables)
            env.update({"CI_JOB_NAME": job_name, "CI_PROJECT_DIR": ws})
            if "parallel" in job:
                env.update({"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total)})
            # before_script is the install (checked in gitlab-semantics); the runner runs the script
            # lines in one shell that stops at the first failure.
            sh(ctx, "\n".join(job["script"]), ws, env, ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c"],
               f"{job_name} (CI_NODE_INDEX={index})")
            if "parallel" in job:
                check_shard_reports(ws, f"gitlab {job_name} CI_NODE_INDEX={index}")
            art = job.get("artifacts") or {}
            kept = os.path.join(ctx.tmp, "gitlab", "artifacts", f"{job_name}-{index}")
            os.makedirs(kept)
            for pattern in art.get("paths", []):
                matches = glob.glob(os.path.join(ws, pattern), recursive=True)
                need(matches, f"{job_name} (CI_NODE_INDEX={index}): artifacts path {pattern} matches nothing")
                for m in matches:
                    dest = os.path.join(kept, os.path.relpath(m, ws))
                    if os.path.isdir(m):
                        shutil.copytree(m, dest, dirs_exist_ok=True)
                    else:
                        os.makedirs(os.path.dirname(dest), exist_ok=True)
                        shutil.copy(m, dest)
            junit = (art.get("reports") or {}).get("junit")
            if junit:
                need(glob.glob(os.path.join(ws, junit)), f"{job_name} (CI_NODE_INDEX={index}): reports:junit {junit} matches nothing")
            artifacts.setdefault(job_name, []).append(kept)
            if any("gpuencode report merge" in line for line in job["script"]):
                merged = ws
    need(merged, "no job ran gpuencode report merge")
    return check_merged(os.path.join(merged, "reports", "all.json"), "gitlab", merged)


K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def k8s_expand(text, env):
    """Kubernetes' $(VAR) in command and args: defined ones replaced, $$ an escaped $, others kept."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return K8S_REF.sub(sub, text)


def run_pod(ctx, pod_spec, volume_root, extra_env, where):
    container = pod_spec["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    need(len(mounts) == 1, f"{where}: expected one volume mount")
    mount_path = next(iter(mounts.values())).rstrip("/")
    env = {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}
    env.update(extra_env)

    def place(s):  # the volume's mountPath, as this machine has it
        return re.sub(re.escape(mount_path) + r"(?=/|$)", volume_root, s)
    argv = (container.get("command") or ["gpuencode"]) + container.get("args", [])  # ENTRYPOINT ["gpuencode"]
    argv = [place(k8s_expand(a, env)) for a in argv]
    leftover = [a for a in argv if "$(" in a]
    need(not leftover, f"{where}: unexpanded variables in {leftover}")
    p = subprocess.run(argv, cwd="/", env=ctx.env(env), capture_output=True, text=True, timeout=600)
    need(p.returncode == 0, f"{where} exited {p.returncode}:\n$ {shlex.join(argv)}\n{p.stderr.strip()[-2000:]}")


def run_kubernetes(ctx):
    job = ctx.yaml["kubernetes"]
    volume = os.path.join(ctx.tmp, "kubernetes", "volume")  # the PersistentVolumeClaim, shared by every pod
    pod = job["spec"]["template"]["spec"]
    mount = pod["containers"][0]["volumeMounts"][0]["mountPath"].rstrip("/")
    inputs = pod["containers"][0]["args"][1]
    need(inputs.startswith(mount + "/"), f"the batch input {inputs} is not on the volume {mount}")
    shutil.copytree(os.path.join(ctx.fixture, "clips"), os.path.join(volume, inputs[len(mount) + 1:]))
    for index in range(job["spec"]["completions"]):
        run_pod(ctx, pod, volume, {"JOB_COMPLETION_INDEX": str(index)}, f"gpuencode-batch pod JOB_COMPLETION_INDEX={index}")
    run_pod(ctx, ctx.yaml["kubernetes-merge"]["spec"]["template"]["spec"], volume, {}, "gpuencode-merge pod")
    merge_args = ctx.yaml["kubernetes-merge"]["spec"]["template"]["spec"]["containers"][0]["args"][0]
    out = re.search(r"-o\s+(\S+)", merge_args).group(1)
    return check_merged(volume + out[len(mount):], "kubernetes", volume)


# ---------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.environ.get("GPUENCODE_BIN") or os.path.join(ROOT, ".build/debug/gpuencode"),
                        help="the gpuencode to run (default $GPUENCODE_BIN, else .build/debug/gpuencode)")
    parser.add_argument("--tools", required=True, help="folder with actionlint, shellcheck, kubernetes-validate, check-jsonschema")
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs/ci.md"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"ci-examples: error: no gpuencode at {args.bin}: build it (swift build) or give --bin PATH / GPUENCODE_BIN", file=sys.stderr)
        print("ci-examples: 0 passed, 1 failed")
        return 1

    start = time.monotonic()
    ctx = Context(args)
    checks = Checks()
    try:
        def read():
            ctx.doc, ctx.blocks, unmarked = extract(args.doc)
            need(not unmarked, f"yaml blocks at docs/ci.md lines {unmarked} have no <!-- ci-example: NAME --> marker")
            missing = [n for n in EXAMPLES if n not in ctx.blocks]
            need(not missing, f"no blocks marked ci-example: {', '.join(missing)}")
            for n in EXAMPLES:
                if ctx.blocks[n]["lang"] in ("yaml", "yml"):
                    ctx.yaml[n] = load_yaml(ctx.blocks[n], n)
            return f"{len(ctx.blocks)} marked blocks, {len(ctx.yaml)} YAML documents parsed"
        if not checks.run("read docs/ci.md", read):
            raise Failure("stopped: the examples could not be read")

        checks.run("actionlint github", lint_github, ctx)
        checks.run("schema github (GitHub workflow JSON schema)", schema_github, ctx)
        checks.run("schema gitlab (GitLab CI JSON schema)", schema_gitlab, ctx)
        checks.run("kubernetes-validate kubernetes", validate_kubernetes, ctx, "kubernetes")
        checks.run("kubernetes-validate kubernetes-merge", validate_kubernetes, ctx, "kubernetes-merge")
        checks.run("kubernetes-validate is strict", kubernetes_too_old, ctx)
        checks.run("shellcheck scripts", shellcheck_blocks, ctx)
        checks.run("github installs and shards", github_semantics, ctx)
        checks.run("gitlab installs, parallel and merge", gitlab_semantics, ctx)
        checks.run("kubernetes exit-code rule, shards and image", kubernetes_semantics, ctx)
        if checks.run("clips", make_clips, ctx):
            checks.run("gpuencode's 'some jobs failed' code", exit_code_80, ctx)
            checks.run("github: run 4 shards, then the merge", run_github, ctx)
            checks.run("gitlab: run parallel: 4, then the merge", run_gitlab, ctx)
            checks.run("kubernetes: run every index, then the merge Job", run_kubernetes, ctx)
    except Failure as e:
        print(f"ci-examples: error: {e}", file=sys.stderr)
    finally:
        if args.keep:
            print(f"ci-examples: kept {ctx.tmp}")
        else:
            shutil.rmtree(ctx.tmp, ignore_errors=True)

    if checks.failed:
        print(f"ci-examples: error: docs/ci.md's examples failed: {', '.join(checks.failed)} (see FAIL lines above)", file=sys.stderr)
    print(f"ci-examples: {time.monotonic() - start:.0f}s")
    print(f"ci-examples: {checks.passed} passed, {len(checks.failed)} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
