"""c = a @ b for float16 matrices, accumulated in float32: a (m x k), b (k x n), c (m x n).

Each block computes one BM x BN tile of c, walking k in steps of BK (the K loop) and
adding each product to a float32 accumulator with ct.mma; the sum is rounded to float16
once, at the end. m, n and k are assumed to be multiples of the tile sizes.
The cuTile Python that examples/matmul_f16.mlir was exported from.
Launch with grid (m // BM, n // BN)."""

import cuda.tile as ct

BM, BN, BK = 32, 32, 16


@ct.kernel
def matmul_f16(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.full((BM, BN), 0.0, dtype=ct.float32)
    for kk in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        a_tile = ct.load(a, index=(i, kk), shape=(BM, BK))
        b_tile = ct.load(b, index=(kk, j), shape=(BK, BN))
        acc = ct.mma(a_tile, b_tile, acc)
    ct.store(c, index=(i, j), tile=ct.astype(acc, ct.float16))
