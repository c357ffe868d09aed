"""How Hopper's tensor cores add up one MMA instruction: D = C + sum over k of a_k * b_k.

The sum is not f32 arithmetic. Measured on an H200 (bench/gpu_check.py --mma-rounding:
operands spread over 2^-5 .. 2^5 with random mantissas, an f32 C of 2^-4 .. 2^6), every
result of mma.sync m16n8k16 / m16n8k8 / m16n8k32 and wgmma m64nNk16 / m64nNk8 / m64nNk32
with f16, bf16, tf32, e4m3 or e5m2 inputs and f32 accumulators, one instruction or eight
in a row, is reproduced bit for bit (110,592 results; on an H100 too, the same tiles and
15 wgmma shapes) by one fused addition per instruction (``tensor_core_dot``):

1. each product a_k * b_k is exact, and its exponent is taken as e(a) + e(b), the sum of
   the operands' exponents (the product's significand, in [1, 4), is not renormalised);
2. E is the largest of those exponents and of C's (zero terms take no part);
3. C and every product are truncated toward zero to a multiple of 2^(E - kept), kept = 25
   for f16, bf16 and tf32 inputs, 13 for e4m3 and e5m2 (wgmma's FP8 keeps few bits);
4. the truncated terms are added exactly, and the sum is rounded toward zero to f32, or,
   for FP8, to 13 bits after its leading one.

A chain of instructions applies this to each in turn, the accumulator an f32 between
them. An exponent e(x) is floor(log2 |x|), a subnormal's the smallest normal exponent of
its type. mma.sync with FP8 inputs is not an FP8 instruction: ptxas (sm_90a and sm_100a
alike) converts the operands to f16, runs two m16n8k16 HMMAs from a zero accumulator
(the k with k mod 4 in {0, 1}, then the others) and adds C with an f32 FADD
(``fp8_mma_sync``). Operands or accumulators that are not finite give the IEEE sum;
sm_100's tcgen05 was not measured and keeps the IEEE sum.
"""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.fpmath import round_to, two_sum

# per operand type: bits kept below the largest exponent E, and the result's bits after
# its leading one (None: rounded toward zero to f32), as measured
FUSED = {"f16": (25, None), "bf16": (25, None), "tf32": (25, None),
         "e4m3": (13, 13), "e5m2": (13, 13)}
# the smallest normal exponent of each type (a subnormal's exponent)
MIN_EXPONENT = {"f16": -14, "bf16": -126, "tf32": -126, "f32": -126, "e4m3": -6, "e5m2": -14}


def exponents(x: np.ndarray, kind: str) -> np.ndarray:
    """floor(log2 |x|) of each element (float64), at least the type's smallest normal
    exponent; zeros get -inf, so that they never set E."""
    _, e = np.frexp(x)
    return np.where(x == 0, -np.inf, np.maximum(e - 1, MIN_EXPONENT[kind]).astype(np.float64))


def tensor_core_dot(a: np.ndarray, b: np.ndarray, c: np.ndarray, kind: str,
                    kind_b: str | None = None) -> np.ndarray:
    """C + sum_k a[..., k] * b[..., k] as one tensor-core instruction computes it for
    operands of ``kind`` (f16, bf16, tf32, e4m3, e5m2; another kind gets the IEEE sum) and
    an f32 accumulator ``c`` (float64 arrays holding those values; a and b broadcast
    against each other, their last axis is K, c has the shape of the rest); ``kind_b``
    is b's type where it differs (e4m3 times e5m2). Returns float32."""
    with np.errstate(invalid="ignore"):     # inf * 0: NaN, as the IEEE sum has it
        products = a * b
    if kind not in FUSED:
        return (products.sum(axis=-1) + c).astype(np.float32)
    kept, result_bits = FUSED[kind]
    # a zero operand has exponent -inf, and so has its product: it never sets E
    largest = np.maximum((exponents(a, kind) + exponents(b, kind_b or kind)).max(axis=-1),
                         exponents(c, "f32"))
    finite = np.isfinite(largest)               # all-zero sums: E is -inf
    unit = np.exp2(np.where(finite, largest, 0.0) - kept)
    if not (np.isfinite(products).all() and np.isfinite(c).all()):
        return _with_ieee_where_not_finite(products, c, unit, result_bits)
    # every truncated term is a multiple of unit below 2^(E + 2): the float64 sum is exact
    total = np.trunc(products / unit[..., None]).sum(axis=-1) * unit + np.trunc(c / unit) * unit
    return _rounded(total, result_bits)


