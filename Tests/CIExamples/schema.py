#!/usr/bin/env python3
"""Checks presets/schema.json with a real validator, check-jsonschema (pinned by check.sh).

Run through Tests/CIExamples/check.sh --schema, which installs it:

  valid      every built-in preset (presets/*.json), `gpuencode presets show` of each, every JSON
             example of docs/presets.md (a filter example as a chain of that filter, a "filters"
             fragment as a preset with it) and colour spellings at the edges of their ranges: the
             schema must accept them all. Those naming no file are also given to `gpuencode validate`,
             which must accept them too (the schema may not be stricter than the tool).
  invalid    presets the tool refuses: each must fail check-jsonschema with the precise message
             (JSON path and words) and `gpuencode validate` with exit 67 and its own message.
  stale      `gpuencode presets schema` must print presets/schema.json as committed.

The last line is `schema: N passed, M failed`; the exit status is 1 when anything failed.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "presets", "schema.json")


def preset(filters=None, **members):
    p = {"version": 2, "name": "case"}
    if filters is not None:
        p["filters"] = filters
    p.update(members)
    return p


GRAPH_SEPIA = {"nodes": {"a": {"filter": "sepia", "inputs": ["source"]}}, "output": "a"}

# (name, preset, what check-jsonschema must print, what gpuencode validate must print)
INVALID = [
    ("misspelt parameter", preset([{"filter": "sepia", "intesity": 0.5}]),
     "$.filters[0]: Additional properties are not allowed ('intesity' was unexpected)",
     'unknown parameter for sepia (did you mean "intensity"?)'),
    ("misspelt parameter in a graph node",
     preset(graph={"nodes": {"a": {"filter": "sepia", "intesity": 0.5, "inputs": ["source"]}}, "output": "a"}),
     "$.graph.nodes.a: Additional properties are not allowed ('intesity' was unexpected)",
     'unknown parameter for sepia (did you mean "intensity"?)'),
    ("filters together with graph", preset([{"filter": "sepia"}], graph=GRAPH_SEPIA),
     "should not be valid under {'required': ['filters', 'graph']}",
     'give "filters" (a chain) or "graph", not both'),
    ("parameters without extends", preset([{"filter": "sepia", "id": "s"}], parameters={"s": {"intensity": 0.5}}),
     "$: 'extends' is a dependency of 'parameters'",
     'it needs "extends"'),
    ("inputs inside a chain step", preset([{"filter": "sepia", "inputs": ["source"]}]),
     "$.filters[0]: Additional properties are not allowed ('inputs' was unexpected)",
     "filters[0].inputs: unknown parameter for sepia"),
    ("id on a graph node", preset(graph={"nodes": {"a": {"filter": "sepia", "id": "a", "inputs": ["source"]}}, "output": "a"}),
     "$.graph.nodes.a: Additional properties are not allowed ('id' was unexpected)",
     'a graph node\'s name is its id; drop "id"'),
    ("with on a graph node",
     preset(graph={"nodes": {"a": {"filter": "screen", "with": "#ff0000", "inputs": ["source", "source"]}}, "output": "a"}),
     "$.graph.nodes.a: Additional properties are not allowed ('with' was unexpected)",
     "a blend's second input is inputs[1]"),
    ("a graph blend with one input", preset(graph={"nodes": {"a": {"filter": "screen", "inputs": ["source"]}}, "output": "a"}),
     "$.graph.nodes.a.inputs: ['source'] is too short",
     "screen is a blend and takes 2 inputs"),
    ("a chain blend without with", preset([{"filter": "multiply", "opacity": 0.5}]),
     "$.filters[0]: 'with' is a required property",
     'multiply is a blend and needs "with"'),
    ("rgb() component above 255", preset([{"filter": "multiply", "with": "rgb(256, 0, 0)"}]),
     "$.filters[0].with: 'rgb(256, 0, 0)' does not match",
     '"rgb(256, 0, 0)" is not a colour'),
    ("rgba() alpha above 1", preset([{"filter": "multiply", "with": "rgba(255, 0, 0, 1.5)"}]),
     "$.filters[0].with: 'rgba(255, 0, 0, 1.5)' does not match",
     '"rgba(255, 0, 0, 1.5)" is not a colour'),
    ("rgb() of a colour parameter", preset([{"filter": "vignette", "color": "rgb(1, 2, 300)"}]),
     "$.filters[0].color: 'rgb(1, 2, 300)' does not match",
     '"rgb(1, 2, 300)" is not a colour'),
    ("rgb() with four components", preset([{"filter": "vignette", "color": "rgb(1, 2, 3, 0.5)"}]),
     "$.filters[0].color: 'rgb(1, 2, 3, 0.5)' does not match",
     "is not a colour"),
    ("a node step with a filter", preset([{"node": "source", "filter": "sepia"}]),
     "$.filters[0]: Additional properties are not allowed ('filter' was unexpected)",
     "unknown parameter for sepia"),
    ("a parameter out of range", preset([{"filter": "sepia", "intensity": 7}]),
     "$.filters[0].intensity: 7 is greater than the maximum of 1",
     "7 is out of range 0...1"),
    ("a keyframe out of range", preset([{"filter": "sepia", "intensity": {"keyframes": [[0, 0], [1, 2]]}}]),
     "$.filters[0].intensity.keyframes[1][1]: 2 is greater than the maximum of 1",
     "2 is out of range 0...1"),
    ("a shader parameter named as a built-in",
     preset([{"filter": "shader", "source": "uniform sampler2D inputImageTexture;\nvoid main() { gl_FragColor = vec4(time); }",
              "parameters": {"time": {"type": "float"}}}]),
     "$.filters[0].parameters: 'time' should not be valid under",
     '"time" is reserved'),
    ("an unknown filter", preset([{"filter": "sepai"}]),
     "$.filters[0].filter: 'sepai' is not one of",
     'unknown filter "sepai" (did you mean "sepia"?)'),
]

# Colour spellings the tool accepts at the edges of the ranges: the schema must accept them too.
VALID_COLOURS = ["rgb(255, 255, 255)", "rgb(0,0,0)", "RGB( 10.5 , 20 , 254.9 )", "rgba(255, 0, 0, 1)", "rgba(0, 0, 0, 0)",
                 "rgba(1, 2, 3, 0.25)", "rgba(1, 2, 3, .5)", "#abc", "#A0B1C2", "#a0b1c2d3", " #fff "]


def docs_examples():
    """The JSON examples of docs/presets.md as presets (version 2 only: the schema describes it)."""
    text = open(os.path.join(ROOT, "docs", "presets.md"), encoding="utf-8").read()
    out = []
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        if block.startswith("["):
            continue  # validate --json's output
        if block.startswith('"filters"'):
            out.append(json.loads('{"version": 2, "name": "doc", ' + block + "}"))
            continue
        decoder = json.JSONDecoder()
        i = 0
        while True:
            while i < len(block) and block[i] in " \n\t":
                i += 1
            if i >= len(block):
                break
            obj, i = decoder.raw_decode(block, i)
            out.append(obj if "version" in obj else {"version": 2, "name": "doc", "filters": [obj]})
    return [p for p in out if p.get("version") == 2]


def names_files(value):
    """Whether a preset names a file (the tool would look for it)."""
    if isinstance(value, dict):
        return any(k in ("file", "image", "acv", "extends") and isinstance(v, str) and v for k, v in value.items()) \
            or any(names_files(v) for v in value.values()) \
            or (isinstance(value.get("with"), str) and re.search(r"\.(png|jpe?g|mp4|mov|mkv|webm|m4v|avi)$", value["with"], re.I))
    if isinstance(value, list):
        return any(names_files(v) for v in value)
    return False


def per_file(run, paths):
    """A tool's output lines by the file they name (check-jsonschema's `  FILE::$.path: ...` and the
    lines indented below it; validate's `FILE:L:C: ...`)."""
    out = {p: "" for p in paths}
    current = None
    for line in (run.stdout + run.stderr).splitlines():
        named = next((p for p in out if line.strip().startswith(p + ":")), None)
        if named:
            current = named
        elif not line.startswith("    ") and not line.startswith("  Underlying") and line.strip():
            current = None
        if current:
            out[current] += line + "\n"
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True, help="folder holding check-jsonschema")
    parser.add_argument("--bin", default=os.environ.get("GPUENCODE_BIN", os.path.join(ROOT, ".build/debug/gpuencode")))
    args = parser.parse_args()
    checker = os.path.join(args.tools, "check-jsonschema")
    gpuencode = os.path.abspath(args.bin)
    passed, failed = 0, 0

    def result(ok, what, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok    schema: {what}")
        else:
            failed += 1
            print(f"FAIL  schema: {what}\n{detail}")

    def check_jsonschema(files):
        return subprocess.run([checker, "--schemafile", SCHEMA, *files], capture_output=True, text=True)

    def validate(files):
        return subprocess.run([gpuencode, "validate", *files], capture_output=True, text=True)

    generated = subprocess.run([gpuencode, "presets", "schema"], capture_output=True, text=True)
    result(generated.returncode == 0 and generated.stdout == open(SCHEMA, encoding="utf-8").read(),
           "presets/schema.json is what `gpuencode presets schema` prints",
           "regenerate: .build/debug/gpuencode presets schema -o presets/schema.json -y")

    with tempfile.TemporaryDirectory(prefix="gpuencode-schema-") as tmp:
        builtins = sorted(p for p in glob.glob(os.path.join(ROOT, "presets", "*.json")) if not p.endswith("schema.json"))
        valid = {}
        for path in builtins:
            name = os.path.basename(path)[:-5]
            valid[f"built-in {name}"] = json.load(open(path, encoding="utf-8"))
            shown = subprocess.run([gpuencode, "presets", "show", name], capture_output=True, text=True)
            valid[f"presets show {name}"] = json.loads(shown.stdout) if shown.returncode == 0 else {"not shown": shown.stderr}
        for i, example in enumerate(docs_examples()):
            valid[f"docs/presets.md example {i + 1}"] = example
        for i, colour in enumerate(VALID_COLOURS):
            valid[f"colour {colour!r}"] = preset([{"filter": "multiply", "with": colour}, {"filter": "vignette", "color": colour}])
        files = {}
        for i, (what, value) in enumerate(valid.items()):
            files[what] = os.path.join(tmp, f"valid-{i}.json")
            with open(files[what], "w", encoding="utf-8") as f:
                json.dump(value, f, indent=2)
        # One run of each tool over all the files (check-jsonschema takes a second to start); what
        # each says is picked out by file name.
        schema_out = per_file(check_jsonschema(list(files.values())), files.values())
        # A lone filter example reading {"node": ...} has no such node before it: schema only.
        tool_files = [p for w, p in files.items() if not names_files(valid[w]) and not (w.startswith("docs") and '"node"' in json.dumps(valid[w]))]
        tool_out = per_file(validate(tool_files), tool_files)
        for what, path in files.items():
            problems = []
            if schema_out[path]:
                problems.append("check-jsonschema refused it:\n" + schema_out[path])
            if path in tool_files and "error" in tool_out[path]:
                problems.append("gpuencode validate refused what the schema accepts:\n" + tool_out[path])
            result(not problems, f"valid: {what}", "\n".join(problems))

        cases = {}
        for i, case in enumerate(INVALID):
            cases[os.path.join(tmp, f"invalid-{i}.json")] = case
            with open(os.path.join(tmp, f"invalid-{i}.json"), "w", encoding="utf-8") as f:
                json.dump(case[1], f)
        r = check_jsonschema(list(cases))
        schema_out = per_file(r, cases)
        v = validate(list(cases))
        tool_out = per_file(v, cases)
        if v.returncode != 67:
            result(False, "gpuencode validate exits 67 on the invalid presets", f"exit {v.returncode}")
        for path, (what, value, schema_says, tool_says) in cases.items():
            out = schema_out[path]
            problems = []
            if not out:
                problems.append("check-jsonschema accepted it")
            if schema_says not in out:
                problems.append(f"check-jsonschema did not say {schema_says!r}:\n{out}")
            if "'node' is a required property" in out:
                problems.append(f"check-jsonschema blamed a missing 'node':\n{out}")
            if tool_says not in tool_out[path]:
                problems.append(f"gpuencode validate did not say {tool_says!r}:\n{tool_out[path]}")
            result(not problems, f"invalid: {what}: {schema_says}", "\n".join(problems))

    print(f"schema: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
