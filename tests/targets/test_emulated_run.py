"""``nanotile.run(..., device="emulator")`` and ``nanotile run --emulate``: a kernel compiled
to PTX by nanotile and run in the PTX emulator computes what the interpreter computes.

1. Every kernel of corpus/cutile, for sm_90 and sm_100, on the inputs of corpus_cases.py.
2. A fixed sample of corpus/cutile-tests kernels (written by cuTile's test suite, not by
   us), for both targets, on the random inputs of nanotile.passes.semantics (the
   --check-semantics oracle). Integers and data movement must match exactly; floats to a
   few ulps of the stored type, scaled by the largest result (approximate transcendentals
   and other summation orders).
3. The CLI as a subprocess: outputs, and clean errors that write no output file.
"""

from __future__ import annotations

import copy
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nanotile
from nanotile.compare import (PrintLog, first_difference, order_explains, print_difference,
                              tensor_cores_explain)
from nanotile.interp import InterpError, cutile_args

from tests.shared_corpus import EXAMPLES, shared_file

from .corpus_cases import CORPUS, KERNELS, TESTS_CORPUS, corpus_case, cutile_tests_case

ROOT = Path(__file__).resolve().parents[2]

TARGETS = ["sm_90", "sm_100"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", KERNELS)
def test_cutile_corpus(name, target):
    path = CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    grid, args, outputs, rtol, atol = corpus_case(name, np.random.default_rng(11))
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    nanotile.run(str(path), name, grid, *cutile_args(*theirs))
    nanotile.run(str(path), name, grid, *cutile_args(*mine), device="emulator",
                 gpu_name=target)
    for i in outputs:
        want = theirs[i].astype(np.float64)
        assert not np.array_equal(want, args[i].astype(np.float64))  # the kernel wrote it
        np.testing.assert_allclose(mine[i].astype(np.float64), want, rtol=rtol, atol=atol)


# cuTile test-suite kernels that nanotile compiles for both targets: reductions, scans,
# mma, casts, packing, views, loops, math. The last five ran past the end of their arrays
# or failed their asserts on generated inputs before make_inputs sized arrays from
# pointer tiles, kept index arrays in range and made asserted masks true.
SAMPLE = [
    ("kernels_layer_norm__layer_norm_bwd_dx_partial_dwdb__bf16x2_bf16x2_f32x2_f32x2_bf16x2_"
     "bf16x1_f32x1_f32x1_i32x1_1024.13_2.sm_100"),
    "test_reduction__make_reduce_axis1_2d.kernel-argmin__f16x2_i32x1_16_16_F",
    "test_reduction__make_reduce_axis1_3d.kernel-argmin__i16x3_i32x2_16_4_4_F",
    "test_reduction__make_sumprod_rounding_mode.kernel-sum-RN__f32x2_f32x2_16_128",
    "test_scan__make_scan_rounding_mode.kernel-RZ-cumsum__f16x2_f16x2_16_32",
    "test_scan__test_scan_custom_cumsum.kernel_def__bf16x2_bf16x2_F",
    "test_mma__mma_kernel__f8_e4m3fnx2_f8_e4m3fnx2_f32x2_16_16_16_F",
    "test_fma__mul_add_kernel__f32x2_f32x2_f32x2_f32x2_32_32",
    "test_pack_unpack__test_pack_to_bytes.kernel__f8_e5m2x1_u8x1_128",
    "test_cast__make_astype_to_f32_kernel.kernel-RP__f64x1_f32x1_2_F",
    "test_cast__make_astype_to_tf32_kernel.kernel-RZ__f32x1_f32x1_2_F",
    "test_cast__make_astype_to_tf32_kernel.kernel-RA__f32x1_f32x1_2_T",
    "test_binary_elementwise+jit__array_cmp~10__i64x1_i64x1_b1x1_64",
    "test_binary_elementwise+jit__array_pow__f32x1_bf16x1_f32x1_64",
    "test_binary_elementwise+jit__array_scalar_div~2__i16x1_si32_i32x1_64",
    "test_unary_elementwise+jit__array_trig~6__i16x1_f32x1_64",
    "test_unary_elementwise+jit__array_floor__bf16x1_bf16x1_64",
    "test_unary_elementwise+jit__array_exp_rounding_mode__f32x1_f32x1_64",
    "test_tiled_view__test_tiled_view_ifelse_result.kernel__f32x1_f32x1_f32x1_64_T",
    "test_tiled_view__test_tiled_view_2d_conv_no_padding.kernel__i32x2_i32x1_2_2_1_1_5_5",
    "test_token_order__TestForLoopParallelStoreMLIR.parallel_store__i32x1_i32x1_si32_1024",
    "test_loop_split__loop_carried_condition_kernel__i32x1_si32",
    "test_gather_scatter__array_copy_1d__i16x1_f16x1_128",
    "test_array__int64_index_inc1__i8x2_i8x2_2048",
    "test_reshape__reshape_copy__bf16x1_bf16x2_128_128_F",
    "test_gather_scatter__array_copy_2d__f16x2_f16x2_64_64",
    "test_atomic__atomic_cas__f32x1_i16x1_f32x1_128_T",
    "test_raw_array_memory__copy_via_raw_array_memory_1d__bf16x1_bf16x1_128",
    "test_insert__insert_dynamic_index__f16x1_i32x1_f16x1_128_32",
    "test_assert__kernel_ct_assert_with_msg__f32x1_b1x1_f32x1_128",
]

@pytest.mark.parametrize("name", SAMPLE)
def test_cutile_tests_sample(name):
    module, kernel, grid, args = cutile_tests_case(name)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    printed = PrintLog()
    try:
        nanotile.run(module, kernel, grid, *want, out=printed)
    except InterpError as e:
        pytest.skip(f"the interpreter cannot run it on generated inputs: {e}")
    for target in TARGETS:
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        log = PrintLog()
        nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name=target, out=log)
        assert print_difference(log, printed, target) is None
        diff = first_difference(got, want, target)
        # a float reduce/scan may combine in another legal order, and the tensor cores
        # round mmaf's sums their own way: then the interpreter folding in that order, or
        # summing as the tensor cores do, must give the same result (no wider tolerance)
        assert diff is None or order_explains(module, kernel, grid, args, got, target) \
            or tensor_cores_explain(module, kernel, grid, args, got, target), diff


