"""The text of a layout attribute (below the tile level), read into a ``Layout``.

The grammar reads a tile type's layout as one LAYOUT token (``#name`` with an optional
``<...>`` body, brackets balanced) and hands its text here together with the tile's
element count; so a new layout kind, or a new spelling, changes this file and
nanotile/ir/layouts.py, not the grammar. Printing is ``str(layout)`` (layouts.py).
"""

from __future__ import annotations

import re

from .layouts import Layout


class LayoutError(ValueError):
    """A layout the text cannot have (the message is shown to the user as is)."""


_LAYOUT = re.compile(r"#(?P<kind>[A-Za-z_][\w.]*)\s*(?:<(?P<body>.*)>)?\s*\Z", re.DOTALL)
_FIELD = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(\?|\d+)\s*\Z")


def parse_layout(text: str, elements: int) -> Layout:
    """``#blocked<threads=128, slots=1>`` in a tile of ``elements`` elements."""
    m = _LAYOUT.match(text)
    if m is None:
        raise LayoutError(f"expected a layout such as #blocked<...>, got '{text}'")
    kind, body = m["kind"], m["body"]
    fields = _fields(body or "", text)
    if kind == "replicated" and body is None:
        if elements != 1:
            raise LayoutError(f"#replicated is the layout of one-element tiles, not of "
                              f"{elements} elements")
        return Layout("replicated", 1)
    if kind == "shared" and set(fields) == {"offset"}:
        return Layout("shared", elements, 0, fields["offset"])
    if kind == "blocked" and set(fields) == {"threads", "slots"}:
        threads, slots = fields["threads"], fields["slots"]
        if not threads:
            raise LayoutError("#blocked needs threads > 0")
        layout = Layout("blocked", elements, threads)
        if layout.slots != slots:
            raise LayoutError(f"#blocked<threads={threads}, slots={slots}> does not fit a "
                              f"tile of {elements} elements (slots={layout.slots})")
        return layout
    raise LayoutError(f"unknown layout '{text}' (known: #replicated, "
                      "#blocked<threads=T, slots=S>, #shared<offset=B or ?>)")


def _fields(body: str, text: str) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for part in body.split(",") if body.strip() else []:
        m = _FIELD.match(part)
        if m is None:
            raise LayoutError(f"expected name=number in layout '{text}', got '{part.strip()}'")
        out[m[1]] = None if m[2] == "?" else int(m[2])
    return out
