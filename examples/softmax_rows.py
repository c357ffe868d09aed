"""Softmax of each row of a 2-D float32 array, one block per row:

    out[i, :] = exp(x[i, :] - max(x[i, :])) / sum(exp(x[i, :] - max(x[i, :])))

The row (n <= COLS columns) is loaded as one tile of COLS elements padded with -inf, which
neither changes the maximum nor adds to the sum (exp(-inf) = 0).
The cuTile Python that examples/softmax_rows.mlir was exported from. Launch with grid (rows,)."""

import cuda.tile as ct

COLS = 128


@ct.kernel
def softmax_rows(x, out, COLS: ct.Constant[int]):
    row = ct.bid(0)
    xs = ct.load(x, index=(row, 0), shape=(1, COLS), padding_mode=ct.PaddingMode.NEG_INF)
    shifted = xs - ct.max(xs, axis=1, keepdims=True)
    e = ct.exp(shifted)
    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))
