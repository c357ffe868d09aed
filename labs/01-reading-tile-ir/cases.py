"""The small kernels lab 1 grades the interpreter rules with, and how one is run.

A ``Case`` is one use of an op: a few lines of Tile IR computing ``%r`` (and, for a
reduce of two operands, ``%r2``) from the inputs ``%a``, ``%b``, ``%c``, the input arrays,
and what NumPy says the results are. ``kernel_text`` wraps the lines into a kernel that
loads each input of rank >= 1 through a tensor view (a rank-0 input is a scalar
parameter) and stores each result; ``run_case`` runs that kernel in the interpreter, with
a student's rules in place of the project's when given.

Read a case as the Tile IR it makes: ``kernel_text(case)`` (or ``python grader.py``, which
prints every case's kernel) shows what the interpreter runs.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass

import ml_dtypes
import numpy as np

import nanotile
from nanotile.interp import InterpError, replaced_semantics
from nanotile.interp.dtypes import storage_dtype
from nanotile.interp.registry import Control
from nanotile.ir.core import Operation
from nanotile.ir.types import TileType

# The element type of Tile IR that each NumPy dtype holds (as the interpreter stores it).
ELEMENTS = {np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
            np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
            np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16",
            np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}

INPUT_NAMES = ("a", "b", "c")
RESULT_NAMES = ("r", "r2")


@dataclass(frozen=True)
class Case:
    """One use of op ``op``: ``body`` computes the results from the inputs.

    ``expected`` holds NumPy's results (their dtypes are the results' element types); None
    means the run must stop with an InterpError the rule raises itself (an overflow flag
    broken in debug mode). ``reordered``: a float reduction, whose order of additions the
    spec leaves open, so a few ulps of difference are allowed.
    """

    op: str
    title: str
    body: str
    inputs: tuple[np.ndarray, ...]
    expected: tuple[np.ndarray, ...] | None
    result_types: tuple[tuple[tuple[int, ...], np.dtype], ...] = ()
    debug: bool = False
    reordered: bool = False

    def results(self) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
        """(shape, dtype) of each result."""
        if self.expected is None:
            return self.result_types
        return tuple((e.shape, e.dtype) for e in self.expected)


def tile(shape: tuple[int, ...], dtype: np.dtype) -> str:
    """``tile<2x4xi32>`` (``tile<i32>`` for rank 0)."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tile<{dims}{ELEMENTS[np.dtype(dtype)]}>"


def _view_types(shape: tuple[int, ...], dtype: np.dtype) -> tuple[str, str]:
    """The tensor view and partition view types of a whole array of ``shape``."""
    element = ELEMENTS[np.dtype(dtype)]
    dims = "x".join(str(d) for d in shape)
    strides = ",".join(str(int(np.prod(shape[k + 1:]))) for k in range(len(shape)))
    tensor = f"tensor_view<{dims}x{element}, strides=[{strides}]>"
    return tensor, f"partition_view<tile=({dims}), {tensor}>"


def _view_of(name: str, shape: tuple[int, ...], dtype: np.dtype) -> list[str]:
    """Lines making ``%w_<name>``, a one-tile partition view of pointer ``%p_<name>``."""
    tensor, partition = _view_types(shape, dtype)
    sizes = ", ".join(str(d) for d in shape)
    strides = ", ".join(str(int(np.prod(shape[k + 1:]))) for k in range(len(shape)))
    tensor_line = (f"%v_{name} = make_tensor_view %p_{name}, shape = [{sizes}], "
                   f"strides = [{strides}] : {tensor}")
    return [tensor_line, f"%w_{name} = make_partition_view %v_{name} : {partition}"]


def _zeros(rank: int) -> str:
    return ", ".join(["%zero"] * rank)


