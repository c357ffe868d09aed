"""Module-level ``global`` items -> PTX ``.global`` arrays with their initial bytes."""

from __future__ import annotations

from ...ir.core import Module


def globals_text(module: Module) -> str:
    lines = []
    for item in module.items:
        if item.name != "global":
            continue
        a = item.attributes
        name = a["sym_name"]
        value = a["value"]
        count = value.type.num_elements
        width = max(1, -(-value.type.element.bitwidth // 8))
        data = value.data * count if value.splat else value.data
        data = data[:count * width]
        align = int(getattr(a.get("alignment", 8), "value", a.get("alignment", 8)) or 8)
        items = ", ".join(str(b) for b in data)
        lines.append(f".visible .global .align {align} .b8 {name}[{len(data)}] = {{{items}}};")
    return "\n".join(lines) + ("\n" if lines else "")
