# Sourced by packaging/stage, build-deb and build-tarball: the version, the release build, and errors.
# shellcheck shell=bash

PKG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
PKG_NAME=gpuencode

pkg_die() {
  echo "${PKG_TOOL:-packaging}: error: $*" >&2
  exit 1
}

pkg_note() {
  echo "${PKG_TOOL:-packaging}: $*" >&2
}

# The one source of the version: the top-level VERSION file.
pkg_version() {
  local v
  [ -f "$PKG_ROOT/VERSION" ] || pkg_die "no VERSION file at $PKG_ROOT"
  v=$(tr -d ' \n' <"$PKG_ROOT/VERSION")
  [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+([~+.][0-9A-Za-z.~+]+)?$ ]] || pkg_die "VERSION holds '$v', not a version like 0.4.0"
  printf '%s\n' "$v"
}

pkg_swift_path() {
  if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
  fi
  command -v swift >/dev/null 2>&1 || pkg_die "swift not found (looked on PATH and in /opt/swift/usr/bin)"
}

# The release build the packages ship: the Swift runtime linked in, and -z now (all symbols bound at
# start, so that RELRO covers the whole GOT: Debian's "bindnow" hardening).
PKG_SWIFT_BUILD=(swift build -c release --static-swift-stdlib -Xlinker -z -Xlinker now)

# Builds the release binary (incremental: a no-op when it is up to date) and prints its path.
# GPUENCODE_BIN=PATH uses that binary instead (it must be a --static-swift-stdlib build).
pkg_binary() {
  if [ -n "${GPUENCODE_BIN:-}" ]; then
    [ -x "$GPUENCODE_BIN" ] || pkg_die "GPUENCODE_BIN=$GPUENCODE_BIN is not an executable"
    printf '%s\n' "$GPUENCODE_BIN"
    return
  fi
  pkg_swift_path
  local bindir
  (cd "$PKG_ROOT" && "${PKG_SWIFT_BUILD[@]}" --product gpuencode >&2) \
    || pkg_die "${PKG_SWIFT_BUILD[*]} --product gpuencode failed"
  bindir=$(cd "$PKG_ROOT" && "${PKG_SWIFT_BUILD[@]}" --show-bin-path)
  [ -x "$bindir/gpuencode" ] || pkg_die "no gpuencode in $bindir after the build"
  if ldd "$bindir/gpuencode" | grep -q 'libswiftCore'; then
    pkg_die "$bindir/gpuencode links the Swift runtime dynamically (not a --static-swift-stdlib build)"
  fi
  printf '%s\n' "$bindir/gpuencode"
}

# A fixed date for what the packages hold (man pages, file times): the last commit's, unless
# SOURCE_DATE_EPOCH is set.
pkg_source_date_epoch() {
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    printf '%s\n' "$SOURCE_DATE_EPOCH"
  elif git -C "$PKG_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$PKG_ROOT" log -1 --format=%ct
  else
    date +%s
  fi
}

# Stops when the binary is not this VERSION's (a GPUENCODE_BIN from another checkout, say): its
# --version starts "gpuencode VERSION (commit ...", the number stamped from VERSION at build time.
pkg_check_binary_version() {
  local bin=$1 want got
  want=$(pkg_version)
  got=$("$bin" --version 2>/dev/null | head -n 1) || pkg_die "$bin --version failed"
  [[ "$got" == "gpuencode $want ("* ]] || pkg_die "'$bin --version' says '$got', but VERSION is $want: build this checkout"
}