def kernel_text(case: Case) -> str:
    """The whole module: entry @k loads the inputs, runs ``case.body``, stores results."""
    params, lines = [], ["%zero = constant <i32: 0> : tile<i32>"]
    for name, array in zip(INPUT_NAMES, case.inputs):
        if array.ndim == 0:
            params.append(f"%{name}: {tile((), array.dtype)}")
            continue
        params.append(f"%p_{name}: tile<ptr<{ELEMENTS[array.dtype]}>>")
        lines += _view_of(name, array.shape, array.dtype)
        _, partition = _view_types(array.shape, array.dtype)
        lines.append(f"%{name}, %t_{name} = load_view_tko weak %w_{name}[{_zeros(array.ndim)}]"
                     f" : {partition}, tile<i32> -> {tile(array.shape, array.dtype)}, token")
    lines += textwrap.dedent(case.body).strip("\n").splitlines()
    for name, (shape, dtype) in zip(RESULT_NAMES, case.results()):
        params.append(f"%p_{name}: tile<ptr<{ELEMENTS[np.dtype(dtype)]}>>")
        lines += _store(name, shape, dtype)
    body = "\n".join(f"    {line.rstrip()}" for line in lines)
    return (f"cuda_tile.module @lab {{\n  entry @k({', '.join(params)}) {{\n{body}\n"
            f"    return\n  }}\n}}\n")


def _store(name: str, shape: tuple[int, ...], dtype: np.dtype) -> list[str]:
    """Lines storing result ``%<name>`` through pointer ``%p_<name>``."""
    if not shape:
        pointer = f"tile<ptr<{ELEMENTS[np.dtype(dtype)]}>>"
        store = (f"%s_{name} = store_ptr_tko weak %p_{name}, %{name} : {pointer}, "
                 f"{tile((), dtype)} -> token")
        return [store]
    _, partition = _view_types(shape, dtype)
    store = (f"%s_{name} = store_view_tko weak %{name}, %w_{name}[{_zeros(len(shape))}] : "
             f"{tile(shape, dtype)}, {partition}, tile<i32> -> token")
    return [*_view_of(name, shape, dtype), store]


Rules = Mapping[str, Callable[..., object]]


def checked(rules: Rules) -> dict[str, Callable[..., object]]:
    """``rules`` wrapped so that each is checked as the machine assumes rules behave: it
    leaves its operands as they were, and returns a list with one NumPy value per result,
    held in the storage dtype of the result's element type (nanotile/interp/dtypes.py)
    and, outside reduce bodies (which the interpreter may run on whole tiles), of the
    result's shape. A rule that breaks this fails its op's run with a TypeError."""
    return {name: _checked(name, rule) for name, rule in rules.items()}


def _checked(name: str, rule: Callable[..., object]) -> Callable[..., object]:
    def run(tile_block: object, op: Operation, values: list) -> object:
        before = [v.tobytes() if isinstance(v, np.ndarray) else None for v in values]
        out = rule(tile_block, op, values)
        for index, (value, saved) in enumerate(zip(values, before)):
            if saved is not None and value.tobytes() != saved:
                raise TypeError(f"the '{name}' rule changed operand {index} in place; "
                                "tiles are values: return a new array")
        if isinstance(out, Control):
            return out
        if not isinstance(out, (list, tuple)) or len(out) != len(op.results):
            raise TypeError(f"the '{name}' rule must return a list of {len(op.results)} "
                            f"value(s), one per result; it returned {type(out).__name__}")
        for value, result in zip(out, op.results):
            _check_value(name, op, value, result.type)
        return out

    return run


def _check_value(name: str, op: Operation, value: object, result_type: object) -> None:
    if not isinstance(result_type, TileType):
        return
    if not isinstance(value, (np.ndarray, np.generic)):
        raise TypeError(f"the '{name}' rule returned a {type(value).__name__} for a "
                        f"{result_type}; tiles are NumPy arrays")
    want = storage_dtype(result_type)
    if value.dtype != want:
        raise TypeError(f"the '{name}' rule returned {value.dtype} values for a "
                        f"{result_type}; the interpreter holds it as {want}")
    if not _in_body(op) and np.shape(value) != tuple(result_type.shape):
        raise TypeError(f"the '{name}' rule returned shape {np.shape(value)} for a "
                        f"{result_type}")


