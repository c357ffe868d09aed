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