def test_make_inputs_sizes_pointer_arrays_and_keeps_indices_in_range():
    from nanotile.passes.semantics import index_parameters, make_inputs, pointer_tiles

    module, kernel, grid, args = cutile_tests_case(
        "test_gather_scatter__array_copy_2d__f16x2_f16x2_64_64")
    entry = module.entries()[0]
    assert set(pointer_tiles(entry).values()) == {(64, 64)}  # no tensor views: pointer tiles
    assert args[0].shape == (128, 128) and list(args[1:5]) == [128, 128, 128, 1]
    assert grid == (2, 2, 1)

    module, kernel, grid, args = cutile_tests_case(
        "test_insert__insert_dynamic_index__f16x1_i32x1_f16x1_128_32")
    entry = module.entries()[0]
    assert index_parameters(entry) == {entry.regions[0].block.arguments[3]}
    assert args[3].dtype == np.int32 and set(np.unique(args[3])) <= {0, 1}
    again = make_inputs(entry, np.random.default_rng(0))[1]  # deterministic
    assert all(np.array_equal(a, b) for a, b in zip(args, again))
    nanotile.run(module, kernel, grid, *args, out=io.StringIO())

    module, kernel, grid, args = cutile_tests_case(
        "test_assert__kernel_ct_assert_with_msg__f32x1_b1x1_f32x1_128")
    assert args[3].all()  # the mask it asserts


# Kernels that take cuTile lists of arrays (records of element addresses, shapes and
# strides: nanotile.ir.array_list), and that slice an array in a loop. The interpreter
# could not run any of them on make_inputs' arguments: random integers for the records,
# an array too short for the slices.
LISTS_AND_SLICES = [
    "test_list__add_arrays__list_i32x2",
    "test_list__add_arrays_with_0d_tile_index__list_i32x2",
    "test_list__add_arrays_with_const_index__list_i32x2",
    "test_list__add_static_shape_arrays__list_i32x2",
    "test_list__add_static_shape_arrays__list_i32x2.9d58ce",
    "test_cudagraph__list_copy__list_list_8",
    "test_tuple_arguments__test_tuple_arg_contains_list.k__tuplistsi32_f32x1",
    "test_token_order__TestArrayViewMLIR.array_slice_for_loop__i32x1_si32_1024",
    "test_token_order__TestArrayViewMLIR.array_slice_while_loop__i32x1_si32_1024",
]


