"""Vector memory accesses where tileiras makes them: for the corpus kernels with
tileiras' PTX beside them (corpus/cutile/ptx), nanotile's PTX has at least as many
vector accesses of each kind (ld/st, global/shared) as tileiras', and no more scalar
ones of a kind tileiras vectorises. A 2-D insert (cutile-tests) loads and stores its
128x128 f32 tiles as 16-byte vectors, 32 per thread each way, and moves them through
shared memory as 16-byte vectors too, as tileiras does; so does a 2-D extract."""

from __future__ import annotations

import collections
import re
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


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_2d_insert_moves_its_tiles_as_vectors(gpu):
    path = CORPUS / "cutile-tests" / \
        "test_insert__insert_2d__f32x2_f32x2_128_128_64_32_1_2.tileirbc"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    ours = accesses(compile_to_ptx(load_file(str(path)), gpu))
    assert ours["ld", "global", 4] == 32 and ours["st", "global", 4] == 32
    assert ours["ld", "global", 1] == 0 and ours["st", "global", 1] == 0
    assert ours["st", "shared", 4] > 0 and ours["ld", "shared", 4] > 0


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name, vectors", [
    # tileiras' SASS (sm_90): LDS.128 x 64, STS.128 x 64, nothing scalar. Ours: the
    # loaded tile stored twice (for the extract, for the insert: 32 + 32), the extracted
    # 64x32 tile 4, and the extract (4) and insert (32 from each operand) gathers
    ("test_insert__insert_2d__f32x2_f32x2_128_128_64_32_1_2", 68),
    # (tileiras keeps this one in registers: no shared memory at all)
    ("test_extract__extract_2d__f32x2_f32x2_128_128", 96),
])
def test_extract_and_insert_gather_shared_memory_as_vectors(name, vectors, gpu):
    """extract / insert read their shared operands in runs of 4 consecutive elements (one
    ld.shared.v4 each, distribute_gather.run_length) and their results are laid out in
    such runs, so that nothing moves through shared memory one element at a time."""
    path = CORPUS / "cutile-tests" / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    ours = accesses(compile_to_ptx(load_file(str(path)), gpu))
    assert ours["ld", "shared", 1] == 0 and ours["st", "shared", 1] == 0, ours
    assert ours["ld", "shared", 4] == vectors and ours["st", "shared", 4] == vectors, ours
