"""Vector memory accesses where tileiras makes them: for the corpus kernels with
tileiras' PTX beside them (corpus/cutile/ptx), nanotile's PTX has at least as many
vector accesses of each kind (ld/st, global/shared) as tileiras', and no more scalar
ones of a kind tileiras vectorises. A 2-D insert (cutile-tests) loads and stores its
128x128 f32 tiles as 16-byte vectors, 32 per thread each way, and moves them through
shared memory as 16-byte vectors too, as tileiras does; so does a 2-D extract."""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

import pytest

from nanotile.loader import load_file
from nanotile.targets.compile import compile_to_ptx

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ACCESS = re.compile(r"\b(ld|st)(?:\.weak|\.relaxed\.gpu|\.acquire\.gpu|\.release\.gpu)?"
                    r"\.(global|shared)(?:::cta)?(?:\.nc)?(\.v[248])?\.")


def accesses(ptx: str) -> collections.Counter:
    """(ld|st, global|shared, vector width) -> how many instructions."""
    return collections.Counter((m.group(1), m.group(2), int((m.group(3) or ".v1")[2:]))
                               for m in ACCESS.finditer(ptx))


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["vector_add", "layernorm", "transpose"])
def test_vector_accesses_where_tileiras_has_them(name, gpu):
    path = CORPUS / "cutile" / f"{name}.tileirbc"
    reference = CORPUS / "cutile" / "ptx" / f"{name}.{gpu}.ptx"
    if not path.exists() or not reference.exists():
        pytest.skip("../shared/corpus/cutile not found")
    ours = accesses(compile_to_ptx(load_file(str(path)), gpu))
    theirs = accesses(reference.read_text())
    for (kind, space, width), count in theirs.items():
        if width > 1:
            assert ours[kind, space, width] >= count, (kind, space, width, ours, theirs)
            assert ours[kind, space, 1] <= theirs[kind, space, 1], (kind, space, ours, theirs)


def compile_without(path: Path, gpu: str, left_out: str) -> str:
    """PTX of the kernel at ``path`` through the default pipeline less pass ``left_out``
    (to reach the code that pass would otherwise have replaced)."""
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = load_file(str(path))
    steps = [step for step in parse_pipeline(default_pipeline(gpu)) if step.name != left_out]
    PipelineRun(RunOptions(verify=False), sys.stderr).run(module, steps)
    return module.ptx.render()


INSERT_2D = "test_insert__insert_2d__f32x2_f32x2_128_128_64_32_1_2"


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_2d_insert_moves_its_tiles_as_vectors(gpu):
    """split-accesses stores the inserted part and the pieces around it by themselves:
    vectors from global memory to global memory. Without it, the insert gathers its
    operands through shared memory, in vectors too."""
    path = CORPUS / "cutile-tests" / f"{INSERT_2D}.tileirbc"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    ours = accesses(compile_to_ptx(load_file(str(path)), gpu))
    assert ours["ld", "global", 4] > 0 and ours["st", "global", 4] > 0, ours
    assert ours["ld", "global", 1] == 0 and ours["st", "global", 1] == 0, ours
    assert not any(space == "shared" for _, space, _ in ours), ours
    gathered = accesses(compile_without(path, gpu, "split-accesses"))
    assert gathered["ld", "global", 4] == 32 and gathered["st", "global", 4] == 32, gathered
    assert gathered["ld", "global", 1] == 0 and gathered["st", "global", 1] == 0, gathered
    assert gathered["st", "shared", 4] > 0 and gathered["ld", "shared", 4] > 0, gathered


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name, vectors", [
    # tileiras' SASS (sm_90): LDS.128 x 64, STS.128 x 64, nothing scalar. Ours, without
    # split-accesses (with it: no shared memory, above): the loaded tile stored twice (for
    # the extract, for the insert: 32 + 32), the extracted 64x32 tile 4, and the extract
    # (4) and insert (32 from each operand) gathers
    (INSERT_2D, 68),
    # tileiras keeps this one in registers: no shared memory at all; so do we, since
    # split-accesses loads each extracted half by itself (it was 96 vectors each way)
    ("test_extract__extract_2d__f32x2_f32x2_128_128", 0),
])
def test_extract_and_insert_gather_shared_memory_as_vectors(name, vectors, gpu):
    """extract / insert read their shared operands in runs of 4 consecutive elements (one
    ld.shared.v4 each, distribute_gather.run_length) and their results are laid out in
    such runs, so that nothing moves through shared memory one element at a time."""
    path = CORPUS / "cutile-tests" / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    ours = accesses(compile_without(path, gpu, "split-accesses") if name == INSERT_2D else
                    compile_to_ptx(load_file(str(path)), gpu))
    assert ours["ld", "shared", 1] == 0 and ours["st", "shared", 1] == 0, ours
    assert ours["ld", "shared", 4] == vectors and ours["st", "shared", 4] == vectors, ours