@pytest.mark.parametrize("name", LISTS_AND_SLICES)
def test_lists_of_arrays_and_slices_run_as_interpreted(name):
    from nanotile.ir.array_list import ArrayList, copy_arguments, output_arrays

    module, kernel, grid, args = cutile_tests_case(name)
    assert any(isinstance(a, ArrayList) for a in args) == ("list" in name)
    want = copy_arguments(args)
    nanotile.run(module, kernel, grid, *want, out=io.StringIO())
    written = [not np.array_equal(w, a) for w, a in zip(output_arrays(want),
                                                         output_arrays(args))]
    assert any(written)
    for target in TARGETS:
        got = copy_arguments(args)
        nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name=target,
                     out=io.StringIO())
        assert first_difference(got, want, target) is None


def test_list_copy_writes_the_elements_of_a_list():
    """cuTile's list_copy: element i of the second list gets the first 8 values of
    element i of the first; the written list's elements are outputs, compared."""
    from nanotile.ir.array_list import copy_arguments

    module, kernel, grid, args = cutile_tests_case("test_cudagraph__list_copy__list_list_8")
    for device in ("interp", "emulator"):
        got = copy_arguments(args)
        nanotile.run(module, kernel, grid, *got, device=device, out=io.StringIO())
        for source, copied, before in zip(args[0].arrays, got[2].arrays, args[2].arrays):
            assert np.array_equal(copied[:8], source[:8])
            assert np.array_equal(copied[8:], before[8:])
    wrong = copy_arguments(args)
    nanotile.run(module, kernel, grid, *wrong, out=io.StringIO())
    wrong[2].arrays[1][3] += 1
    assert "argument 2 element 1" in first_difference(wrong, got, "list")


@pytest.mark.parametrize("target", TARGETS)
def test_list_elements_are_read_and_written_through_their_records(target):
    """A list of 2-D arrays whose rows are padded apart (div_by<16> on the row stride),
    record 4 of 5 read: the emulator reads and writes the elements the interpreter does."""
    from nanotile.ir.array_list import copy_arguments, output_arrays
    from nanotile.passes.semantics import make_inputs

    from tests.passes.test_semantics_inputs import LIST

    module = nanotile.parse(LIST, "list.mlir")
    grid, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    want, got = copy_arguments(args), copy_arguments(args)
    nanotile.run(module, "k", grid, *want)
    nanotile.run(module, "k", grid, *got, device="emulator", gpu_name=target)
    assert first_difference(got, want, target) is None
    written = [not np.array_equal(a, b) for a, b in zip(output_arrays(got),
                                                        output_arrays(args))]
    assert written == [False] * 4 + [True] * 2  # element 4 of 5, then %out


@pytest.mark.parametrize("device", ["interp", "emulator"])
def test_the_records_hold_the_addresses_the_runner_gave_the_elements(device):
    """The records a kernel reads (copied out by it as they are): each element's address
    (256-byte aligned, in the runner's memory, distinct), then its shape and strides."""
    from nanotile.interp.memory import FIRST_ADDRESS
    from nanotile.ir.array_list import ArrayList
    from nanotile.ptxemu.memory import GLOBAL_BASE

    from tests.passes.test_semantics_inputs import RECORDS

    module = nanotile.parse(RECORDS, "records.mlir")
    elements = ArrayList([np.arange(8, dtype=np.float32), np.arange(16, dtype=np.float32),
                          np.arange(4, dtype=np.float32)], shapes=[[8], [8], [4]],
                         strides=[[1], [2], [1]])
    out = np.zeros((3, 3), np.int64)
    nanotile.run(module, "records", 1, elements, np.int32(3), out, np.int32(3), device=device)
    assert out[:, 1:].tolist() == [[8, 1], [8, 2], [4, 1]]
    addresses = out[:, 0].tolist()
    assert len(set(addresses)) == 3 and all(a % 256 == 0 for a in addresses)
    assert min(addresses) >= (FIRST_ADDRESS if device == "interp" else GLOBAL_BASE)


def test_a_list_is_passed_only_for_a_pointer_to_i64():
    from nanotile.ir.array_list import ArrayList

    module = nanotile.parse(SAMPLE_POINTER_KERNEL, "k.mlir")
    for device in ("interp", "emulator"):
        with pytest.raises(InterpError, match="a list of arrays passed for tile<ptr<f32>>"):
            nanotile.run(module, "k", 1, ArrayList([np.zeros(4, np.float32)]),
                         device=device)


