#!/usr/bin/env bash
# Browser tests of `gpuencode studio` (Tests/Studio/test_studio.py) in headless Chromium through Selenium.
#   bash Tests/Studio/run.sh --bin .build/debug/gpuencode [--shots DIR]
# Needs Debian's chromium and chromium-driver, ffmpeg, python3 with venv. The Python packages go
# into a virtual environment under .build-studio-tests/ (ignored by git), made once and re-used.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv="$root/.build-studio-tests/venv"

for tool in chromium chromedriver ffmpeg python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (apt-get install chromium chromium-driver ffmpeg python3-venv)" >&2; exit 2; }
done

if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import selenium, numpy; assert selenium.__version__ == "4.51.0"' 2>/dev/null; then
    echo "studio tests: making $venv (selenium, numpy)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check selenium==4.51.0 numpy==2.4.6
fi

exec "$venv/bin/python" "$root/Tests/Studio/test_studio.py" "$@"
