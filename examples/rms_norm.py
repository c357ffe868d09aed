"""RMS normalisation of each row of a 2-D float32 array, scaled by a weight per column:

    out[i, :] = x[i, :] / sqrt(mean(x[i, :] ** 2) + eps) * w

One block per row; the row (n columns, n <= COLS) is loaded as one tile of COLS elements,
padded with zeros, so the sum of squares is that of the row and the mean divides by n.
The cuTile Python that examples/rms_norm.mlir was exported from. Launch with grid (rows,)."""

import cuda.tile as ct

COLS = 256


@ct.kernel
def rms_norm(x, w, out, eps: float, COLS: ct.Constant[int]):
    row = ct.bid(0)
    xs = ct.load(x, index=(row, 0), shape=(1, COLS), padding_mode=ct.PaddingMode.ZERO)
    ws = ct.load(w, index=(0,), shape=(COLS,), padding_mode=ct.PaddingMode.ZERO)
    mean_square = ct.sum(xs * xs, axis=1, keepdims=True) / x.shape[1]
    scale = ct.rsqrt(mean_square + eps)
    ct.store(out, index=(row, 0), tile=xs * scale * ct.reshape(ws, (1, COLS)))