SAMPLE_POINTER_KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>) {
    %v, %t = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    return
  }
}
"""


# Float reductions whose emulated result differs from the interpreter's pairwise tree only
# by the order of combination: the spec's sequential fold reproduces them bit for bit.
# (Long reductions, such as the 512x128 f16 sum, are reduced by the back end in a tree of
# its own: per thread, across lanes, across warps, which neither order reproduces.)
ORDER = [
    "test_reduction__make_sumprod_rounding_mode.kernel-sum-RP__f32x2_f32x2_16_128",
    "test_reduction__test_custom_reduction_welford.kernel__f32x1_f32x1_f32x1.13_3",
]


@pytest.mark.parametrize("name", ORDER)
def test_reduction_order_is_the_only_difference(name):
    from nanotile.compare import float_reduction_feeds_output, fold_order_run

    module, kernel, grid, args = cutile_tests_case(name)
    assert float_reduction_feeds_output(module.entries()[0])
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *want, out=io.StringIO())
    fold = fold_order_run(module, kernel, grid, args)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name="sm_90")
    assert first_difference(got, want, "tree order") is not None  # the tree differs ...
    for g, f in zip(got, fold):  # ... the fold is the back end's result, bit for bit
        if isinstance(g, np.ndarray):
            np.testing.assert_array_equal(g, f)


def _exact_row_sums(x: np.ndarray, rows: int, cols: int) -> list:
    from fractions import Fraction

    return [sum(Fraction(float(v)) for v in x[i, :cols]) for i in range(rows)]


def _run_ptx_text(ptx: str, kernel: str, grid, args: list) -> list:
    from nanotile.ptxemu import run_ptx

    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_ptx(ptx, kernel, grid=grid, args=got)
    return got


def test_reduction_order_check_catches_a_wrong_rounding_direction():
    """A sum with rounding<positive_inf> is >= the exact sum in any order (each rounded
    partial sum is >= its exact value). The emulated PTX is; the same PTX with add.rm for
    add.rp is below it, and neither the tree nor the fold comparison accepts it."""
    from nanotile.targets.compile import compile_to_ptx

    name = "test_reduction__make_sumprod_rounding_mode.kernel-sum-RP__f32x2_f32x2_16_128"
    module, kernel, grid, args = cutile_tests_case(name)
    ptx = compile_to_ptx(copy.deepcopy(module), "sm_90")
    assert "add.rp.f32" in ptx
    exact = _exact_row_sums(args[0], 32, 128)
    good = _run_ptx_text(ptx, kernel, grid, args)
    assert all(float(v) >= e for v, e in zip(good[5].reshape(-1)[:32], exact))
    # within (n - 1) eps sum|x| of the exact sum, as the interpreter's tree is
    tree = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *tree, out=io.StringIO())
    eps = float(np.finfo(np.float32).eps)
    for i in range(32):
        bound = 127 * eps * float(np.abs(args[0][i, :128].astype(np.float64)).sum())
        for result in (good, tree):
            assert 0 <= float(result[5].reshape(-1)[i]) - float(exact[i]) <= bound
    assert order_explains(module, kernel, grid, args, good, "rp")
    bad = _run_ptx_text(ptx.replace("add.rp.f32", "add.rm.f32"), kernel, grid, args)
    assert any(float(v) < e for v, e in zip(bad[5].reshape(-1)[:32], exact))
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *want, out=io.StringIO())
    assert first_difference(bad, want, "rm") is not None
    assert not order_explains(module, kernel, grid, args, bad, "rm")


# Regression: lower_math once narrowed f16/bf16 results with cvt.rn after add.rp.f32, so an
# RP sum could end below the exact sum.
@pytest.mark.parametrize("name", [
    "test_reduction__make_sumprod_rounding_mode.kernel-sum-RP__f16x2_f16x2_16_128",
    "test_reduction__make_sumprod_rounding_mode.kernel-sum-RP__bf16x2_bf16x2_16_128",
])
def test_directed_rounding_of_half_precision_sums(name):
    module, kernel, grid, args = cutile_tests_case(name)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name="sm_90")
    exact = _exact_row_sums(args[0], 32, 128)
    assert all(float(v) >= e for v, e in zip(got[5].reshape(-1)[:32], exact))


def test_integer_reductions_are_not_order_dependent():
    from nanotile.compare import float_reduction_feeds_output

    module, *_ = cutile_tests_case(
        "test_reduction__make_reduce_axis1_3d.kernel-argmin__i16x3_i32x2_16_4_4_F")
    assert not float_reduction_feeds_output(module.entries()[0])


# Kernels that print (print_tko -> one vprintf per CTA): the emulated text is the
# interpreter's, byte for byte (tiles, f16/bf16/i8/i64 elements, %a, %%, escapes, no
# newline at the end, two tile blocks).
PRINTS = [
    "test_print__kernel_print__f32x1_8",
    "test_print__kernel_printf__bf16x1_8",
    "test_print__kernel_builtin_print__i8x1_8",
    "test_print__kernel_print__i64x1_8",
    "test_print__kernel_fstring_nested__f32x1_8",
    "test_print__kernel_print_no_end__i32x1_8",
    "test_print__kernel_print_ordering__i32x1_8",
    "test_print__kernel_print_tuple_escaped_str__i32x2_2",
    "test_typeinfer__test_printf_format.print_kernel__noargs",
]


@pytest.mark.parametrize("name", PRINTS)
def test_printed_text_matches(name):
    module, kernel, grid, args = cutile_tests_case(name)
    printed = PrintLog()
    nanotile.run(module, kernel, grid, *copy.deepcopy(args), out=printed)
    assert printed.getvalue()
    for target in TARGETS:
        log = PrintLog()
        nanotile.run(module, kernel, grid, *copy.deepcopy(args), device="emulator",
                     gpu_name=target, out=log)
        assert log.getvalue() == printed.getvalue(), target


def test_print_difference():
    a, b, c = PrintLog(), PrintLog(), PrintLog()
    for log, parts in ((a, ["x=[1, 2]\n", "x=[3, 4]\n"]), (b, ["x=[3, 4]\n", "x=[1, 2]\n"]),
                       (c, ["x=[1, 2]\n", "x=[3, 5]\n"])):
        for p in parts:
            log.write(p)
    assert print_difference(a, a, "t") is None
    assert print_difference(b, a, "t") is None  # another order of tile blocks
    assert "character 15" in print_difference(c, a, "t")


@pytest.mark.parametrize("value, spec, text", [
    (8.0, "", "0x1p+3"), (3.14, "", "0x1.91eb851eb851fp+1"), (0.0, "", "0x0p+0"),
    (-0.0, "", "-0x0p+0"), (1e-310, "", "0x0.012688b70e62bp-1022"), (3.14, ".3", "0x1.91fp+1"),
    (1.99999, ".2", "0x2.00p+0"), (3.14, "+", "+0x1.91eb851eb851fp+1"),
    (8.0, "#", "0x1.p+3"), (8.0, "012", "0x0000001p+3"), (8.0, "-8", "0x1p+3  "),
    (float("-inf"), "6", "  -inf"),
])
def test_hex_float_is_c_printf(value, spec, text):
    """%a as glibc's printf writes it (checked against cc); the interpreter and the
    emulator's vprintf share it."""
    from nanotile.interp.ops_shape import c_hex_float

    assert c_hex_float(value, spec) == text
    assert c_hex_float(value, spec, upper=True) == text.upper()