def _rounded(total: np.ndarray, result_bits: int | None) -> np.ndarray:
    """The fused sum toward zero to f32, or to ``result_bits`` after its leading one."""
    if result_bits is not None:
        step = np.exp2(np.where(total == 0, 0.0, exponents(total, "f32")) - result_bits)
        total = np.trunc(total / step) * step
    return round_to(total, None, "f32", "rz")


def _with_ieee_where_not_finite(products, c, unit, result_bits) -> np.ndarray:
    """The fused sums where every term is finite, the IEEE sum (inf, NaN) elsewhere."""
    exact = products.sum(axis=-1) + c
    finite = np.isfinite(exact) & np.isfinite(products).all(axis=-1)
    products = np.where(finite[..., None], products, 0.0)
    c = np.where(finite, c, 0.0)
    total = np.trunc(products / unit[..., None]).sum(axis=-1) * unit + np.trunc(c / unit) * unit
    return np.where(finite, _rounded(total, result_bits), exact.astype(np.float32))


def fp8_mma_sync(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """mma.sync m16n8k32 with e4m3/e5m2 operands (``a``, ``b`` as in tensor_core_dot,
    K = 32) as ptxas compiles it: two f16 tensor-core sums from zero, over the k with
    k mod 4 in {0, 1} and then over the others, and C added in f32 (round to nearest)."""
    a, b = np.broadcast_arrays(a, b)
    low = np.arange(a.shape[-1]) % 4 < 2
    first = tensor_core_dot(a[..., low], b[..., low], np.zeros(c.shape), "f16")
    both = tensor_core_dot(a[..., ~low], b[..., ~low], first.astype(np.float64), "f16")
    total, error = two_sum(both.astype(np.float64), c)   # the FADD: exact, then rounded once
    return round_to(total, error, "f32", "rn")


# ---------------------------------------------------------------- Tile IR's mmaf, summed so

# one instruction's K per Tile IR operand type, and its PTX name
INSTRUCTION_K = {"f16": 16, "bf16": 16, "tf32": 8, "f8E4M3FN": 32, "f8E5M2": 32}
PTX_TYPE = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f8E4M3FN": "e4m3",
            "f8E5M2": "e5m2"}


def mmaf_total(instruction: str):
    """A summation for Tile IR's mmaf (nanotile.interp.ops_tile.mmaf_sums) as a chain of
    ``instruction`` ("wgmma" or "mma.sync") sums along K, in K order as the back end
    issues them; operand types without tensor-core sums (f32, f64) get the exact sum."""
    def total(a: np.ndarray, b: np.ndarray, c: np.ndarray, kind_a: str, kind_b: str):
        if kind_a not in INSTRUCTION_K or kind_b not in INSTRUCTION_K:
            return np.matmul(a, b) + c
        step, accumulator = INSTRUCTION_K[kind_a], c.astype(np.float32).astype(np.float64)
        rows = a[..., :, None, :]                               # (..., M, 1, K)
        columns = np.swapaxes(b, -1, -2)[..., None, :, :]      # (..., 1, N, K)
        for k in range(0, a.shape[-1], step):
            part_a, part_b = rows[..., k:k + step], columns[..., k:k + step]
            if instruction == "mma.sync" and step == 32:
                result = fp8_mma_sync(part_a, part_b, accumulator)
            else:
                result = tensor_core_dot(part_a, part_b, accumulator, PTX_TYPE[kind_a],
                                         PTX_TYPE[kind_b])
            accumulator = result.astype(np.float64)
        return accumulator
    return total


def tensor_core_instruction(ptx: str) -> str | None:
    """The instruction a kernel's PTX sums its mmaf with, for mmaf_total: "wgmma",
    "mma.sync", or None (tcgen05 and FMA loops, whose sums the model does not cover)."""
    if "wgmma.mma_async" in ptx:
        return "wgmma"
    return "mma.sync" if "mma.sync.aligned" in ptx else None


def instructions_to_try(entry) -> list[str]:
    """The instructions whose sums may explain a kernel's mmaf results (entry: a Tile IR
    entry op): none without a float mmaf on tensor-core types, wgmma's for f16, bf16 and
    tf32 (mma.sync sums alike), and mma.sync's too for FP8 (which differ)."""
    kinds = {op.operands[0].type.element.name for op in entry.walk() if op.name == "mmaf"}
    if not kinds & set(INSTRUCTION_K):
        return []
    return ["wgmma", "mma.sync"] if kinds & {"f8E4M3FN", "f8E5M2"} else ["wgmma"]
