#!/usr/bin/env python3
"""Hostile-user pass over the gpuencode binary: a few hundred generated cases, each judged on the
contract every run keeps whatever it is given:

  * no crash    the process is never killed by a signal it did not handle (SIGSEGV, SIGILL traps...)
  * no hang     it ends within the guard time (a hang guard, not a timing)
  * no leftover nothing new in the watched folders but the output a successful run writes
  * untouched   sentinel files (planted link targets, the input, other outputs) keep their bytes
  * one line    a failure prints exactly one stderr line
  * exit code   the documented code for the category (a set of acceptable codes per case)

    python3 Tests/Hostile/hostile.py [--bin .build/debug/gpuencode] [--only CATEGORY] [-v]

Prints one line per failing case and a tally; exits 1 when any case breaks the contract. Fixtures are
made here with the ffmpeg CLI. Nothing is mocked: the real binary on real files.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DOCUMENTED = {0, 1, 64, 65, 66, 67, 69, 71, 73, 74, 80, 81}
GUARD = 40


class Case:
    def __init__(self, category, label, args, ok_codes, watch=(), sentinels=(), setup=None, cwd=None,
                 one_line=True, signal_after=None):
        self.category, self.label, self.args, self.ok_codes = category, label, args, set(ok_codes)
        self.watch, self.sentinels, self.setup, self.cwd = list(watch), list(sentinels), setup, cwd
        self.one_line, self.signal_after = one_line, signal_after


def sha(path):
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        return f'<{e.strerror}>'


def listing(folder):
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def ff(*args):
    subprocess.run(['ffmpeg', '-nostdin', '-v', 'error', '-y', *args], check=True)


class Runner:
    def __init__(self, binary, verbose):
        self.bin, self.verbose = binary, verbose
        self.tally = {'cases': 0, 'crashes': 0, 'hangs': 0, 'leftovers': 0, 'touched': 0, 'wrong codes': 0,
                      'multi-line errors': 0}
        self.failures = []

    def run(self, case):
        if case.setup:
            case.setup()
        before = {w: listing(w) for w in case.watch}
        sums = {s: sha(s) for s in case.sentinels}
        start = time.time()
        proc = subprocess.Popen([self.bin, *case.args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=case.cwd, start_new_session=True)
        if case.signal_after is not None:
            time.sleep(case.signal_after[0])
            if proc.poll() is None:
                os.kill(proc.pid, case.signal_after[1])
        try:
            out, err = proc.communicate(timeout=GUARD)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            hung = True
        seconds = time.time() - start
        rc = proc.returncode
        err_lines = [l for l in err.decode('utf-8', 'replace').splitlines() if l.strip()]
        problems = []
        self.tally['cases'] += 1
        if hung:
            problems.append('hang'); self.tally['hangs'] += 1
        elif rc < 0:
            problems.append(f'crash (signal {-rc})'); self.tally['crashes'] += 1
        else:
            if rc not in case.ok_codes:
                problems.append(f'exit {rc}, expected {sorted(case.ok_codes)}'); self.tally['wrong codes'] += 1
            if rc != 0 and case.one_line and len(err_lines) != 1 and rc < 128:
                problems.append(f'{len(err_lines)} stderr lines'); self.tally['multi-line errors'] += 1
        for w in case.watch:
            new = listing(w) - before[w]
            allowed = set()
            if rc == 0:
                allowed = {os.path.basename(a) for a in case.args if isinstance(a, str) and os.path.dirname(os.path.abspath(a)) == os.path.abspath(w)}
            if case.category == 'batch':
                # A batch keeps its resume state (and the lock that lets batches share it) by design.
                allowed |= {'.gpuencode-state.json', '.gpuencode-state.json.lock'}
            extra = {n for n in new if n not in allowed}
            if extra:
                problems.append(f'leftover in {w}: {sorted(extra)[:3]}'); self.tally['leftovers'] += 1
        for s, h in sums.items():
            if sha(s) != h:
                problems.append(f'touched {s}'); self.tally['touched'] += 1
        if problems:
            line = f'FAIL [{case.category}] {case.label}: {"; ".join(problems)} ({seconds:.1f} s) stderr: {" | ".join(err_lines[:3])[:300]}'
            self.failures.append(line)
            print(line, flush=True)
        elif self.verbose:
            print(f'ok   [{case.category}] {case.label}: exit {rc} ({seconds:.1f} s) {" | ".join(err_lines[:1])[:160]}', flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', default=os.environ.get('GPUENCODE_BIN', '.build/debug/gpuencode'))
    ap.add_argument('--only')
    ap.add_argument('-v', action='store_true')
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    root = tempfile.mkdtemp(prefix='gpuencode-hostile-')
    try:
        runner = Runner(binary, a.v)
        cases = build_cases(root)
        if a.only:
            cases = [c for c in cases if c.category == a.only]
        for c in cases:
            runner.run(c)
        t = runner.tally
        print(f"hostile: {t['cases']} cases: {t['crashes']} crashes, {t['hangs']} hangs, {t['leftovers']} leftovers, "
              f"{t['touched']} files touched, {t['wrong codes']} unexpected exit codes, {t['multi-line errors']} multi-line errors")
        print(f"{t['cases'] - len(runner.failures)} passed, {len(runner.failures)} failed")
        return 1 if runner.failures else 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build_cases(root):
    media = os.path.join(root, 'media'); os.makedirs(media)
    clip = os.path.join(media, 'in.mp4')
    ff('-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine', '-t', '1',
       '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', clip)
    out_dir = os.path.join(root, 'out'); os.makedirs(out_dir)
    victim = os.path.join(root, 'victim.txt')
    with open(victim, 'w') as f:
        f.write('an unrelated file that must never change\n')
    secret = os.path.join(root, 'secret', 'secret.cube'); os.makedirs(os.path.dirname(secret))
    with open(secret, 'w') as f:
        f.write('LUT_3D_SIZE 2\n' + '0 0 0\n' * 8)
    out = lambda name='o.mp4': os.path.join(out_dir, name)
    cases = []

    def clean_out():
        for n in os.listdir(out_dir):
            p = os.path.join(out_dir, n)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)

    def add(category, label, args, codes, **kw):
        kw.setdefault('watch', [out_dir])
        kw.setdefault('sentinels', [victim, clip])
        setup = kw.pop('setup', None)
        def full_setup(setup=setup):
            clean_out()
            if setup:
                setup()
        cases.append(Case(category, label, args, codes, setup=full_setup, **kw))

    fast = ['--x264-preset', 'ultrafast']

    # --- numbers on the command line: 0 or 64, never a trap
    bad_numbers = ['99999999999', '-1', '1e18', '1e308', 'inf', '-inf', 'nan', '', ' ', '0x10', '1e400', '9' * 40]
    # Every one of these values is out of range or not a number for every option: a usage error,
    # not a silent clamp (0 would hide a missing validator behind a clamped conversion).
    for opt in ['--keyint', '--crf', '--threads', '--bitrate', '--benchmark-filters']:
        for v in bad_numbers:
            # Two are valid: --crf 0x10 is 16 (ffmpeg's av_strtod reads hex for a float option too),
            # and --bitrate 99999999999 is just under the 100G cap.
            valid = (opt, v) in {('--crf', '0x10'), ('--bitrate', '99999999999')}
            add('numbers', f'{opt} {v!r}', [clip, out(), opt, v] + fast, {0, 64} if valid else {64})
    # Audio: --audio-bitrate takes --bitrate's forms (99999999999 is valid and clamped to what AAC
    # takes, with a warning); --audio-tracks positions are 1 to 9999.
    for v in bad_numbers:
        add('numbers', f'--audio-bitrate {v!r}', [clip, out(), '--audio', 'aac', '--audio-bitrate', v] + fast,
            {0, 64} if v == '99999999999' else {64})
        add('numbers', f'--audio-tracks {v!r}', [clip, out(), '--audio-tracks', v] + fast, {64})
    for v in ['=', '=x', 'x', 'k=' + 'v' * 100000, 'location=' + 'n' * 5000]:
        add('numbers', f'--metadata {v[:20]!r}', [clip, out('o.mkv'), '--metadata', v] + fast, {0, 64})
    for v in bad_numbers:
        add('numbers', f'preview --at {v!r}', ['preview', clip, '--at', v, '-o', out('p.png')], {0, 64})
        add('numbers', f'contact-sheet --at {v!r}', ['contact-sheet', clip, '--at', v, '-o', out('s.png')], {0, 64})
        add('numbers', f'batch --keyint {v!r}', ['batch', clip, '--out-dir', out_dir, '--keyint', v] + fast, {64})
    for opt in ['--split', '--split-angle']:
        for v in ['inf', 'nan', '1e308', '-1e308']:
            add('numbers', f'{opt} {v}', [clip, out(), '--preset', 'sepia', opt, v] + fast, {0, 64})

    # --- issue 14's controls: bad values are usage errors (64) or, for an inline chain, preset errors (67)
    trim_values = bad_numbers + ['-5', '00:00:-1', '1:2:3:4', '99:99:99', '1.5.5', '1e-400', '5ms5']
    for opt in ['--ss', '-t', '--to']:
        for v in trim_values:
            add('controls', f'{opt} {v!r}', [clip, out(), opt, v] + fast, {0, 64})
    add('controls', '--ss past the end', [clip, out(), '--ss', '5'] + fast, {64, 65, 66})
    add('controls', '-t and --to beyond', [clip, out(), '--ss', '0.5', '--to', '0.2'] + fast, {64})
    for opt in ['--width', '--height', '--max-width', '--max-height']:
        for v in bad_numbers + ['0', '1', '3', '16385', '100000']:
            add('controls', f'{opt} {v!r}', [clip, out(), opt, v] + fast, {0, 64})
    for v in ['0x0', 'x', '100x', 'x100', '-2x-2', '1e9x1e9', '99999x99999', '2x2', '100X100', '100x100x100', 'axb']:
        add('controls', f'--size {v!r}', [clip, out(), '--size', v] + fast, {0, 64})
    for v in bad_numbers + ['0', '0/0', '1/0', '30000/0', '-30', 'ntsc-film', '1000000']:
        add('controls', f'--fps {v!r}', [clip, out(), '--fps', v] + fast, {0, 64})
    for v in ['', ',', ',,,', ':', '=', 'sepia:', 'sepia:=', 'sepia:intensity=', 'sepia:intensity=nan',
              'sepia:intensity=1e400', 'nosuch', 'sepia,' * 5000 + 'sepia', "'" * 1001, '\\' * 1001,
              'sepia:intensity=' + '9' * 5000, 'lut3d:file=/etc/passwd', 'lut3d:file=../secret/secret.cube',
              'shader:file=/etc/passwd', 'video:file=/etc/passwd', 'sepia:intensity=0.5:intensity=0.6',
              'toneCurve:rgb=' + '[' * 10000, 'sépia', 'sepia:' + 'x' * 100000 + '=1']:
        add('controls', f'--filter {v[:24]!r}', [clip, out(), '--filter', v] + fast, {0, 64, 67})
    add('controls', '-progress to a planted link', [clip, out(), '-progress', os.path.join(out_dir, 'p.txt')] + fast,
        {73}, setup=lambda: os.symlink(victim, os.path.join(out_dir, 'p.txt')), watch=[])
    add('controls', '-progress onto the input', [clip, out(), '-progress', clip] + fast, {64, 73})
    # A dry run refuses what the run refuses, with the same code, and leaves nothing.
    add('controls', '--dry-run, -progress to a planted link', [clip, out(), '-progress', os.path.join(out_dir, 'p.txt'), '--dry-run'] + fast,
        {73}, setup=lambda: os.symlink(victim, os.path.join(out_dir, 'p.txt')), watch=[])
    add('controls', '--dry-run, output in /proc', [clip, '/proc/gpuencode-hostile.mp4', '--dry-run'] + fast, {73})
    # The largest output: 16384 a side, and 8912896 pixels (4096x2176) for a movie, 67108864 (8192x8192)
    # for a picture; past it, 64 before any frame (the clip is 4:3).
    for opt in [['--size', '16384x16384'], ['--width', '3600'], ['--height', '16384']]:
        add('controls', f'{" ".join(opt)} (past the largest movie)', [clip, out(), *opt] + fast, {64})
        add('controls', f'{" ".join(opt)} --dry-run', [clip, out(), *opt, '--dry-run'] + fast, {64})
    for opt in [['--size', '16384x16384'], ['--height', '16384']]:
        add('controls', f'picture out {" ".join(opt)}', [clip, out('p.png'), *opt], {64})
    # A picture output takes the size options and refuses what only a video has.
    add('controls', 'picture out --width 200', [clip, out('p.png'), '--width', '200'], {0})
    for opt in [['--crf', '20'], ['--fps', '30'], ['--codec', 'hevc'], ['--audio', 'aac'], ['-t', '1'], ['--hdr', 'keep']]:
        add('controls', f'picture out {" ".join(opt)}', [clip, out('p.png'), *opt], {64})

    # --- presets: 67 (or 0 for the valid ones), never a crash
    pdir = os.path.join(root, 'presets'); os.makedirs(pdir)
    counter = [0]

    def preset_case(label, text, codes={67}, extra=(), binary=False, name=None):
        counter[0] += 1
        path = os.path.join(pdir, name or f'p{counter[0]}.json')
        data = text if binary else text.encode('utf-8', 'surrogatepass')
        with open(path, 'wb') as f:
            f.write(data)
        add('presets', label, [clip, out(), '--preset', path, *extra] + fast, codes, sentinels=[victim, clip, secret])
        add('presets', 'validate: ' + label, ['validate', path, *extra], codes,
            sentinels=[victim, clip, secret])

    def sepia_in(depth):
        s = '{"filter":"sepia"}'
        inner = s
        for _ in range(depth):
            inner = '{"filter":"multiply","with":' + inner + '}'
        return inner

    preset_case('blend nested 1000 deep', '{"version":1,"name":"x","filters":[' + sepia_in(1000) + ']}')
    preset_case('30000 nested arrays', '[' * 30000 + ']' * 30000)
    preset_case('30000 nested objects', '{"a":' * 30000 + '1' + '}' * 30000)
    preset_case('trailing comma in array', '{"version":1,"name":"x","filters":[{"filter":"sepia"},]}')
    preset_case('trailing comma in object', '{"version":1,"name":"x","filters":[{"filter":"sepia",}]}')
    preset_case('raw control char in string', '{"version":1,"name":"x\x01","filters":[]}')
    preset_case('NUL in string', '{"version":1,"name":"x\x00","filters":[]}')
    preset_case('invalid UTF-8', b'{"version":1,"name":"\xff\xfe","filters":[]}', binary=True)
    preset_case('lone surrogate escape', '{"version":1,"name":"\\ud800","filters":[]}')
    preset_case('NaN literal', '{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":NaN}]}')
    preset_case('1e400', '{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":1e400}]}')
    preset_case('leading zero', '{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":01}]}')
    preset_case('comment', '{"version":1, // hi\n"name":"x","filters":[]}')
    preset_case('single quotes', "{'version':1}")
    preset_case('empty file', '')
    preset_case('just whitespace', '   \n')
    preset_case('100k unknown keys', '{' + ','.join(f'"k{i}":1' for i in range(100000)) + ',"version":1,"name":"x","filters":[]}', codes={0, 67})
    preset_case('100k duplicate keys', '{' + ','.join('"k":1' for _ in range(100000)) + '}')
    preset_case('int param 1e300', '{"version":1,"name":"x","filters":[{"filter":"pixellate","fractionalWidthOfAPixel":1e300}]}')
    preset_case('int param -1e300', '{"version":1,"name":"x","filters":[{"filter":"pixellate","fractionalWidthOfAPixel":-1e300}]}')
    preset_case('shader range 1e300', '{"version":1,"name":"x","filters":[{"filter":"shader","source":"varying highp vec2 textureCoordinate; uniform sampler2D inputImageTexture; uniform highp float p; void main() { gl_FragColor = texture2D(inputImageTexture, textureCoordinate) * p; }",'
                '"parameters":{"p":{"type":"float","default":0,"range":[-1e300,1e300]}}}]}', codes={0, 67})
    preset_case('keyframe time 1e308', '{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":{"keyframes":[[0,0],[1e308,1]]}}]}', codes={0, 67})
    preset_case('3000 smoothToon', '{"version":1,"name":"x","filters":[' + ','.join(['{"filter":"smoothToon"}'] * 3000) + ']}')
    preset_case('16 toneCurves', '{"version":1,"name":"x","filters":[' + ','.join(['{"filter":"toneCurve","rgb":[[0,0],[0.5,0.6],[1,1]]}'] * 16) + ']}', codes={0})
    preset_case('100-filter chain', '{"version":1,"name":"x","filters":[' + ','.join(['{"filter":"brightness","brightness":0.001}'] * 100) + ']}', codes={0, 67})
    # references outside the preset's folder
    preset_case('cube ../ escape', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"../secret/secret.cube"}]}')
    preset_case('cube absolute outside', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"%s"}]}' % secret)
    os.symlink(secret, os.path.join(pdir, 'link.cube'))
    preset_case('cube via symlink out', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"link.cube"}]}')
    preset_case('cube allowed with --allow-path', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"%s"}]}' % secret,
                codes={0}, extra=('--allow-path', os.path.dirname(secret)))
    preset_case('extends ../ escape', '{"version":1,"name":"x","extends":"../secret/x.json","filters":[]}')
    preset_case('extends /etc/passwd', '{"version":1,"name":"x","extends":"/etc/passwd","filters":[]}')
    preset_case('shader file /etc/passwd', '{"version":1,"name":"x","filters":[{"filter":"shader","file":"/etc/passwd"}]}')
    preset_case('lookup image /dev/zero', '{"version":1,"name":"x","filters":[{"filter":"lookup","image":"/dev/zero"}]}')
    preset_case('video /etc/passwd', '{"version":1,"name":"x","filters":[{"filter":"video","file":"/etc/passwd"}]}')
    fifo = os.path.join(pdir, 'fifo.cube'); os.mkfifo(fifo)
    preset_case('cube is a FIFO', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"fifo.cube"}]}')
    os.mkdir(os.path.join(pdir, 'dir.cube'))
    preset_case('cube is a folder', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"dir.cube"}]}')
    # Every file a preset names is refused at once when it is a FIFO: the video overlay went to
    # FFmpeg by path and blocked forever (validate and preview too).
    for name, filt in [('fifo.mp4', '{"filter":"video","file":"fifo.mp4"}'), ('fifo.png', '{"filter":"lookup","image":"fifo.png"}'),
                       ('fifo2.png', '{"filter":"image","file":"fifo2.png"}'), ('fifo.acv', '{"filter":"toneCurve","acv":"fifo.acv"}'),
                       ('fifo.frag', '{"filter":"shader","file":"fifo.frag"}'), ('fifo.json', None)]:
        os.mkfifo(os.path.join(pdir, name))
        text = '{"version":1,"name":"x","extends":"./fifo.json","filters":[]}' if filt is None else '{"version":1,"name":"x","filters":[%s]}' % filt
        preset_case(f'{name} is a FIFO', text)
        path = os.path.join(pdir, f'p{counter[0]}.json')
        add('presets', f'preview: {name} is a FIFO', ['preview', clip, '--preset', path, '-o', out('p.png')], {67},
            sentinels=[victim, clip, secret])
    for n, path in [('FIFO', os.path.join(pdir, 'fifo.json')), ('folder', pdir)]:
        add('presets', f'studio --preset is a {n}', ['studio', clip, '--preset', path], {67})
    # Custom shaders whose compile would take minutes and gigabytes: refused by reading them.
    sample = 'gl_FragColor = texture2D(inputImageTexture, textureCoordinate)'
    for label, src in [('million-element local array', 'void main() { float a[1000000]; a[0] = 1.0; %s * a[0]; }' % sample),
                       ('array sized by a const', 'const int N = 1 << 20;\nvoid main() { vec4 a[N]; %s; }' % sample),
                       ('macro bomb', '\n'.join('#define M%d M%d M%d' % (i, i - 1, i - 1) for i in range(1, 31)) + '\n#define M0 1.0+\nvoid main() { float x = M30 1.0; %s * x; }' % sample),
                       ('inlining bomb', 'float f0(float x) { return x; }\n' + '\n'.join('float f%d(float x) { return f%d(x) + f%d(x); }' % (i, i - 1, i - 1) for i in range(1, 31)) + '\nvoid main() { %s * f30(1.0); }' % sample)]:
        preset_case(f'shader: {label}', json.dumps({'version': 1, 'name': 'x', 'filters': [{'filter': 'shader', 'source': src}]}))
    big = os.path.join(pdir, 'sparse.cube')
    with open(big, 'wb') as f:
        f.write(b'LUT_3D_SIZE 1024\n'); f.truncate(1 << 30)
    preset_case('sparse 1 GB cube claiming 1024', '{"version":1,"name":"x","filters":[{"filter":"lut3d","file":"sparse.cube"}]}')
    for n, path in [('FIFO', fifo), ('/dev/zero', '/dev/zero'), ('folder', pdir)]:
        add('presets', f'preset itself is {n}', [clip, out(), '--preset', path] + fast, {67, 66})
        add('presets', f'validate preset itself {n}', ['validate', path], {67, 66})
    rng = random.Random(7)
    base = open(os.path.join(os.path.dirname(__file__), '..', '..', 'presets', 'sepia.json'), 'rb').read() \
        if os.path.exists(os.path.join(os.path.dirname(__file__), '..', '..', 'presets', 'sepia.json')) else b'{"version":1,"name":"x","filters":[]}'
    for i in range(40):
        b = bytearray(base)
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            k = rng.randrange(len(b)) if b else 0
            if op < 0.4 and b:
                b[k] = rng.randrange(256)
            elif op < 0.7:
                b.insert(k, rng.choice(b'{}[]",:\\0123456789e-+.tfn \x00\x7f\xc3'))
            elif b:
                del b[k]
        preset_case(f'mutated preset #{i}', bytes(b), codes={0, 67}, binary=True)

    # --- inputs that are not files or not media
    txt = os.path.join(media, 'notes.txt')
    with open(txt, 'w') as f:
        f.write('just text\n' * 100)
    html = os.path.join(media, 'page.html')
    with open(html, 'w') as f:
        f.write('<html><body>hi</body></html>\n')
    concat_name = os.path.join(media, 'concat:in.mp4|in.mp4')
    shutil.copy(clip, concat_name)
    for label, path, codes in [('text file', txt, {66}), ('html', html, {66}), ('/dev/zero', '/dev/zero', {66}),
                               ('/dev/null', '/dev/null', {66}), ('folder', media, {66}), ('missing', os.path.join(media, 'nope.mp4'), {66}),
                               ('http URL', 'http://127.0.0.1:9/x.mp4', {66}), ('concat: URL', 'concat:%s|%s' % (clip, clip), {66}),
                               ('file literally named concat:...', concat_name, {0, 66}), ('pipe:0', 'pipe:0', {66}),
                               ('subfile URL', 'subfile,,start,0,end,100,,:' + clip, {66})]:
        add('inputs', label, [path, out()] + fast, codes)
        add('inputs', 'preview ' + label, ['preview', path, '-o', out('p.png')], codes | ({65} if codes != {0, 66} else set()))
    # --- writing
    add('writing', 'output exists, no -y', [clip, victim] + fast, {73}, watch=[root])
    add('writing', 'output name 255 bytes', [clip, out('a' * 251 + '.mp4')] + fast, {0})
    add('writing', 'output name 256 bytes', [clip, out('a' * 252 + '.mp4')] + fast, {73, 64})
    add('writing', 'output in /proc', [clip, '/proc/gpuencode-hostile.mp4'] + fast, {73})
    add('writing', 'output dir is a file', [clip, os.path.join(victim, 'o.mp4')] + fast, {73})
    add('writing', 'output is the input', [clip, clip, '-y'] + fast, {64}, watch=[media])
    add('writing', 'unknown extension', [clip, out('o.xyz')] + fast, {64})
    add('writing', 'output name not UTF-8', [clip, os.fsdecode(os.path.join(out_dir, 'bad').encode() + b'\xff.mp4')] + fast, {64})
    add('inputs', 'input name not UTF-8', [os.fsdecode(clip.encode()[:-4] + b'\xfe.mp4'), out()] + fast, {64, 66})
    for pid in [1, os.getpid(), 99999]:
        for name in [f'.o.mp4.{pid}.partial']:
            def plant(name=name):
                os.symlink(victim, os.path.join(out_dir, name))
            add('writing', f'planted link {name}', [clip, out()] + fast, {0}, setup=plant, watch=[])
    def plant_output_link():
        os.symlink(victim, out())
    add('writing', 'output is a planted link, no -y', [clip, out()] + fast, {73}, setup=plant_output_link, watch=[])
    add('writing', 'output is a planted link, -y', [clip, out(), '-y'] + fast, {0}, setup=plant_output_link, watch=[])
    add('writing', 'picture out over planted link', [clip, out('x.png'), '-y'], {0}, setup=lambda: os.symlink(victim, out('x.png')), watch=[])
    for sig, code in [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]:
        long_clip = os.path.join(media, 'long.mp4')
        if not os.path.exists(long_clip):
            ff('-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30', '-t', '30', '-c:v', 'libx264', '-preset', 'ultrafast', long_clip)
        add('writing', f'signal {sig.name} mid-run', [long_clip, out(), '--x264-preset', 'veryslow'], {code}, signal_after=(1.5, sig))
    # --- batch
    add('batch', 'name escapes out-dir', ['batch', clip, '--out-dir', out_dir, '--name', '../x-{stem}.mp4'] + fast, {64}, watch=[out_dir, root])
    add('batch', 'absolute name', ['batch', clip, '--out-dir', out_dir, '--name', '/tmp/x-{stem}.mp4'] + fast, {64})
    bad_state = os.path.join(root, 'state-bad.json')
    with open(bad_state, 'w') as f:
        json.dump({'formatVersion': 99, 'jobs': {}}, f)
    add('batch', 'state formatVersion 99', ['batch', clip, '--out-dir', out_dir, '--state', bad_state] + fast, {64, 66, 67}, sentinels=[victim, clip, bad_state])
    add('batch', 'state is /dev/zero', ['batch', clip, '--out-dir', out_dir, '--state', '/dev/zero'] + fast, {64, 66, 73})
    mfifo = os.path.join(root, 'manifest.csv'); os.mkfifo(mfifo)
    add('batch', 'manifest is a FIFO', ['batch', '--manifest', mfifo, '--out-dir', out_dir] + fast, {64, 66})
    add('batch', 'input is a FIFO', ['batch', fifo, '--out-dir', out_dir] + fast, {80}, one_line=False)
    add('batch', 'input is /dev/zero', ['batch', '/dev/zero', '--out-dir', out_dir] + fast, {80}, one_line=False)
    return cases


if __name__ == '__main__':
    sys.exit(main())
