#!/usr/bin/env python3
"""Writes the small hand-made seeds in Fuzz/corpus (the built-in presets in presets/ are seeds too;
.ci/fuzz passes both folders). Rerun after changing it; the output is committed."""
import json, os, struct

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(here, exist_ok=True)

def write(name, data):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# .cube: a 2x2x2 3D LUT with a title and domain, and a 1D one.
rows = "".join(f"{r} {g} {b}\n" for b in (0, 1) for g in (0, 1) for r in (0, 1))
write("lut3d.cube", f'TITLE "seed"\n# comment\nLUT_3D_SIZE 2\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n{rows}')
write("lut1d.cube", "LUT_1D_SIZE 3\nLUT_1D_INPUT_RANGE 0 1\n0 0 0\n0.5 0.5 0.5\n1 1 1\n")

# .acv: version 4, 4 curves (composite, red, green, blue) of (output, input) pairs.
def acv(curves, version=4):
    out = struct.pack(">hh", version, len(curves))
    for points in curves:
        out += struct.pack(">h", len(points))
        for x, y in points:
            out += struct.pack(">hh", y, x)
    return out
write("curves.acv", acv([[(0, 0), (64, 50), (192, 210), (255, 255)], [(0, 10), (255, 245)], [(0, 0), (255, 255)], [(0, 0), (128, 140), (255, 255)]]))
write("curves-v1.acv", acv([[(0, 0), (255, 255)]], version=1))

# Presets exercising what the built-ins do not: a graph, a custom shader with parameters,
# keyframes, extends with overrides, encode settings, a blend of a blend, a GPUImage v0 preset.
def preset(name, **rest):
    return json.dumps({"version": 1, "name": name, **rest}, indent=1)
write("graph.json", preset("g", graph={"nodes": {
    "blurred": {"filter": "gaussianBlur", "sigma": 4, "inputs": ["source"]},
    "mix": {"filter": "screen", "inputs": ["source", "blurred"]}}, "output": "mix"}))
write("shader.json", preset("s", filters=[{"filter": "shader", "source": "void main() { gl_FragColor = vec4(amount); }",
    "parameters": {"amount": {"type": "float", "default": 0.5, "range": [0, 1]},
                   "steps": {"type": "int", "default": 2, "range": [1, 8]},
                   "tint": {"type": "color", "default": "#ff8000"}}, "amount": 0.25}]))
write("keyframes.json", preset("k", filters=[{"filter": "brightness",
    "brightness": {"keyframes": [[0, 0], [1.5, 0.2], [3, -0.1]], "easing": "smooth"}}]))
write("extends.json", json.dumps({"version": 1, "name": "e", "extends": "sepia",
    "parameters": {"0": {"intensity": 0.5}}, "encode": {"crf": 20, "x264Preset": "fast", "keyint": 48}}))
write("nested.json", preset("n", filters=[{"filter": "multiply", "id": "a",
    "with": {"filter": "solidColor", "color": [1, 0.5, 0, 1]}}, {"filter": "overlay", "with": {"node": "a"}}]))
write("chain.json", preset("c", filters=[{"filter": "toneCurve", "rgb": [[0, 0], [0.5, 0.6], [1, 1]]},
    {"filter": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
    {"filter": "lookup", "file": "missing.png"}, {"filter": "lut3d", "file": "missing.cube"}]))
write("gpuimage-v0.json", json.dumps({"version": 0, "name": "old", "filters": [
    {"type": "GPUImageSepiaFilter", "intensity": 0.8}, {"type": "GPUImageBrightnessFilter", "brightness": 0.1}]}))
write("json-edge.json", '{"a": [1, -0.5e-3, 1E+2, true, false, null, "\\u00e9\\ud83d\\ude00\\n\\"", {}, []]}')