def _in_body(op: Operation) -> bool:
    """Whether ``op`` is in the body of a reduce or scan (run on tiles of any shape)."""
    block = op.parent
    region = block.parent if block is not None else None
    owner = region.parent if region is not None else None
    return isinstance(owner, Operation) and owner.name in ("reduce", "scan")


def run_case(case: Case, rules: Rules | None = None,
             module: object | None = None) -> list[np.ndarray]:
    """The results of ``case``'s kernel, run with ``rules`` in place of the project's
    (None: the project's own). Raises what the run raises (InterpError)."""
    module = module or nanotile.parse(kernel_text(case), f"<{case.op}: {case.title}>")
    outputs = [np.zeros(shape or (1,), dtype) for shape, dtype in case.results()]
    arguments = [a.copy() if a.ndim else a[()] for a in case.inputs] + outputs
    with replaced_semantics(rules) if rules is not None else nullcontext():
        nanotile.run(module, "k", 1, *arguments, debug=case.debug)
    return [out.reshape(shape) for out, (shape, _) in zip(outputs, case.results())]


def own_error(error: BaseException) -> bool:
    """An InterpError a rule raised on purpose (not another exception the machine wrapped
    into an InterpError, such as the starter's NotImplementedError)."""
    return isinstance(error, InterpError) and error.__cause__ is None


# --------------------------------------------------------------------------------------
# Comparing results


def difference(expected: np.ndarray, got: np.ndarray, reordered: bool = False) -> str | None:
    """Where ``got`` first differs from ``expected`` (None: equal). Floats compare bit
    for bit (so -0.0 is not 0.0), any NaN matches any NaN; ``reordered``: a few ulps."""
    if expected.dtype.kind in "biu":
        same = expected == got
    else:
        wide_expected, wide_got = expected.astype(np.float64), got.astype(np.float64)
        both_nan = np.isnan(wide_expected) & np.isnan(wide_got)
        same = both_nan | (_bits(expected) == _bits(got))
        if reordered:
            scale = float(np.nanmax(np.abs(wide_expected), initial=1.0))
            same |= np.isclose(wide_got, wide_expected, rtol=1e-5, atol=1e-6 * scale)
    if np.all(same):
        return None
    index = tuple(int(i) for i in np.argwhere(~np.asarray(same))[0])
    where = f" at {index}" if index else ""
    return f"element{where}: expected {_show(expected[index])}, got {_show(got[index])}"


def _bits(array: np.ndarray) -> np.ndarray:
    return array.view(f"u{array.dtype.itemsize}")


def _show(value: object) -> str:
    number = np.asarray(value)
    if number.dtype.kind == "f" or number.dtype == ml_dtypes.bfloat16:
        text = repr(float(number))
        return "-0.0" if text == "-0.0" else text
    return str(number.item() if hasattr(number, "item") else number)


# --------------------------------------------------------------------------------------
# The cases, op by op. NumPy computes every expected value independently of nanotile.

