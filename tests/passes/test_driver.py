"""The pipeline flags through the ``nanotile`` command itself (nanotile.cli -> driver),
once the driver wires nanotile.passes.cli_options in."""

from __future__ import annotations

from pathlib import Path

import pytest

import nanotile
from nanotile.passes.pipelines import default_pipeline

from .support import needs_text
from .test_cli import LAYERNORM, reparse, split_dumps

DRIVER = Path(nanotile.__file__).parent / "driver.py"
wired = pytest.mark.skipif(not DRIVER.exists() or "cli_options" not in DRIVER.read_text(),
                           reason="nanotile/driver.py does not use nanotile.passes.cli_options "
                                  "yet")


def nanotile_main(capsys, *argv: str) -> tuple[int, str, str]:
    from nanotile.cli import main

    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@wired
@needs_text
def test_nanotile_dump_after_all_prints_every_stage_that_reparses(capsys):
    from nanotile.passes.manager import step_output
    from nanotile.passes.registry import parse_pipeline

    status, out, err = nanotile_main(capsys, LAYERNORM, "--dump-after=all")
    assert status == 0, err
    dumps = split_dumps(err)
    assert [name for _, name, _ in dumps] == \
        [s.spelling() for s in parse_pipeline(default_pipeline())]
    language = "tile"
    for (_, name, text), step in zip(dumps, parse_pipeline(default_pipeline()), strict=True):
        language = step_output(step, language)
        reparse(text, language, f"<after {name}>")
    assert dumps[-1][2].strip() == out.strip()  # --emit=text of a PTX stage prints PTX
    assert ".visible .entry rms_norm(" in out


@wired
def test_nanotile_listings_need_no_input(capsys):
    status, out, _ = nanotile_main(capsys, "--list-passes")
    assert status == 0 and "loop-invariant-code-motion" in out
    status, out, _ = nanotile_main(capsys, "--print-language", "tile-canon")
    assert status == 0 and out.startswith("language tile-canon extends tile")
    status, out, _ = nanotile_main(capsys, "--diff-languages", "tile", "tile-canon")
    assert status == 0 and "- op assume" in out


@wired
@needs_text
def test_nanotile_without_pipeline_flags_prints_the_input_unchanged(capsys):
    status, out, _ = nanotile_main(capsys, LAYERNORM)
    assert status == 0 and "assume div_by<16>" in out


@wired
def test_nanotile_pipeline_errors_are_diagnostics(capsys):
    status, _, err = nanotile_main(capsys, LAYERNORM, "-p", "cse,nope")
    assert status == 1 and "unknown pass 'nope'" in err and "Traceback" not in err



def test_closed_pipe_is_not_a_traceback(monkeypatch, tmp_path):
    """`nanotile --list-passes | head -1`: the reader leaves early, so a write raises
    BrokenPipeError; the command stops quietly with 141 (128 + SIGPIPE), no traceback."""
    from nanotile.cli import main

    sink = open(tmp_path / "sink", "w")  # noqa: SIM115 - its descriptor is redirected

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            pass

        def fileno(self) -> int:
            return sink.fileno()

    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert main(["--list-passes"]) == 141
    sink.close()