def test_cli_emulate_prints_what_the_interpreter_prints():
    src = str(shared_file(TESTS_CORPUS / "test_typeinfer__test_printf_format.print_kernel__"
                                         "noargs.tileirbc"))
    interp = _cli(src, "--grid", "1")
    assert interp.returncode == 0, interp.stderr
    assert "0x1p+3" in interp.stdout and "escape % 123" in interp.stdout
    for target in TARGETS:
        emulated = _cli(src, "--grid", "1", "--emulate", f"--gpu-name={target}")
        assert emulated.returncode == 0, emulated.stderr
        assert emulated.stdout == interp.stdout


def test_module_is_not_changed_and_bad_device_is_an_error():
    from nanotile.diagnostics import CompileError
    from nanotile.ir.printer import print_module

    module = nanotile.load(str(EXAMPLES / "axpy.tileirbc"))  # out = alpha * x + y
    before = print_module(module)
    a = np.arange(1000, dtype=np.float32)
    c = np.zeros_like(a)
    args = cutile_args(a, a, c, np.float32(2))
    nanotile.run(module, "axpy", 8, *args, device="emulator")
    np.testing.assert_array_equal(c, 3 * a)
    assert print_module(module) == before  # the back end's pipeline ran on a copy
    with pytest.raises(InterpError, match="unknown device 'gpu'"):
        nanotile.run(module, "axpy", 8, *args, device="gpu")
    with pytest.raises(CompileError, match="unknown --gpu-name 'sm_80'"):
        nanotile.run(module, "axpy", 8, *args, device="emulator", gpu_name="sm_80")
    with pytest.raises(InterpError, match="no kernel named 'nope'"):
        nanotile.run(module, "nope", 2, device="emulator")


