"""The ``filecheck`` package with LLVM FileCheck's range for CHECK-NOT.

LLVM's FileCheck looks for a CHECK-NOT pattern between the previous match and the
*start* of the next positive match; filecheck 1.0.x searches up to that match's *end*,
so ``CHECK-NOT: if`` fails when the next ``CHECK-LABEL: @inner_if`` line itself contains
"if" (cuda-tile's Transforms/loop_split.mlir does this). The runner calls this module in
place of ``python -m filecheck``: it records where each positive match starts and
narrows the CHECK-NOT range to end there. Everything else is the package's own code.
"""

from __future__ import annotations

import sys

from filecheck import matcher
from filecheck.main import main

_Matcher = matcher.Matcher
_package_post_check = _Matcher._post_check


def _recording_match_starts(method):
    """Wrap a positive-match method so that the start of what it matched is kept."""

    def wrapped(self, op):
        searches = {name: getattr(self.file, name) for name in ("find", "match")}

        def recording(search):
            def run(*args, **kwargs):
                found = search(*args, **kwargs)
                if found is not None:
                    self.llvm_match_start = found.start()
                return found
            return run

        for name, search in searches.items():
            setattr(self.file, name, recording(search))
        try:
            return method(self, op)
        finally:
            for name in searches:
                delattr(self.file, name)  # back to the class's methods

    return wrapped


def _post_check(self, op) -> None:
    start = getattr(self, "llvm_match_start", None)
    self.llvm_match_start = None
    pending_nots = self.ctx.negative_matches_start is not None
    if op.name in ("CHECK", "NEXT", "SAME") and pending_nots and start is not None:
        after_match = self.file.range.start
        self.file.range.start = start  # the CHECK-NOTs end where this match begins
        try:
            _package_post_check(self, op)
        finally:
            self.file.range.start = after_match
        return
    _package_post_check(self, op)


_Matcher.match_eventually = _recording_match_starts(_Matcher.match_eventually)
_Matcher.match_immediately = _recording_match_starts(_Matcher.match_immediately)
_Matcher._post_check = _post_check

if __name__ == "__main__":
    sys.exit(main())