# A 64x64 copy through column-major views (strides [1, ld]): the tile is contiguous along
# its first dimension, as cuTile's views of a transposed or Fortran-ordered array are.
COLUMN_MAJOR_COPY = """
cuda_tile.module @m {
  entry @k(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %m: tile<i32>, %n: tile<i32>,
           %ld: tile<i32>) {
    %a = assume div_by<16>, %src : tile<ptr<f32>>
    %b = assume div_by<16>, %dst : tile<ptr<f32>>
    %rows = assume div_by<16>, %m : tile<i32>
    %lead = assume div_by<4>, %ld : tile<i32>
    %sv = make_tensor_view %a, shape = [%rows, %n], strides = [1, %lead]
        : tile<i32> -> tensor_view<?x?xf32, strides=[1,?]>
    %dv = make_tensor_view %b, shape = [%rows, %n], strides = [1, %lead]
        : tile<i32> -> tensor_view<?x?xf32, strides=[1,?]>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %sp = make_partition_view %sv : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[1,?]>>
    %t, %tok = load_view_tko weak %sp[%x, %y]
        : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[1,?]>>, tile<i32>
        -> tile<64x64xf32>, token
    %dp = make_partition_view %dv : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[1,?]>>
    %done = store_view_tko weak %t, %dp[%x, %y]
        : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[1,?]>>,
          tile<i32> -> token
    return
  }
}
"""


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_column_major_copy_moves_vectors_down_its_columns(gpu):
    """Threads and vectors follow the dimension contiguous in memory
    (contiguity.access_dim): 4096 elements over 128 threads, each moving 8 runs of 4
    consecutive rows with one 16-byte access, where a row-major layout would move one
    element per access, 32 times (strip-mine makes that a loop over two 64x32 strips, cut
    across the columns: 4 of each access in its body); the copy reads and writes what
    NumPy's does."""
    import numpy as np

    import nanotile
    from nanotile.ir.parser import parse_text

    ours = accesses(compile_to_ptx(parse_text(COLUMN_MAJOR_COPY, "<k>"), gpu))
    assert ours["ld", "global", 4] == 4 and ours["st", "global", 4] == 4, ours
    assert ours["ld", "global", 1] == 0 and ours["st", "global", 1] == 0, ours
    rows, columns, lead = 128, 96, 132  # the last column block is partly out of bounds
    source = np.arange(lead * columns, dtype=np.float32)
    target = np.zeros(lead * columns, dtype=np.float32)
    nanotile.run(parse_text(COLUMN_MAJOR_COPY, "<k>"), "k", (2, 2, 1), source, target,
                 rows, columns, lead, device="emulator", gpu_name=gpu)
    want = np.zeros_like(target).reshape(columns, lead)
    want[:, :rows] = source.reshape(columns, lead)[:, :rows]
    assert np.array_equal(target.reshape(columns, lead), want)


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["test_copy__array_copy_3d__f32x3_f32x3_128_128_1.1c1dd2",
                                  "test_copy__array_copy_3d__b1x3_b1x3_128_128_1"])
def test_a_3d_copy_of_column_major_views_moves_vectors(name, gpu):
    """cutile-tests' array_copy_3d views its arrays with strides [1, ?, ?]: tileiras loads
    its 128x128x1 f32 tile with LDG.E.128 (cuobjdump -sass); we load and store it 4
    elements per access, 32 per thread (a loop over 8 strips of 128x16x1: 4 in its
    body), and its tile of bools too (the bools it stores are not a mask: they do not
    limit the vector)."""
    path = CORPUS / "cutile-tests" / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    ours = accesses(compile_to_ptx(load_file(str(path)), gpu))
    assert ours["ld", "global", 4] == 4 and ours["st", "global", 4] == 4, ours
    assert ours["ld", "global", 1] == 0 and ours["st", "global", 1] == 0, ours
