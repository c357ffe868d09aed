"""The test session sees the whole compiler: importing nanotile.targets registers the back
end's passes and languages with nanotile.passes, as the command-line tools do."""

import nanotile.targets  # noqa: F401

# No test asserts a wall-clock time (speed is measured in bench/): Hypothesis' default
# deadline of 200 ms per example would fail a property test on a busy machine.
try:
    from hypothesis import settings
except ImportError:  # the property tests skip without it
    pass
else:
    settings.register_profile("nanotile", deadline=None)
    settings.load_profile("nanotile")
