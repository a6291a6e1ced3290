#!/usr/bin/env python3
"""Compares the NVIDIA renders of Tests/Device/look-parity.sh with the same renders here on llvmpipe.
    python3 Tests/Device/look-parity.py --bin .build/release/gpuencode --nvidia looks-nvidia-*.tar --clips DIR
Prints, per look and clip: PSNR, the share of pixels that differ by more than 2 code values and the largest difference.
Exits 1 when a threshold-deciding filter (FILTERS, and the toon look) decides differently on more than one pixel
in 10,000 (a flip is a jump of a posterize level or an outline, 25 to 255 code values). The decisions are exact
(ExactDecisions.swift) and so are the 8-bit intermediates they read (ChainPlan.store); what is left comes from the
source conversion's own one-code differences (a few pixels of a frame, the identity look's max 1)."""
import argparse, math, os, subprocess, sys, tarfile, tempfile
import numpy as np

def rgb(path):
    p = subprocess.run(['ffprobe','-v','error','-select_streams','v','-show_entries','stream=width,height','-of','csv=p=0',path],capture_output=True,text=True,check=True)
    w,h = map(int,p.stdout.strip().split(','))
    raw = subprocess.run(['ffmpeg','-v','error','-i',path,'-f','rawvideo','-pix_fmt','rgb24','-'],capture_output=True,check=True).stdout
    return np.frombuffer(raw,np.uint8).reshape(h,w,3).astype(np.int32)

ap = argparse.ArgumentParser()
ap.add_argument('--bin', required=True); ap.add_argument('--nvidia', required=True, nargs='+'); ap.add_argument('--clips', required=True)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
env = {}
for line in open(os.path.join(here,'look-parity.list')):
    k,v = line.strip().split('=',1); env[k] = v.strip('()').split()
W = tempfile.mkdtemp()
for t in a.nvidia: tarfile.open(t).extractall(W)
worst = 0
for clip in sorted(f for f in os.listdir(a.clips) if f.endswith('.mp4')):
    c = clip[:-4]
    jobs = [(l, ['--preset', l]) for l in env['LOOKS']] + [('filter%d' % i, ['--preset','identity','--filter',f]) for i,f in enumerate(env['FILTERS'])]
    for name, args in jobs:
        nv = os.path.join(W, f'{c}--{name}.png')
        sw = os.path.join(W, f'{c}--{name}-llvmpipe.png')
        subprocess.run([a.bin,'preview',os.path.join(a.clips,clip),*args,'--at','0.5','-o',sw,'--gpu','software'],check=True,capture_output=True)
        x, y = rgb(nv), rgb(sw)
        d = np.abs(x-y); mse = float((d**2).mean())
        psnr = 99.0 if mse == 0 else 10*math.log10(255**2/mse)
        label = name if not name.startswith('filter') else env['FILTERS'][int(name[6:])]
        share = float((d.max(axis=2) > 2).mean())*100
        print(f'{c:40s} {label:20s} {psnr:6.1f} dB  >2 codes {share:6.3f}%  max {int(d.max()):3d}')
        if (name.startswith('filter') or name == 'toon') and share > 0.01:
            print(f'FAIL {c} {label}: {share:.3f}% of the pixels decided differently')
            worst += 1
sys.exit(1 if worst else 0)
