"""The test session sees the whole compiler: importing nanotile.targets registers the back
end's passes and languages with nanotile.passes, as the command-line tools do."""

import nanotile.targets  # noqa: F401
