"""The test session sees the whole compiler: importing nanotile.targets registers the back
end's passes and languages with nanotile.passes, as the command-line tools do.

Tests see nanotile's own bugs as they are: the knob NANOTILE_RAISE_INTERNAL_ERRORS lets an
exception inside a pass or the back end propagate (and the tools run by a test inherit it)
instead of becoming an "internal error" diagnostic (tests/passes/test_internal_error.py
checks that conversion with the knob unset)."""

import os

import nanotile.targets  # noqa: F401
from nanotile import knobs

os.environ.setdefault(knobs.RAISE_INTERNAL_ERRORS, "1")
# The tools a test runs compile in their own process, even where the developer runs a
# compile server (nanotile/server.py; tests/test_server.py starts servers of its own).
os.environ["NANOTILE_NO_SERVER"] = "1"

# No test asserts a wall-clock time (speed is measured in bench/): Hypothesis' default
# deadline of 200 ms per example would fail a property test on a busy machine.
try:
    from hypothesis import settings
except ImportError:  # the property tests skip without it
    pass
else:
    settings.register_profile("nanotile", deadline=None)
    settings.load_profile("nanotile")


def pytest_collection_modifyitems(config, items):
    """Without ../shared, a test parametrised over its files has no parameters and pytest
    skips it as "got empty parameter set": add why (the tests that need the corpus skip)."""
    import pytest

    from tests.shared_corpus import SHARED

    if SHARED.exists():
        return
    for item in items:
        for mark in item.iter_markers("skip"):
            reason = mark.kwargs.get("reason", mark.args[0] if mark.args else "")
            if reason.startswith("got empty parameter set"):
                item.add_marker(pytest.mark.skip(
                    reason=f"{reason}: its parameters are files of ../shared, absent from "
                           f"a fresh clone"), append=False)
                break