def _wrapped_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b modulo 2**bits, in a's dtype (two's complement, as Tile IR integers wrap)."""
    bits = 8 * a.dtype.itemsize
    total = (a.astype(object) + b.astype(object)) % (1 << bits)
    signed = np.where(total >= 1 << (bits - 1), total - (1 << bits), total)
    return signed.astype(a.dtype)


def _i(values: list, dtype: type) -> np.ndarray:
    return np.array(values, dtype=dtype)


def _addi(title: str, a: np.ndarray, b: np.ndarray, flag: str = "", debug: bool = False,
          traps: bool = False) -> Case:
    overflow = f" overflow<{flag}>" if flag else ""
    body = f"%r = addi %a, %b{overflow} : {tile(a.shape, a.dtype)}"
    if traps:
        return Case("addi", title, body, (a, b), None, ((a.shape, a.dtype),), debug=True)
    expected = np.logical_xor(a, b) if a.dtype == np.bool_ else _wrapped_sum(a, b)
    return Case("addi", title, body, (a, b), (np.asarray(expected, a.dtype),), debug=debug)


I8_MAX, I8_MIN = 127, -128


def addi_cases() -> list[Case]:
    rng = np.random.default_rng(1)
    small = rng.integers(-1000, 1000, (2, 4)).astype(np.int32)
    return [
        _addi("i32 values", small, small[::-1].copy()),
        _addi("i8 wraps around", _i([I8_MAX, I8_MIN, 100, -1], np.int8),
              _i([1, -1, 100, 1], np.int8)),
        _addi("i16 wraps around", _i([[32767, -32768, 20000, 5], [0, 1, -1, 2]], np.int16),
              _i([[1, -1, 20000, 5], [0, -1, 1, 32767]], np.int16)),
        _addi("i64 wraps around", _i([2**63 - 1, -2**63, 5, -7], np.int64),
              _i([1, -1, 2**62, 7], np.int64)),
        _addi("i1: addition modulo 2", _i([True, True, False, False], np.bool_),
              _i([True, False, True, False], np.bool_)),
        _addi("rank-0 i32 wraps around", np.array(2**31 - 1, np.int32), np.array(1, np.int32)),
        _addi("overflow<nsw> outside debug mode: wraps", _i([I8_MAX, 3, 0, 0], np.int8),
              _i([1, 4, 0, 0], np.int8), "nsw"),
        _addi("debug, overflow<nsw>, a signed wrap: an InterpError",
              _i([I8_MAX, 3, 0, 0], np.int8), _i([1, 4, 0, 0], np.int8), "nsw", traps=True),
        _addi("debug, overflow<nsw>, -1 + 1 (only an unsigned wrap): no error",
              _i([-1, 3, 0, 0], np.int8), _i([1, 4, 0, 0], np.int8), "nsw", debug=True),
        _addi("debug, overflow<nuw>, 255 + 1 (an unsigned wrap): an InterpError",
              _i([-1, 3, 0, 0], np.int8), _i([1, 4, 0, 0], np.int8), "nuw", traps=True),
        _addi("debug, overflow<nuw>, 127 + 1 (only a signed wrap): no error",
              _i([I8_MAX, 3, 0, 0], np.int8), _i([1, 4, 0, 0], np.int8), "nuw", debug=True),
        _addi("debug, overflow<nw>, a signed wrap: an InterpError",
              _i([I8_MAX, 3, 0, 0], np.int8), _i([1, 4, 0, 0], np.int8), "nw", traps=True),
        _addi("debug, no overflow flag: wraps, no error", _i([I8_MAX, -1, 0, 0], np.int8),
              _i([1, 1, 0, 0], np.int8), debug=True),
    ]


NAN, INF = np.nan, np.inf
SUBNORMAL = float(np.finfo(np.float32).tiny) / 4  # an f32 subnormal


def _maxf(title: str, a: list | np.ndarray, b: list | np.ndarray, expected: list | None,
          dtype: type = np.float32, flags: str = "") -> Case:
    x, y = np.asarray(a, dtype), np.asarray(b, dtype)
    if expected is None:  # no NaN, no signed zero, no flag: NumPy's maximum is the answer
        want = np.maximum(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    else:
        want = np.asarray(expected, dtype).reshape(x.shape)
    body = f"%r = maxf %a, %b{' ' + flags if flags else ''} : {tile(x.shape, x.dtype)}"
    return Case("maxf", title, body, (x, y), (want,))


def maxf_cases() -> list[Case]:
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 2, 4))
    return [
        _maxf("f32 values", x.astype(np.float32), y.astype(np.float32), None),
        _maxf("NaN: the other operand wins", [NAN, 1.0, NAN, -INF], [2.0, NAN, NAN, NAN],
              [2.0, 1.0, NAN, -INF]),
        _maxf("propagate_nan: a NaN operand gives NaN", [NAN, 1.0, NAN, 3.0],
              [2.0, NAN, NAN, -1.0], [NAN, NAN, NAN, 3.0], flags="propagate_nan"),
        _maxf("+0.0 is greater than -0.0", [-0.0, 0.0, -0.0, 0.0], [0.0, -0.0, -0.0, 0.0],
              [0.0, 0.0, -0.0, 0.0]),
        _maxf("infinities", [-INF, INF, -INF, 5.0], [-3.0, 2.0, -INF, INF],
              [-3.0, INF, -INF, INF]),
        _maxf("f16, with a NaN", [1.5, NAN, -2.0, 65504.0], [1.25, 3.0, -2.5, -INF],
              [1.5, 3.0, -2.0, 65504.0], np.float16),
        _maxf("bf16", [1.5, -7.0, 0.25, 300.0], [2.0, -8.0, 0.125, -300.0], None,
              ml_dtypes.bfloat16),
        _maxf("f64, with a NaN", [1e300, NAN, -1e-300, 2.0], [-1e300, -5.0, -2e-300, NAN],
              [1e300, -5.0, -1e-300, 2.0], np.float64),
        _maxf("rank-0 f32", np.array(-1.5), np.array(-2.5), [-1.5]),
        _maxf("f32 subnormals without flush_to_zero", [SUBNORMAL, -SUBNORMAL, 0.0, -1.0],
              [0.0, -1.0, -SUBNORMAL, -SUBNORMAL], [SUBNORMAL, -SUBNORMAL, 0.0, -SUBNORMAL]),
        _maxf("flush_to_zero: subnormal inputs are zeros of their sign",
              [SUBNORMAL, -SUBNORMAL, 0.0, -1.0], [0.0, -1.0, -SUBNORMAL, -SUBNORMAL],
              [0.0, -0.0, 0.0, -0.0], flags="flush_to_zero"),
        _maxf("flush_to_zero and propagate_nan", [NAN, SUBNORMAL, 2.0, -SUBNORMAL],
              [1.0, -SUBNORMAL, NAN, -SUBNORMAL], [NAN, 0.0, NAN, -0.0],
              flags="flush_to_zero propagate_nan"),
    ]


def _select(title: str, condition: np.ndarray, a: np.ndarray, b: np.ndarray) -> Case:
    body = (f"%r = select %a, %b, %c : {tile(condition.shape, condition.dtype)}, "
            f"{tile(a.shape, a.dtype)}")
    return Case("select", title, body, (condition, a, b), (np.where(condition, a, b),))


def select_cases() -> list[Case]:
    mixed = _i([True, False, False, True], np.bool_)
    grid = _i([[True, False, True, False], [False, False, True, True]], np.bool_)
    return [
        _select("f32, NaNs pass through", mixed, np.array([1.0, NAN, -0.0, NAN], np.float32),
                np.array([NAN, 2.0, 3.0, -4.0], np.float32)),
        _select("i32, 2x4", grid, np.arange(8, dtype=np.int32).reshape(2, 4),
                -np.arange(8, dtype=np.int32).reshape(2, 4)),
        _select("i1 values", mixed, _i([True, True, False, False], np.bool_),
                _i([False, True, True, False], np.bool_)),
        _select("rank-0 i64", np.array(False), np.array(2**40, np.int64),
                np.array(-7, np.int64)),
        _select("f16, all true", np.ones(8, np.bool_), np.arange(8, dtype=np.float16),
                -np.arange(8, dtype=np.float16)),
        _select("f64, all false", np.zeros(4, np.bool_), np.ones(4), np.array([0.5, -0.0, 2, 3])),
    ]


def _shape_op(op: str, title: str, source: np.ndarray, shape: tuple[int, ...]) -> Case:
    body = f"%r = {op} %a : {tile(source.shape, source.dtype)} -> {tile(shape, source.dtype)}"
    result = np.broadcast_to(source, shape) if op == "broadcast" else source.reshape(shape)
    return Case(op, title, body, (source,), (np.array(result),))


def broadcast_cases() -> list[Case]:
    return [
        _shape_op("broadcast", "1 -> 8", np.array([7], np.int32), (8,)),
        _shape_op("broadcast", "a row: 1x4 -> 4x4", np.arange(4, dtype=np.float32)[None],
                  (4, 4)),
        _shape_op("broadcast", "a column: 4x1 -> 4x8", np.arange(4, dtype=np.int16)[:, None],
                  (4, 8)),
        _shape_op("broadcast", "i1, 1x1 -> 2x4", np.array([[True]]), (2, 4)),
        _shape_op("broadcast", "the middle dimension: 2x1x4 -> 2x8x4",
                  np.arange(8, dtype=np.float64).reshape(2, 1, 4), (2, 8, 4)),
        _shape_op("broadcast", "nothing to do: 4 -> 4", np.arange(4, dtype=np.int64), (4,)),
    ]


def reshape_cases() -> list[Case]:
    counting = np.arange(8, dtype=np.int32)
    return [
        _shape_op("reshape", "8 -> 2x4 (row-major)", counting, (2, 4)),
        _shape_op("reshape", "2x4 -> 4x2 (row-major, not a transpose)",
                  counting.reshape(2, 4), (4, 2)),
        _shape_op("reshape", "f32 2x4 -> 8", np.linspace(-1, 1, 8, dtype=np.float32)
                  .reshape(2, 4), (8,)),
        _shape_op("reshape", "rank 0 -> 1x1", np.array(2.5, np.float32), (1, 1)),
        _shape_op("reshape", "1 -> rank 0", np.array([-9], np.int64), ()),
        _shape_op("reshape", "4x1 -> 1x4", np.arange(4, dtype=np.int8)[:, None], (1, 4)),
        _shape_op("reshape", "i1 2x4 -> 8", _i([[1, 0, 0, 1], [1, 1, 0, 0]], np.bool_), (8,)),
    ]


def _identity(value: float, dtype: type) -> str:
    """An identities=[...] entry: integers as numbers, floats by their bit pattern."""
    element = ELEMENTS[np.dtype(dtype)]
    if np.dtype(dtype).kind in "biu":
        return f"{int(value)} : {element}"
    bits = np.asarray(value, dtype).view(f"u{np.dtype(dtype).itemsize}")
    return f"0x{int(bits):0{2 * np.dtype(dtype).itemsize}X} : {element}"


def _reduce(title: str, source: np.ndarray, dim: int, identity: float, combine: str,
            expected: np.ndarray, reordered: bool = False) -> Case:
    """A reduce of one operand whose body is ``combine`` (lines computing %s from the
    element %e and the accumulator %acc)."""
    scalar = tile((), source.dtype)
    body = (f"%r = reduce %a dim={dim} identities=[{_identity(identity, source.dtype)}] : "
            f"{tile(source.shape, source.dtype)} -> {tile(expected.shape, expected.dtype)}\n"
            f"(%e: {scalar}, %acc: {scalar}) {{\n{textwrap.indent(combine.format(t=scalar), '  ')}"
            f"\n  yield %s : {scalar}\n}}")
    return Case("reduce", title, body, (source,), (expected,), reordered=reordered)


ADD_I = "%s = addi %e, %acc : {t}"
ADD_F = "%s = addf %e, %acc : {t}"
MAX_F = "%s = maxf %e, %acc : {t}"


def _argmax(values: np.ndarray) -> Case:
    """Two operands reduced together: the largest value and its first index."""
    indices = np.arange(values.size, dtype=np.int32)
    body = f"""\
        %r, %r2 = reduce %a, %b dim=0 identities=[{_identity(-INF, np.float32)}, 0 : i32] : tile<{values.size}xf32>, tile<{values.size}xi32> -> tile<f32>, tile<i32>
        (%v: tile<f32>, %v_acc: tile<f32>, %j: tile<i32>, %j_acc: tile<i32>) {{
          %greater = cmpf greater_than ordered %v, %v_acc : tile<f32> -> tile<i1>
          %equal = cmpf equal ordered %v, %v_acc : tile<f32> -> tile<i1>
          %earlier = cmpi less_than %j, %j_acc, signed : tile<i32> -> tile<i1>
          %tie = andi %equal, %earlier : tile<i1>
          %take = ori %greater, %tie : tile<i1>
          %best = select %take, %v, %v_acc : tile<i1>, tile<f32>
          %where = select %take, %j, %j_acc : tile<i1>, tile<i32>
          yield %best, %where : tile<f32>, tile<i32>
        }}"""
    expected = (np.array(values.max(), np.float32), np.array(values.argmax(), np.int32))
    return Case("reduce", "two operands (argmax: value and first index)", body,
                (values, indices), expected)


def reduce_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    ints = rng.integers(-50, 50, 8).astype(np.int32)
    floats = rng.standard_normal((2, 8)).astype(np.float32)
    big = np.array([100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0, -10, 120, 110, 1, 2], np.int8)
    unsigned = np.array([5, -3, 100, -100, 7, 0, 1, 2], np.int32)
    with_nan = np.array([1.0, NAN, 3.0, -2.0, NAN, 0.5, 2.5, -INF], np.float32)
    rows_nan = np.array([[1.0, NAN, 3.0, 2.0], [4.0, -1.0, 0.0, 8.0]], np.float32)
    cube = np.arange(16, dtype=np.int64).reshape(2, 4, 2)
    quarters = (rng.integers(-32, 32, 16) / 4).astype(np.float16)  # sums exact in f16
    ties = np.array([1.0, 7.0, -3.0, 7.0, 2.0, 7.0, 0.0, -8.0], np.float32)
    masked = rng.integers(0, 1000, 16).astype(np.int32)
    return [
        _reduce("addi of i32 to rank 0", ints, 0, 0, ADD_I, np.array(ints.sum(), np.int32)),
        _reduce("addi of i8 wraps around", big, 0, 0, ADD_I,
                np.array(int(big.astype(np.int64).sum()), np.int64).astype(np.int8)),
        _reduce("addf of each row (dim=1)", floats, 1, 0.0, ADD_F,
                floats.astype(np.float64).sum(axis=1).astype(np.float32), reordered=True),
        _reduce("maxf of each column (dim=0), identity -inf", floats.reshape(4, 4), 0, -INF,
                MAX_F, floats.reshape(4, 4).max(axis=0)),
        _reduce("maxf skips NaNs", with_nan, 0, -INF, MAX_F, np.array(3.0, np.float32)),
        _reduce("maxf propagate_nan: a row with a NaN gives NaN", rows_nan, 1, -INF,
                "%s = maxf %e, %acc propagate_nan : {t}", np.array([NAN, 8.0], np.float32)),
        _reduce("maxi unsigned", unsigned, 0, 0, "%s = maxi %e, %acc unsigned : {t}",
                np.array(-3, np.int32)),
        _reduce("mini signed of each column (dim=0)", ints.reshape(2, 4), 0, 2**31 - 1,
                "%s = mini %e, %acc signed : {t}", ints.reshape(2, 4).min(axis=0)),
        _reduce("addi over the middle dimension of a 2x4x2 tile", cube, 1, 0, ADD_I,
                cube.sum(axis=1)),
        _reduce("muli", np.array([1, 2, -3, 1, 2, -1, 5, 1], np.int32), 0, 1,
                "%s = muli %e, %acc : {t}", np.array(60, np.int32)),
        _reduce("a body of several ops: (x + acc) & 255", masked, 0, 0,
                "%sum = addi %e, %acc : {t}\n%mask = constant <i32: 255> : {t}\n"
                "%s = andi %sum, %mask : {t}", np.array(masked.sum() & 255, np.int32)),
        _reduce("addf of f16", quarters, 0, 0.0, ADD_F,
                np.array(quarters.astype(np.float64).sum(), np.float16)),
        _reduce("the identity counts: -0.0 + identity 0.0 is +0.0", np.array(
            [[-0.0, 1.0, -2.0, 3.0]], np.float32), 0, 0.0, ADD_F,
            np.array([0.0, 1.0, -2.0, 3.0], np.float32)),
        _argmax(ties),
    ]


CASES: dict[str, Callable[[], list[Case]]] = {
    "addi": addi_cases, "maxf": maxf_cases, "select": select_cases,
    "broadcast": broadcast_cases, "reshape": reshape_cases, "reduce": reduce_cases,
}
