#!/usr/bin/env python3
"""bundle-libs.py --policy FILE --lib-dir DIR [--manifest FILE] BINARY

Makes BINARY relocatable with the shared libraries it needs, for the portable tarball:
copies the closure of BINARY's DT_NEEDED libraries (as resolved on this machine) into DIR,
except what --policy says (packaging/tarball-libs.txt describes the three cases):
  host    left out: the host's copy is used;
  stub    replaced by a stand-in with the same symbols and versions and no code, under a
          private SONAME, and the parents' DT_NEEDED (and version needs) renamed to it;
  detach  left out and removed from the parents' DT_NEEDED, their references made weak.
Then RUNPATH: $ORIGIN/../lib on BINARY (edited in place), $ORIGIN on each library in DIR.
Prints what it did, and the highest symbol versions the shipped files need from the host.
Needs: patchelf, cc (for the stubs), ldd.
"""
import argparse
import fnmatch
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

STUB_PREFIX = "libgpuencode-stub-"


# ---------------------------------------------------------------- a small ELF64 (x86-64) reader

class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = bytearray(f.read())
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise SystemExit(f"bundle-libs: error: {path} is not a 64-bit little-endian ELF file")
        (self.e_shoff,) = struct.unpack_from("<Q", d, 0x28)
        self.e_shentsize, self.e_shnum, self.e_shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        self.sections = []
        for i in range(self.e_shnum):
            off = self.e_shoff + i * self.e_shentsize
            name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", d, off)
            self.sections.append(dict(name=name, type=typ, offset=offset, size=size, link=link,
                                      info=info, entsize=entsize, addr=addr))
        self.dynsym = self._section_of_type(11)          # SHT_DYNSYM
        self.versym = self._section_of_type(0x6FFFFFFF)  # SHT_GNU_versym
        self.verdef = self._section_of_type(0x6FFFFFFD)  # SHT_GNU_verdef
        self.verneed = self._section_of_type(0x6FFFFFFE) # SHT_GNU_verneed
        self.dynamic = self._section_of_type(6)          # SHT_DYNAMIC

    def _section_of_type(self, typ):
        for s in self.sections:
            if s["type"] == typ:
                return s
        return None

    def _str(self, strtab, off):
        start = self.sections[strtab]["offset"] + off
        end = self.data.index(b"\0", start)
        return self.data[start:end].decode("utf-8", "replace")

    def dyn_entries(self):
        out = []
        if not self.dynamic:
            return out
        s = self.dynamic
        for i in range(s["size"] // 16):
            tag, val = struct.unpack_from("<qQ", self.data, s["offset"] + 16 * i)
            if tag == 0:
                break
            out.append((tag, val))
        return out

    def needed(self):
        return [self._str(self.dynamic["link"], v) for t, v in self.dyn_entries() if t == 1]

    def soname(self):
        for t, v in self.dyn_entries():
            if t == 14:
                return self._str(self.dynamic["link"], v)
        return None

    def version_defs(self):
        """{index: (name, is_base)} from .gnu.version_d."""
        out = {}
        s = self.verdef
        if not s:
            return out
        off = s["offset"]
        while True:
            vd_version, vd_flags, vd_ndx, vd_cnt, vd_hash, vd_aux, vd_next = struct.unpack_from(
                "<HHHHIII", self.data, off)
            (vda_name,) = struct.unpack_from("<I", self.data, off + vd_aux)
            out[vd_ndx] = (self._str(s["link"], vda_name), bool(vd_flags & 1))
            if not vd_next:
                break
            off += vd_next
        return out

    def version_needs(self):
        """[(file, [(version name, index)])] from .gnu.version_r."""
        out = []
        s = self.verneed
        if not s:
            return out
        off = s["offset"]
        while True:
            vn_version, vn_cnt, vn_file, vn_aux, vn_next = struct.unpack_from("<HHIII", self.data, off)
            names = []
            aoff = off + vn_aux
            for _ in range(vn_cnt):
                vna_hash, vna_flags, vna_other, vna_name, vna_next = struct.unpack_from(
                    "<IHHII", self.data, aoff)
                names.append((self._str(s["link"], vna_name), vna_other))
                if not vna_next:
                    break
                aoff += vna_next
            out.append((self._str(s["link"], vn_file), names))
            if not vn_next:
                break
            off += vn_next
        return out

    def symbols(self):
        """Dynamic symbols: dicts with index, name, bind, type, shndx, size, versym."""
        s = self.dynsym
        out = []
        if not s:
            return out
        for i in range(1, s["size"] // 24):
            off = s["offset"] + 24 * i
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", self.data, off)
            vs = None
            if self.versym:
                (vs,) = struct.unpack_from("<H", self.data, self.versym["offset"] + 2 * i)
            out.append(dict(index=i, offset=off, name=self._str(s["link"], st_name), bind=st_info >> 4,
                            type=st_info & 0xF, shndx=st_shndx, size=st_size, versym=vs))
        return out

    def exports(self):
        return {x["name"] for x in self.symbols() if x["shndx"] != 0 and x["bind"] in (1, 2, 10)}

    def save(self, path=None):
        with open(path or self.path, "wb") as f:
            f.write(self.data)


# ---------------------------------------------------------------- policy, closure

def read_policy(path):
    rules = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("host", "stub", "detach"):
            sys.exit(f"bundle-libs: error: {path}:{n}: expected 'host|stub|detach SONAME', got {line!r}")
        rules.append((parts[0], parts[1]))
    return rules


def classify(rules, soname):
    for how, pattern in rules:
        if fnmatch.fnmatchcase(soname, pattern):
            return how
    return "real"


def resolve_paths(binary):
    """SONAME -> path on this machine, from ldd (the whole closure) and ldconfig's cache."""
    where = {}
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 3 and p[1] == "=>" and p[2].startswith("/"):
            where.setdefault(p[0], p[2])
        elif "not found" in line:
            sys.exit(f"bundle-libs: error: {binary}: {line.strip()}")
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s+(\S+) \(libc6,x86-64[^)]*\) => (\S+)", line)
        if m:
            where.setdefault(m.group(1), m.group(2))
    return where


# ---------------------------------------------------------------- stubs

def make_stub(real_path, out_path, soname):
    elf = Elf(real_path)
    vdefs = elf.version_defs()
    versions = [name for idx, (name, base) in sorted(vdefs.items()) if not base]
    asm = []
    nodes = {v: [] for v in versions}
    unversioned = []
    seen = set()
    k = 0
    for sym in elf.symbols():
        # Undefined and absolute ones (the version names a linker script defines) are left out.
        if sym["shndx"] in (0, 0xFFF1) or sym["bind"] not in (1, 2, 10):
            continue
        name = sym["name"]
        if name in ("_init", "_fini", "_edata", "_end", "__bss_start") or not name:
            continue
        ver, default = None, True
        if sym["versym"] is not None and (sym["versym"] & 0x7FFF) > 1:
            vname, base = vdefs.get(sym["versym"] & 0x7FFF, (None, True))
            if vname and not base:
                ver, default = vname, not (sym["versym"] & 0x8000)
        key = (name, ver, default)
        if key in seen:
            continue
        seen.add(key)
        k += 1
        label = f"__gpuencode_stub_{k}"
        size = max(sym["size"], 1)
        if sym["type"] in (2, 10, 0):  # FUNC, IFUNC, NOTYPE
            asm += ["\t.text", f"{label}:", "\txorl %eax, %eax", "\tret"]
            stype, size = "@function", 4
        elif sym["type"] == 6:  # TLS
            asm += ['\t.section .tbss,"awT",@nobits', "\t.balign 16", f"{label}:", f"\t.zero {size}"]
            stype = "@tls_object"
        else:
            asm += ["\t.bss", "\t.balign 16", f"{label}:", f"\t.zero {size}"]
            stype = "@object"
        if default:
            asm += [f'\t.globl "{name}"']
            if sym["bind"] == 2:
                asm += [f'\t.weak "{name}"']
            asm += [f'\t.type "{name}", {stype}', f'\t.size "{name}", {size}', f'\t.set "{name}", {label}']
            (nodes.setdefault(ver, []) if ver else unversioned).append(name)
        else:
            asm += [f"\t.globl {label}", f"\t.type {label}, {stype}", f"\t.size {label}, {size}",
                    f'\t.symver {label}, "{name}@{ver}"']
            nodes.setdefault(ver, [])
    asm.append('\t.section .note.GNU-stack,"",@progbits')
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "stub.s")
        with open(src, "w") as f:
            f.write("\n".join(asm) + "\n")
        cmd = [os.environ.get("CC", "cc"), "-shared", "-nostdlib", "-o", out_path, src,
               f"-Wl,-soname,{soname}", "-Wl,--no-undefined", "-Wl,-z,noexecstack", "-Wl,--hash-style=both"]
        order = versions + [v for v in nodes if v not in versions]
        if order:
            # Unversioned symbols of a versioned library go in its first version node.
            if unversioned:
                nodes[order[0]] = nodes.get(order[0], []) + unversioned
            script = os.path.join(d, "stub.map")
            with open(script, "w") as f:
                for v in order:
                    names = nodes.get(v, [])
                    body = ("  global:\n" + "".join(f'    "{n}";\n' for n in names)) if names else ""
                    f.write(f"{v} {{\n{body}  local: *;\n}};\n" if names else f"{v} {{ local: *; }};\n")
            cmd.append(f"-Wl,--version-script={script}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            sys.exit(f"bundle-libs: error: building the stub for {real_path} failed")
    return len(seen)


# ---------------------------------------------------------------- detaching

def weaken(path, symbols):
    """Makes the undefined dynamic symbols of PATH that are in SYMBOLS weak; returns how many."""
    elf = Elf(path)
    n = 0
    for sym in elf.symbols():
        if sym["shndx"] == 0 and sym["bind"] == 1 and sym["name"] in symbols:
            elf.data[sym["offset"] + 4] = (2 << 4) | sym["type"]
            n += 1
    elf.save()
    return n


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bundle-libs: error: {' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def version_key(v):
    return tuple(int(x) for x in re.findall(r"\d+", v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--manifest")
    ap.add_argument("binary")
    a = ap.parse_args()

    rules = read_policy(a.policy)
    where = resolve_paths(a.binary)
    os.makedirs(a.lib_dir, exist_ok=True)

    how = {}          # soname -> host|stub|detach|real
    parents = {}      # soname -> set of parents (binary or sonames) that need it
    todo = [("<binary>", so) for so in Elf(a.binary).needed()]
    while todo:
        parent, so = todo.pop(0)
        parents.setdefault(so, set()).add(parent)
        if so in how:
            continue
        how[so] = classify(rules, so)
        if how[so] in ("host", "detach", "stub"):
            if how[so] != "host" and so not in where:
                sys.exit(f"bundle-libs: error: cannot find {so} on this machine")
            continue
        if so not in where:
            sys.exit(f"bundle-libs: error: cannot find {so} (needed by {parent}) on this machine")
        real = os.path.realpath(where[so])
        shutil.copy2(real, os.path.join(a.lib_dir, so))
        os.chmod(os.path.join(a.lib_dir, so), 0o644)
        todo += [(so, dep) for dep in Elf(real).needed()]

    def path_of(parent):
        return a.binary if parent == "<binary>" else os.path.join(a.lib_dir, parent)

    # Detach first: weakening edits the files in place, before patchelf moves their sections.
    for so in sorted(s for s, h in how.items() if h == "detach"):
        lib = Elf(os.path.realpath(where[so]))
        if any(not base for _, (_, base) in lib.version_defs().items()):
            sys.exit(f"bundle-libs: error: {so} has symbol versions; it cannot be detached (stub it)")
        exports = lib.exports()
        for parent in sorted(parents[so]):
            if parent == "<binary>":
                sys.exit(f"bundle-libs: error: the binary itself needs {so}; it cannot be detached")
            if how.get(parent) != "real":
                continue
            n = weaken(path_of(parent), exports)
            run("patchelf", "--remove-needed", so, path_of(parent))
            print(f"detach {so}: {parent} no longer needs it ({n} references made weak)")

    for so in sorted(s for s, h in how.items() if h == "stub"):
        private = STUB_PREFIX + so
        n = make_stub(os.path.realpath(where[so]), os.path.join(a.lib_dir, private), private)
        users = sorted(p for p in parents[so] if p == "<binary>" or how.get(p) == "real")
        for parent in users:
            run("patchelf", "--replace-needed", so, private, path_of(parent))
        print(f"stub {so}: {n} symbols, as {private}, for {', '.join(users)}")

    for so in sorted(s for s, h in how.items() if h == "real"):
        run("patchelf", "--set-rpath", "$ORIGIN", os.path.join(a.lib_dir, so))
    run("patchelf", "--set-rpath", "$ORIGIN/../lib", a.binary)

    # What the shipped files need from the host: glibc's and the C++ runtime's symbol versions.
    shipped = [a.binary] + [os.path.join(a.lib_dir, f) for f in sorted(os.listdir(a.lib_dir))]
    from_host = {s for s, h in how.items() if h == "host"}
    highest = {}
    for f in shipped:
        for file, names in Elf(f).version_needs():
            if file not in from_host:
                continue
            for name, _ in names:
                m = re.match(r"([A-Z_]+?)_?(\d[\d.]*)$", name)
                if not m:
                    continue
                family = m.group(1)
                if family not in highest or version_key(m.group(2)) > version_key(highest[family][0]):
                    highest[family] = (m.group(2), os.path.basename(f), file)
    counts = {h: sum(1 for v in how.values() if v == h) for h in ("real", "stub", "detach", "host")}
    print(f"bundle-libs: {counts['real']} libraries copied, {counts['stub']} stubs, {counts['detach']} detached, "
          f"{counts['host']} from the host")
    print("bundle-libs: from the host: " + " ".join(sorted(s for s, h in how.items() if h == "host")))
    for family in sorted(highest):
        v, f, lib = highest[family]
        print(f"bundle-libs: highest {family}_{v} (needed by {f} from {lib})")
    if a.manifest:
        with open(a.manifest, "w") as out:
            for so in sorted(how):
                source = os.path.realpath(where[so]) if so in where and how[so] in ("real", "stub") else ""
                out.write(f"{so} {how[so]} {source}".rstrip() + "\n")
            for family in sorted(highest):
                v, f, lib = highest[family]
                out.write(f"# highest {family}_{v} needed by {f} from {lib}\n")


if __name__ == "__main__":
    main()