def _cli(*argv: str) -> subprocess.CompletedProcess:
    code = "import sys; from nanotile.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "run", *argv], cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.parametrize("target", TARGETS)
def test_cli_emulate(tmp_path, target):
    src = str(EXAMPLES / "matmul_f16.tileirbc")  # c = a @ b, 32 x 32 tiles of c
    rng = np.random.default_rng(3)  # small integers: the f16 product is exact
    a = rng.integers(-3, 4, (64, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 96)).astype(np.float16)
    np.savez(tmp_path / "in.npz", a=a, b=b, c=np.zeros((64, 96), np.float16))
    out = tmp_path / "out.npz"
    proc = _cli(src, f"--gpu-name={target}", "--emulate", "--kernel", "matmul_f16",
                "--grid", "2,3", "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out))
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as data:
        np.testing.assert_array_equal(data["c"], (a.astype(np.float32) @ b).astype(np.float16))
        np.testing.assert_array_equal(data["a"], a)


@pytest.mark.parametrize("extra, message", [
    (["--gpu-name=sm_80", "--emulate"], "unknown --gpu-name 'sm_80'"),
    (["--gpu-name=sm_90"], "--gpu-name needs --emulate"),
    (["--emulate", "--kernel", "nope"], "no kernel named 'nope'"),
    (["--emulate", "--abi", "raw"], "takes 15 arguments, 3 given"),
])
def test_cli_errors_are_clean(tmp_path, extra, message):
    src = str(EXAMPLES / "matmul_f16.tileirbc")
    np.savez(tmp_path / "in.npz", a=np.zeros((64, 32), np.float16),
             b=np.zeros((32, 64), np.float16), c=np.zeros((64, 64), np.float16))
    out = tmp_path / "out.npz"
    proc = _cli(src, "--grid", "2,2", "--inputs", str(tmp_path / "in.npz"),
                "--outputs", str(out), *extra)
    assert proc.returncode in (1, 2)
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    assert not list(tmp_path.glob("*.npz.*")) and sorted(p.name for p in tmp_path.iterdir()) \
        == ["in.npz"]


def test_tensor_core_rounding_is_explained_not_hidden(tmp_path, capsys):
    """wgmma keeps 13 bits of FP8 sums (nanotile.ptxemu.tensor_core_sums, measured on an
    H200): the emulated FP8 matmul differs from the interpreter's exact sums beyond f32's
    ulps, the interpreter summing as wgmma gives it bit for bit, a wrong result is not
    explained, and --check-semantics accepts the compiled kernel."""
    import ml_dtypes

    from nanotile import cli_options
    from nanotile.compare import tensor_core_run, tensor_cores_explain
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    from .test_mma import mma_kernel

    text = mma_kernel(0, 64, 64, 64, "f8E4M3FN", "f32")
    module = parse_text(text, "<k>")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((64, 64)).astype(ml_dtypes.float8_e4m3fn),
            rng.standard_normal((64, 64)).astype(ml_dtypes.float8_e4m3fn),
            rng.standard_normal((64, 64)).astype(np.float32), np.zeros((64, 64), np.float32)]
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in ptx
    got = _run_ptx_text(ptx, "k", (1,), args)
    exact = [a.copy() for a in args]
    nanotile.run(module, "k", (1,), *exact)
    assert first_difference(got, exact, "sm_90") is not None
    want = tensor_core_run(module, "k", (1,), args, "wgmma")
    np.testing.assert_array_equal(got[3].view(np.uint32), want[3].view(np.uint32))
    assert tensor_cores_explain(module, "k", (1,), args, got, "sm_90")
    wrong = [a.copy() for a in got]
    wrong[3][5, 7] += 2.0 ** -6 * abs(float(wrong[3][5, 7]))
    assert not tensor_cores_explain(module, "k", (1,), args, wrong, "sm_90")
    source = tmp_path / "fp8.mlir"
    source.write_text(text)
    status = cli_options.main([str(source), "--gpu-name", "sm_90", "--check-semantics",
                               "-o", str(tmp_path / "fp8.ptx")])
    assert status == 0, capsys.readouterr().err
