#!/usr/bin/env python3
"""Accuracy (not a test): O(1)-per-pixel approximations of the sigma-8 Gaussian against the exact one.

    python3 bench/blur-o1-accuracy.py [--sigma 8] [--frame FRAME.rgb WxH]

Issue 15 asks whether running-sum boxes or a recursive Gaussian could replace the reduced pyramid
of `gaussianBlur` on software GL. Each candidate runs along rows then columns (2-D), clamp-to-edge
borders, in float64 (and float32 for the recursive ones, as a GLSL shader would), on 8-bit
pictures; the table gives max |candidate - exact| in code values before and after rounding to
8 bits. "Exact" is the project's oracle (BlurVideoTests): the sampled Gaussian, radius 3 sigma,
normalised, clamp-to-edge; "untruncated" uses radius 8 sigma. Needs numpy only; the real frame
is optional (ffmpeg -ss 5 -i CLIP -frames:v 1 -f rawvideo -pix_fmt rgb24 FRAME.rgb).
"""
import argparse, sys
import numpy as np


def gaussian_kernel(sigma, r):
    k = np.exp(-np.arange(-r, r + 1) ** 2 / (2 * sigma * sigma))
    return k / k.sum()


def fir(a, k, axis):
    """Convolution along `axis` with the odd, symmetric kernel k, clamp-to-edge."""
    r = len(k) // 2
    a = np.moveaxis(a, axis, -1)
    n = a.shape[-1]
    pad = [(0, 0)] * (a.ndim - 1) + [(r, r)]
    p = np.pad(a, pad, mode='edge')
    o = np.zeros_like(a)
    for i in range(2 * r + 1):
        o += k[i] * p[..., i:i + n]
    return np.moveaxis(o, -1, axis)


def separable(a, line):
    """`line` applied to every row, then every column."""
    return line(line(a, 1), 0)


# Boxes ------------------------------------------------------------------------------------------

def with_margin(line, margin):
    """`line` on the picture extended by `margin` edge pixels each side, cropped back: a cascade
    of FIR passes is clamp-to-edge only if the source is extended once (each pass clamping its own
    input again is a different, wrong filter near the borders); a GPU version keeps the margin in
    its intermediate pictures."""
    def run(a, axis):
        a = np.moveaxis(a, axis, -1)
        n = a.shape[-1]
        p = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(margin, margin)], mode='edge')
        return np.moveaxis(line(p, -1)[..., margin:margin + n], -1, axis)
    return run


def boxes(widths):
    return with_margin(boxes_clamped_each(widths), sum(widths))


def boxes_clamped_each(widths):
    def run(a, axis):
        for i, w in enumerate(widths):
            k = np.ones(w) / w
            if w % 2 == 0:
                # even width: alternate the half-pixel offset so the cascade stays centred
                k = np.concatenate([k, [0.0]]) if i % 2 == 0 else np.concatenate([[0.0], k])
            a = fir(a, k, axis)
        return a
    return run


def extended_box(sigma, passes):
    """Gwosdek, Grewenig, Bruhn, Weickert (2011): a box of 2r + 1 taps plus fractional end taps
    alpha at +-(r + 1), so that `passes` of it have exactly the variance sigma^2."""
    v = sigma * sigma / passes
    r = int(np.floor(0.5 * np.sqrt(12 * v + 1) - 0.5))
    # variance of the kernel: (r(r+1)(2r+1)/3 + 2 alpha (r+1)^2) / (2r + 1 + 2 alpha) = v
    alpha = (2 * r + 1) * (v - r * (r + 1) / 3) / (2 * ((r + 1) ** 2 - v))
    k = np.concatenate([[alpha], np.ones(2 * r + 1), [alpha]])
    k /= k.sum()
    var = (k * np.arange(-r - 1, r + 2) ** 2).sum()
    assert abs(var - v) < 1e-9, (var, v)

    def run(a, axis):
        for _ in range(passes):
            a = fir(a, k, axis)
        return a
    return with_margin(run, passes * (r + 2)), r, alpha


# Recursive Gaussians (cascade: causal then anticausal all-pole filters) ----------------------

