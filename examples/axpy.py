"""out = alpha * x + y over 1-D float32 arrays, one tile of TILE elements per block.

The cuTile Python that examples/axpy.mlir was exported from (see examples/README.md and
export.py). The arrays need not be a multiple of TILE long: the last block's load reads
past the end (padded with zeros) and its store writes only the elements inside the array.
Launch with grid (ceil(n / TILE),)."""

import cuda.tile as ct

TILE = 128


@ct.kernel
def axpy(x, y, out, alpha: float, TILE: ct.Constant[int]):
    block = ct.bid(0)
    xs = ct.load(x, index=(block,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    ys = ct.load(y, index=(block,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(block,), tile=alpha * xs + ys)
