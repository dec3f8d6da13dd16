# dwconv_tile_model.py — a CPU model of kernels/conv_dw_tile.cu's index math (conv_dw v2, session 12): the
# tiles (TH rows x 2 columns), the halo rows and columns each loaded once, the masks at the pads, rows/columns
# past the output skipped, the stride-1 dgrad as the forward of dy with flipped taps and pad K-1-pad, checked
# against a direct depthwise conv / dgrad on odd shapes (one channel: the 8-channel vector is an offset).
# Session 13: the stride-2 dgrad by stride phases (tr: tiles of 2 dx rows x 2 columns from an even t = p + pad,
# dy row ih0 + ir through tap r = j - 2 ir + K-1, the row before the image (odd pad) not stored).
# Run: python3 tests/gpu/dwconv_tile_model.py (no GPU, no numpy).
import random
def zeros(h, w, v=0.0): return [[v] * w for _ in range(h)]
def close(a, b): return all(abs(u - v) < 1e-9 for ra, rb in zip(a, b) for u, v in zip(ra, rb)) and len(a) == len(b)
def ref_fwd(x, w, st, plo, phi):
    H, W = len(x), len(x[0]); K = len(w)
    Oh = (H + plo[0] + phi[0] - K) // st + 1; Ow = (W + plo[1] + phi[1] - K) // st + 1
    y = zeros(Oh, Ow)
    for p in range(Oh):
        for q in range(Ow):
            for r in range(K):
                for s in range(K):
                    ih, iw = p * st - plo[0] + r, q * st - plo[1] + s
                    if 0 <= ih < H and 0 <= iw < W:
                        y[p][q] += x[ih][iw] * w[r][s]
    return y
def ref_dgrad(dy, w, H, W, plo, st=1):   # dx[i] = sum_r dy[(i + plo - r) / st] w[r] where st divides it
    K = len(w); Oh, Ow = len(dy), len(dy[0])
    dx = zeros(H, W)
    for i in range(H):
        for j in range(W):
            for r in range(K):
                for s in range(K):
                    a, b = i + plo[0] - r, j + plo[1] - s
                    if a % st or b % st: continue
                    a, b = a // st, b // st
                    if 0 <= a < Oh and 0 <= b < Ow:
                        dx[i][j] += dy[a][b] * w[r][s]
    return dx
def kernel(src, w, Oh, Ow, st, pad_h, pad_w, flip, tr=False):
    K = len(w); Dh, Dw = len(src), len(src[0])
    TH = 2 if st == 2 or Oh < 28 else 4; QT = 2
    ROWS, SPAN = (TH - 1) * st + K, (QT - 1) * st + K
    if tr: ROWS, SPAN = TH // 2 + (K - 1) // 2, QT // 2 + (K - 1) // 2
    ph, pw = (pad_h & 1, pad_w & 1) if tr else (0, 0)
    nth, ntw = (Oh + ph + TH - 1) // TH, (Ow + pw + 1) // 2
    wk = [row[::-1] for row in w[::-1]] if flip else w
    dst = zeros(Oh, Ow, None)
    for th in range(nth):
        for tw in range(ntw):
            p0, q0 = th * TH - ph, tw * QT - pw
            ih0, iw0 = p0 * st - pad_h, q0 * st - pad_w
            if tr:
                assert (p0 + pad_h) % 2 == 0 and (q0 + pad_w) % 2 == 0
                ih0, iw0 = (p0 + pad_h) // 2 - (K - 1) // 2, (q0 + pad_w) // 2 - (K - 1) // 2
            acc = zeros(TH, QT)
            for ir in range(ROWS):
                ih = ih0 + ir
                row = [src[ih][iw0 + c] if 0 <= ih < Dh and 0 <= iw0 + c < Dw else 0.0 for c in range(SPAN)]
                for j in range(TH):
                    r = j - 2 * ir + K - 1 if tr else ir - j * st
                    if r < 0 or r >= K: continue
                    for s in range(K):
                        for q in range(QT):
                            c2 = q + K - 1 - s
                            if tr and (c2 % 2 or not 0 <= c2 // 2 < SPAN): continue
                            acc[j][q] += row[c2 // 2 if tr else q * st + s] * wk[r][s]
            for j in range(TH):
                if p0 + j < 0: continue
                if p0 + j >= Oh: break
                for q in range(QT):
                    if q0 + q < 0: continue
                    if q0 + q >= Ow: break
                    assert dst[p0 + j][q0 + q] is None, "written twice"
                    dst[p0 + j][q0 + q] = acc[j][q]
    assert all(v is not None for r in dst for v in r), "an output not written"
    return dst
random.seed(1)
def rnd(h, w): return [[random.gauss(0, 1) for _ in range(w)] for _ in range(h)]
cases = [(13, 13, 3, 1, (1, 1), (1, 1)), (7, 7, 3, 1, (1, 1), (1, 1)), (57, 57, 3, 2, (1, 0), (0, 1)),
         (57, 57, 5, 1, (2, 1), (1, 2)), (13, 13, 5, 1, (2, 2), (2, 2)), (13, 13, 5, 2, (2, 2), (2, 2)),
         (112, 112, 3, 2, (1, 1), (1, 1)), (30, 29, 3, 1, (0, 2), (2, 0)), (1, 1, 3, 1, (1, 1), (1, 1)),
         (2, 5, 5, 2, (2, 2), (2, 2)), (56, 56, 3, 1, (1, 1), (1, 1)), (28, 27, 5, 1, (0, 0), (4, 4)),
         (16, 15, 3, 2, (0, 1), (1, 0)), (8, 9, 3, 2, (0, 0), (0, 0)), (29, 30, 5, 2, (1, 2), (2, 1)),
         (14, 14, 5, 2, (2, 2), (2, 2)), (57, 55, 3, 2, (1, 1), (1, 1)), (11, 12, 5, 2, (3, 0), (0, 3))]
n = 0
for H, W, K, st, plo, phi in cases:
    x = rnd(H, W); w = rnd(K, K)
    y = ref_fwd(x, w, st, plo, phi)
    Oh, Ow = len(y), len(y[0])
    got = kernel(x, w, Oh, Ow, st, plo[0], plo[1], False)
    assert close(got, y), ("fwd", H, W, K, st, plo, phi); n += 1
    if st == 1:
        dy = rnd(Oh, Ow)
        dx = ref_dgrad(dy, w, H, W, plo)
        got = kernel(dy, w, H, W, 1, K - 1 - plo[0], K - 1 - plo[1], True)
        assert close(got, dx), ("dgrad", H, W, K, plo, phi); n += 1
    else:
        dy = rnd(Oh, Ow)
        dx = ref_dgrad(dy, w, H, W, plo, 2)
        got = kernel(dy, w, H, W, 2, plo[0], plo[1], False, tr=True)
        assert close(got, dx), ("dgrad s2", H, W, K, plo, phi); n += 1
print(n, "model checks passed")