def poles_yvv1995(sigma):
    """Young & van Vliet (1995) order 3, as coefficients b0..b3 (their q formula)."""
    q = 0.98711 * sigma - 0.96330 if sigma >= 2.5 else 3.97156 - 4.14554 * np.sqrt(1 - 0.26891 * sigma)
    b0 = 1.57825 + 2.44413 * q + 1.4281 * q * q + 0.422205 * q ** 3
    b1 = 2.44413 * q + 2.85619 * q * q + 1.26661 * q ** 3
    b2 = -(1.4281 * q * q + 1.26661 * q ** 3)
    b3 = 0.422205 * q ** 3
    # w[n] = B x[n] + (b1 w[n-1] + b2 w[n-2] + b3 w[n-3]) / b0 ; as a[k] with w[n] = g x - sum a_k w[n-k]
    a = np.array([-b1 / b0, -b2 / b0, -b3 / b0])
    return a


# van Vliet, Young & Verbeek (1998), poles for sigma 2 (d_i > 1; pole of the causal filter at 1/d_i)
VVYV_POLES = {
    (3, 'L2'): [1.41650 + 1.00829j, 1.41650 - 1.00829j, 1.86543],
    (3, 'Linf'): [1.40098 + 1.00236j, 1.40098 - 1.00236j, 1.85132],
    (4, 'L2'): [1.13228 + 1.28114j, 1.13228 - 1.28114j, 1.78534 + 0.46763j, 1.78534 - 0.46763j],
    (4, 'Linf'): [1.12075 + 1.27788j, 1.12075 - 1.27788j, 1.76952 + 0.46611j, 1.76952 - 0.46611j],
}


def cascade_variance(a):
    """Variance of causal(a) * anticausal(a), from the impulse response (long enough to vanish)."""
    n = 2000
    x = np.zeros(n); x[n // 2] = 1
    y = iir_cascade_line(x[None, :], a, exact_tail=False)[0]
    i = np.arange(n) - n // 2
    return (y * i * i).sum() / y.sum(), y.sum()


def a_from_poles(d):
    p = np.poly([1 / z for z in d])  # 1 + a1 z^-1 + ... with roots at 1/d
    return np.real(p[1:])


def poles_vvyv(sigma, order, norm):
    d0 = np.array(VVYV_POLES[(order, norm)])
    lo, hi = 0.2, 20.0
    for _ in range(40):  # variance grows with q
        q = 0.5 * (lo + hi)
        d = np.abs(d0) ** (1 / q) * np.exp(1j * np.angle(d0) / q)
        v, _ = cascade_variance(a_from_poles(d))
        lo, hi = (q, hi) if v < sigma * sigma else (lo, q)
    return a_from_poles(d), q


def backward_init_matrix(a):
    """Triggs & Sdika (2006) for clamp-to-edge, computed numerically: the anticausal filter's K
    states past the end, y[N..N+K-1] - u = M (w[N-1], w[N-2], ..., w[N-K]) - u), where u is the
    edge value repeated past the end."""
    K = len(a)
    L = 3000
    g = 1 + a.sum()
    M = np.zeros((K, K))
    for j in range(K):
        w = np.zeros(K + L)          # w[0..K-1] = states at N-K..N-1, then the tail N.. with input 0
        w[K - 1 - j] = 1.0
        for n in range(K, K + L):
            w[n] = -sum(a[k] * w[n - 1 - k] for k in range(K))
        y = np.zeros(K + L + K)
        for n in range(K + L - 1, K - 1, -1):
            y[n] = g * w[n] - sum(a[k] * y[n + 1 + k] for k in range(K))
        M[:, j] = y[K:2 * K]
    return M


def iir_cascade_line(a2, a, exact_tail=True, dtype=np.float64):
    """Rows of a2 (2-D, lines along axis 1): causal then anticausal, clamp-to-edge."""
    K = len(a)
    a = a.astype(dtype)
    g = dtype(1 + a.sum())
    x = a2.astype(dtype)
    n = x.shape[1]
    w = np.zeros_like(x)
    hist = [x[:, 0].copy() for _ in range(K)]  # w[-1], w[-2], ...: steady state of a constant x[0]
    for i in range(n):
        v = g * x[:, i]
        for k in range(K):
            v = v - a[k] * hist[k]
        w[:, i] = v
        hist = [v] + hist[:-1]
    u = x[:, n - 1]
    if exact_tail:
        M = backward_init_matrix(a.astype(np.float64)).astype(dtype)
        last = np.stack([w[:, n - 1 - k] - u for k in range(K)])  # K x rows
        init = M @ last + u
        fut = [init[k] for k in range(K)]  # y[N], y[N+1], ...
    else:
        fut = [np.zeros_like(u) for _ in range(K)]
    y = np.zeros_like(x)
    for i in range(n - 1, -1, -1):
        v = g * w[:, i]
        for k in range(K):
            v = v - a[k] * fut[k]
        y[:, i] = v
        fut = [v] + fut[:-1]
    return y


def recursive(a, dtype=np.float64):
    def run(img, axis):
        m = np.moveaxis(img, axis, -1)
        shape = m.shape
        out = iir_cascade_line(m.reshape(-1, shape[-1]), a, dtype=dtype).reshape(shape)
        return np.moveaxis(out, -1, axis).astype(np.float64)
    return run


# Deriche (1993), 4th order, parallel (causal + anticausal on the input) ---------------------

DERICHE = dict(a0=1.6800, a1=3.7350, b0=1.7830, b1=1.7230, w0=0.6318, w1=1.9970, c0=-0.6803, c1=-0.2598)


def deriche_terms(sigma):
    """h(n) = sum over two complex poles p of Re(A p^n), n >= 0, normalised so the symmetric
    kernel h(0) + 2 sum h(n>0) is 1. Returns [(A, p)]."""
    d = DERICHE
    terms = [(d['a0'] - 1j * d['a1'], np.exp((-d['b0'] + 1j * d['w0']) / sigma)),
             (d['c0'] - 1j * d['c1'], np.exp((-d['b1'] + 1j * d['w1']) / sigma))]
    # sum_{n>=0} Re(A p^n) = Re(A / (1 - p)); h(0) = Re(sum A)
    h0 = sum(np.real(A) for A, _ in terms)
    s = sum(np.real(A / (1 - p)) for A, p in terms)
    total = 2 * s - h0
    return [(A / total, p) for A, p in terms]


def deriche_line(x, terms, dtype=np.float64):
    n = x.shape[1]
    x = x.astype(np.complex128 if dtype == np.float64 else np.complex64)
    out = np.zeros(x.shape, dtype=np.float64)
    for A, p in terms:
        A = x.dtype.type(A); p = x.dtype.type(p)
        # causal: s[n] = x[n] + p s[n-1], y+ = Re(A s); steady state for constant c: c / (1 - p)
        s = x[:, 0] / (1 - p)
        for i in range(n):
            s = x[:, i] + p * s
            out[:, i] += np.real(A * s)
        # anticausal (n >= 1): t[n] = x[n+1] + p t[n+1], y- = Re(A p t)... written as
        # r[n] = p (x[n+1] + r[n+1]); steady state for constant c past the end: c p / (1 - p)
        r = x[:, n - 1] * p / (1 - p)
        for i in range(n - 1, -1, -1):
            out[:, i] += np.real(A * r)
            r = p * (x[:, i] + r)
    return out


def deriche(sigma, dtype=np.float64):
    terms = deriche_terms(sigma)

    def run(img, axis):
        m = np.moveaxis(img, axis, -1)
        shape = m.shape
        out = deriche_line(m.reshape(-1, shape[-1]), terms, dtype).reshape(shape)
        return np.moveaxis(out, -1, axis)
    return run


# Pictures -----------------------------------------------------------------------------------

def pictures(frame=None, size=None):
    h, w = 240, 320
    y, x = np.mgrid[0:h, 0:w]
    out = {}
    out['step 16-235 (x=160, y<5)'] = np.where((x >= 160) != (y < 5), 235.0, 16.0)
    bar = np.full((h, w), 16.0)
    bar[:, 100:108] = 235; bar[2:10, :] = 235; bar[:, w - 8:] = 235
    out['8-px bars (x 100-107, y 2-9, right edge)'] = bar
    imp = np.full((h, w), 16.0)
    for yy in list(range(0, h, 40)) + [h - 1]:
        for xx in list(range(0, w, 40)) + [w - 1]:
            imp[yy, xx] = 235
    out['impulses 235 on 16 (every 40 px, corners)'] = imp
    if frame:
        fw, fh = size
        rgb = np.fromfile(frame, dtype=np.uint8, count=fw * fh * 3).reshape(fh, fw, 3).astype(np.float64)
        for c, name in enumerate('RGB'):
            out[f'rooftop {fw}x{fh} {name}'] = rgb[:, :, c]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sigma', type=float, default=8.0)
    ap.add_argument('--frame')
    ap.add_argument('--size', default='640x360')
    args = ap.parse_args()
    s = args.sigma
    exact = lambda a: separable(a, lambda b, ax: fir(b, gaussian_kernel(s, int(np.ceil(3 * s))), ax))
    untrunc = lambda a: separable(a, lambda b, ax: fir(b, gaussian_kernel(s, int(np.ceil(8 * s))), ax))

    cands = []
    # three plain boxes: Wells / Kovesi's widths, and the widths nearest in variance
    wi = np.sqrt(12 * s * s / 3 + 1); wl = int(np.floor(wi)); wl -= (wl % 2 == 0)
    m = int(round((12 * s * s - 3 * wl * wl - 12 * wl - 9) / (-4 * wl - 4)))
    kw = [wl] * m + [wl + 2] * (3 - m)
    for widths in [tuple(kw), (15, 17, 17), (16, 16, 17), (15, 15, 19)]:
        var = sum((w * w - 1) / 12 for w in widths)
        cands.append((f'3 boxes {widths} (var {var:.1f})', lambda a, wd=widths: separable(a, boxes(wd))))
    for passes in (3, 4, 5):
        run, r, alpha = extended_box(s, passes)
        cands.append((f'extended box x{passes} (r {r}, ends {alpha:.3f}; var exact)', lambda a, f=run: separable(a, f)))
    cands.append(('YvV 1995 order 3 (their q)', lambda a: separable(a, recursive(poles_yvv1995(s)))))
    for order, norm in [(3, 'L2'), (3, 'Linf'), (4, 'L2'), (4, 'Linf')]:
        av, q = poles_vvyv(s, order, norm)
        cands.append((f'vVYV 1998 order {order} {norm} poles, var matched (q {q:.3f})', lambda a, av=av: separable(a, recursive(av))))
        if (order, norm) in [(3, 'L2'), (4, 'L2')]:
            cands.append((f'  same, float32', lambda a, av=av: separable(a, recursive(av, np.float32))))
    cands.append(('Deriche 1993 order 4 (parallel)', lambda a: separable(a, deriche(s))))
    cands.append(('  same, float32', lambda a: separable(a, deriche(s, np.float32))))

    pics = pictures(args.frame, tuple(int(v) for v in args.size.split('x')) if args.frame else None)
    refs = {name: exact(p) for name, p in pics.items()}
    refu = {name: untrunc(p) for name, p in pics.items()}
    worst_un = max(np.abs(refs[n] - refu[n]).max() for n in pics)
    print(f'sigma {s}; oracle: sampled Gaussian radius {int(np.ceil(3 * s))}, normalised, clamp-to-edge, float64, rows then columns')
    print(f'(oracle vs radius {int(np.ceil(8 * s))}: max {worst_un:.3f} code values)\n')
    names = list(pics)
    print('| candidate | ' + ' | '.join(names) + ' | worst | worst, rounded to 8 bits | worst within 24 px of a border |')
    print('|---|' + '---:|' * (len(names) + 3))
    for label, f in cands:
        errs, rounded, border = [], [], []
        for n in names:
            o = f(pics[n])
            d = np.abs(o - refs[n])
            errs.append(d.max())
            rounded.append(np.abs(np.clip(np.round(o), 0, 255) - refs[n]).max())
            mk = np.zeros(d.shape, bool); mk[:24] = mk[-24:] = True; mk[:, :24] = mk[:, -24:] = True
            border.append(d[mk].max())
        print(f'| {label} | ' + ' | '.join(f'{e:.2f}' for e in errs) + f' | {max(errs):.2f} | {max(rounded):.2f} | {max(border):.2f} |')
        sys.stdout.flush()


if __name__ == '__main__':
    main()
