"""The pipeline explorer: ``--dump-html=PAGE`` writes one self-contained HTML page about a
pipeline run, to read in a browser without network or server.

The page lists the stages (the input, then every step, with the languages it reads and
writes and its time), charts the ``--time-passes`` figures, shows each stage's IR with its
diff against the stage before (difflib; syntax colours by Pygments, one lexer for Tile IR
below and Pygments' own for PTX), the e-graphs the e-graph passes drew (Graphviz SVG when
``dot`` is installed, else the DOT text, saying so) and the final PTX. Every stage is a
``<details>`` element: opened and closed with a click.

``Recorder`` collects the stages during the run (``RunOptions.on_stage``) and ``write_page``
writes the page whole or not at all (nanotile.output). This module, and Pygments with it,
is imported only when ``--dump-html`` is given: the command line keeps starting fast.
"""

from __future__ import annotations

import base64
import dataclasses
import difflib
import html
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import ClassVar

from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer
from pygments.lexers import PtxLexer
from pygments.token import (
    STANDARD_TYPES,
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from .diagnostics import CompileError, Diagnostic
from .ir.core import Module
from .output import atomic_output
from .passes.base import Pass
from .passes.languages import get_language
from .passes.manager import print_ir, timing_totals

CONTEXT_LINES = 3  # unchanged lines shown around each change of a diff
# The page loads nothing: the policy makes any attempt an error in the browser's console
POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'")
KEYWORDS = (r"\b(cuda_tile\.module|entry|global|return|yield|continue|break|for|loop|if"
            r"|else|in|step)\b")


class TileIrLexer(RegexLexer):
    """Tile IR text (and the tile-level stages below it): Pygments has no MLIR lexer."""

    name = "Tile IR"
    aliases: ClassVar[list[str]] = ["tileir"]
    tokens: ClassVar[dict] = {"root": [
        (r"//.*?$", Comment.Single),
        (r'"(\\.|[^"\\])*"', String),
        (r"%[\w.$#-]+", Name.Variable),
        (r"@[\w.$-]+", Name.Function),
        (r"\^[\w.$-]+", Name.Label),
        (r"\b(tile|ptr|token|tensor_view|partition_view|[if]\d+|bf16|tf32|f8\w*)\b",
         Keyword.Type),
        (KEYWORDS, Keyword),
        (r"(?<== )[a-z_][\w.]*", Name.Builtin),  # the op name after "%x = "
        (r"0x[0-9a-fA-F]+|-?\d+(\.\d+)?([eE][-+]?\d+)?", Number),
        (r"\s+", Whitespace),
        (r"\w[\w.]*", Name),
        (r".", Punctuation),
    ]}


@dataclass
class EGraphPicture:
    """One e-graph an e-graph pass drew: Graphviz's SVG, or None without ``dot``."""

    name: str
    dot: str
    svg: str | None = None


@dataclass
class Stage:
    """The module after one step (number 0 or the --start-after step: the input)."""

    number: int
    name: str           # the step as -p spells it, or "input"
    summary: str        # the pass's description (empty for the input)
    language_in: str
    language: str
    text: str           # the IR as --dump-after prints it
    ptx: bool
    seconds: float = 0.0
    egraphs: list[EGraphPicture] = field(default_factory=list)


class Recorder:
    """Collects the stages of one pipeline run and the e-graphs drawn during it.

    The e-graph passes write their drawings into a folder (--dump-egraph's, else a
    temporary one, removed by ``close``); after each step the files that step wrote
    are picked up, so that a pass that runs twice shows each run's e-graph."""

    def __init__(self, timings: list[tuple[str, float]]) -> None:
        self.stages: list[Stage] = []
        self.timings = timings  # RunOptions.timings, which grows during the run
        self._timings_seen = 0
        self._temporary: str | None = None
        self._folders: dict[str, dict[str, tuple[int, int, int]]] = {}
        self._spellings: dict[int, str] = {}  # id of a step given a folder -> its spelling

    def watch_egraphs(self, steps: list[Pass]) -> list[Pass]:
        """``steps`` with every e-graph pass drawing into a folder this recorder reads."""
        watched: list[Pass] = []
        for step in steps:
            if hasattr(step, "dump_egraph"):
                if not step.dump_egraph:
                    spelling = step.spelling()  # the page shows the step as the user wrote it
                    step = dataclasses.replace(step, dump_egraph=self._temporary_folder())
                    self._spellings[id(step)] = spelling
                self._folders[step.dump_egraph] = _snapshot(step.dump_egraph)
            watched.append(step)
        return watched

    def record(self, number: int, step: Pass | None, language: str, module: Module) -> None:
        """RunOptions.on_stage: keep the module's text after ``step``."""
        language_in = self.stages[-1].language if self.stages else language
        new_timings = self.timings[self._timings_seen:]
        self._timings_seen = len(self.timings)
        seconds = sum(s for name, s in new_timings if step is not None and name == step.name)
        self.stages.append(Stage(
            number, self._spelling(step), step.summary() if step else "",
            language_in, language, print_ir(module), module.ptx is not None, seconds,
            self._new_egraphs()))

    def _spelling(self, step: Pass | None) -> str:
        if step is None:
            return "input"
        return self._spellings.get(id(step)) or step.spelling()

    def close(self) -> None:
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)

    def _temporary_folder(self) -> str:
        if self._temporary is None:
            self._temporary = tempfile.mkdtemp(prefix="nanotile-egraphs-")
        return self._temporary

    def _new_egraphs(self) -> list[EGraphPicture]:
        """The drawings written since the last stage."""
        pictures: list[EGraphPicture] = []
        for folder, before in self._folders.items():
            now = _snapshot(folder)
            for name in sorted(now):
                if name.endswith(".dot") and now[name] != before.get(name):
                    pictures.append(_read_picture(os.path.join(folder, name)))
            self._folders[folder] = now
        return pictures


def _snapshot(folder: str) -> dict[str, tuple[int, int, int]]:
    """File name -> (inode, mtime, size): a file rewritten since differs (a rename gives a
    new inode even within the clock's resolution)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return {}
    return {e.name: (e.inode(), e.stat().st_mtime_ns, e.stat().st_size) for e in entries}


def _read_picture(dot_path: str) -> EGraphPicture:
    base = dot_path.removesuffix(".dot")
    with open(dot_path, encoding="utf-8") as f:
        dot = f.read()
    svg = None
    if os.path.exists(base + ".svg"):
        with open(base + ".svg", encoding="utf-8") as f:
            svg = f.read()
    return EGraphPicture(os.path.basename(base), dot, svg)


# --------------------------------------------------------------------------------------
# Writing the page


def check_page_path(path: str) -> None:
    """Refuse, before the pipeline runs, a page path that cannot be written."""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise _path_error(path, "it is a folder")
    if not os.path.isdir(folder):
        reason = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise _path_error(path, f"folder '{folder}' {reason}")


def page_title(module: Module) -> str:
    """The input file's name, where the module knows it (bytecode and a bare entry keep it
    on their ops), else the kernels' names."""
    sources = [module.source] + [getattr(item, "source", None) for item in module.items]
    names = [source.filename for source in sources if getattr(source, "filename", None)]
    if names:
        return names[0]
    return ", ".join("@" + str(item.attributes.get("sym_name", "?"))
                     for item in module.entries()) or "<input>"


def write_page(path: str, recorder: Recorder, title: str, failure: str | None = None) -> None:
    """Write the page to ``path`` (a temporary file renamed into place)."""
    page = render_page(recorder.stages, recorder.timings, title, failure)
    try:
        with atomic_output(path) as f:
            f.write(page.encode("utf-8"))
    except CompileError as e:
        raise _path_error(path, e.diagnostics[0].message.removeprefix("cannot write output: "))


def _path_error(path: str, reason: str) -> CompileError:
    return CompileError(Diagnostic("error", f"--dump-html: cannot write the page: {reason}",
                                   path))


def render_page(stages: list[Stage], timings: list[tuple[str, float]], title: str,
                failure: str | None = None) -> str:
    """The whole page, as text."""
    parts = [_head(title), _summary(stages, timings, title, failure),
             "<h2>Pipeline</h2>", _pipeline_table(stages),
             "<h2>Pass times</h2>", _timing_chart(timings),
             "<h2>Stages</h2>", _stage_buttons()]
    colours = Highlighter()
    parts += [_stage_section(stage, stages[i - 1] if i else None, colours)
              for i, stage in enumerate(stages)]
    parts += ["<h2>Final PTX</h2>", _final_ptx(stages, colours), _SCRIPT,
              "</body>\n</html>\n"]
    return "\n".join(parts)


def _head(title: str) -> str:
    colours = HtmlFormatter(style="default").get_style_defs(".code")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<link rel="icon" href="data:,">
<title>nanotile pipeline: {html.escape(title)}</title>
<style>
{_STYLE}
{colours}
</style>
</head>
<body>"""


def _summary(stages: list[Stage], timings: list[tuple[str, float]], title: str,
             failure: str | None) -> str:
    total = sum(timing_totals(timings).values())
    changed = sum(1 for i, s in enumerate(stages) if i and s.text != stages[i - 1].text)
    lines = [f"<h1>nanotile pipeline: {html.escape(title)}</h1>",
             (f"<p>{len(stages) - 1} steps, {changed} of them changed the IR; "
              f"{total * 1000:.1f} ms in all.</p>")]
    if failure is not None:
        lines.append(f'<pre class="failure">{html.escape(failure)}</pre>')
    return "\n".join(lines)


def _pipeline_table(stages: list[Stage]) -> str:
    rows = ["<table class=\"pipeline\">",
            ("<tr><th>#</th><th>stage</th><th>reads</th><th>writes</th><th>IR</th>"
             "<th>time</th></tr>")]
    for i, stage in enumerate(stages):
        rows.append(
            f"<tr><td>{stage.number}</td><td><a href=\"#stage-{stage.number}\" "
            f"title=\"{html.escape(stage.summary)}\">{html.escape(stage.name)}</a></td>"
            f"<td>{_language(stage.language_in)}</td><td>{_language(stage.language)}</td>"
            f"<td>{_change_word(stage, stages[i - 1] if i else None)}</td>"
            f"<td class=\"number\">{_milliseconds(stage)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _language(name: str) -> str:
    """A language's name, its description as the tooltip."""
    try:
        doc = get_language(name).doc
    except CompileError:  # only the name is known (a language the back end registers)
        doc = ""
    return f"<span title=\"{html.escape(doc)}\">{html.escape(name)}</span>"


def _change_word(stage: Stage, previous: Stage | None) -> str:
    if previous is None:
        return "input"
    if stage.text == previous.text:
        return "<span class=\"same\">unchanged</span>"
    added, removed = _count_changes(previous.text, stage.text)
    return f"<span class=\"changed\">+{added} &minus;{removed}</span>"


def _milliseconds(stage: Stage) -> str:
    return "" if stage.name == "input" else f"{stage.seconds * 1000:.2f} ms"


def _timing_chart(timings: list[tuple[str, float]]) -> str:
    """The --time-passes table as horizontal bars (inline SVG), one per row of it."""
    totals = timing_totals(timings)
    if not totals:
        return "<p>No pass ran.</p>"
    longest = max(totals.values()) or 1e-12
    whole = sum(totals.values()) or 1e-12
    row, label, bar = 18, 250, 420
    height = row * len(totals) + 4
    shapes = [(f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" '
               f'width="{label + bar + 150}" height="{height}" role="img" '
               'aria-label="pass times">')]
    for i, (name, seconds) in enumerate(totals.items()):
        y = i * row + 2
        width = max(1.0, bar * seconds / longest)
        tip = html.escape(f"{name}: {seconds:.4f} s ({100 * seconds / whole:.1f}%)")
        shapes.append(
            f'<g><title>{tip}</title>'
            f'<text x="{label - 6}" y="{y + 12}" text-anchor="end">{html.escape(name)}</text>'
            f'<rect x="{label}" y="{y + 2}" width="{width:.1f}" height="{row - 5}"/>'
            f'<text x="{label + width + 6:.1f}" y="{y + 12}">{seconds * 1000:.2f} ms '
            f'({100 * seconds / whole:.1f}%)</text></g>')
    shapes.append("</svg>")
    return "\n".join(shapes)


def _stage_buttons() -> str:
    return ('<p><button type="button" id="open-all">open all</button> '
            '<button type="button" id="close-all">close all</button></p>')


def _stage_section(stage: Stage, previous: Stage | None, colours: Highlighter) -> str:
    """One stage: a <details> with the diff, the whole IR and the e-graphs."""
    head = (f"<summary><b>{stage.number}. {html.escape(stage.name)}</b> "
            f"{html.escape(stage.language_in)} &rarr; {html.escape(stage.language)} "
            f"&middot; {_change_word(stage, previous)}"
            f"{' &middot; ' + _milliseconds(stage) if previous else ''}</summary>")
    body: list[str] = []
    if stage.summary:
        body.append(f"<p class=\"doc\">{html.escape(stage.summary)}</p>")
    if previous is None:
        body.append(colours.block(stage.text, stage.ptx))
    elif previous.ptx != stage.ptx:  # Tile IR -> PTX: no line of the one is in the other
        body.append(f"<p>The IR is now {'PTX' if stage.ptx else 'Tile IR'}: no line-by-line "
                    f"diff against stage {previous.number}; the whole IR:</p>")
        body.append(colours.block(stage.text, stage.ptx))
    elif stage.text == previous.text:
        body.append(f"<p>The IR is the same as after stage {previous.number}.</p>")
    else:
        body.append(f"<h4>Diff against stage {previous.number} "
                    f"({html.escape(previous.name)})</h4>")
        body.append(_diff(previous, stage, colours))
        body.append(f"<details class=\"whole\"><summary>the whole IR after this stage "
                    f"({len(stage.text.splitlines())} lines)</summary>"
                    f"<pre class=\"plain\">{html.escape(stage.text)}</pre></details>")
    body += [_egraph(picture) for picture in stage.egraphs]
    return (f"<details class=\"stage\" id=\"stage-{stage.number}\">{head}\n"
            + "\n".join(body) + "\n</details>")


def _diff(previous: Stage, stage: Stage, colours: Highlighter) -> str:
    """A unified diff, coloured: deleted lines in <del>, inserted lines in <ins>."""
    old, new = previous.text.splitlines(), stage.text.splitlines()
    out: list[str] = []
    for group in _matcher(previous.text, stage.text).get_grouped_opcodes(CONTEXT_LINES):
        first, last = group[0], group[-1]
        out.append(f'<span class="hunk">@@ -{first[1] + 1},{last[2] - first[1]} '
                   f'+{first[3] + 1},{last[4] - first[3]} @@</span>')
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + colours.line(line, stage.ptx) for line in new[j1:j2]]
                continue
            out += [f"<del>-{colours.line(line, previous.ptx)}</del>" for line in old[i1:i2]]
            out += [f"<ins>+{colours.line(line, stage.ptx)}</ins>" for line in new[j1:j2]]
    return '<pre class="code diff">' + "\n".join(out) + "</pre>"


def _matcher(old: str, new: str) -> difflib.SequenceMatcher:
    # autojunk off: in IR, frequent lines (`}`, `ret;`) are still lines to match
    return difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)


def _count_changes(old: str, new: str) -> tuple[int, int]:
    """Lines inserted and deleted from ``old`` to ``new``."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in _matcher(old, new).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


class Highlighter:
    """Pygments' colours for one line of IR at a time, remembered: most lines of a stage
    are lines of the stage before. A line is lexed alone, which Tile IR and PTX allow
    (neither has comments or strings over several lines in nanotile's output)."""

    def __init__(self) -> None:
        self.lexers = {False: TileIrLexer(), True: PtxLexer()}
        self.known: dict[tuple[str, bool], str] = {}

    def line(self, text: str, ptx: bool) -> str:
        key = (text, ptx)
        if key not in self.known:
            tokens = self.lexers[ptx].get_tokens(text)
            self.known[key] = "".join(_token_html(kind, value) for kind, value in tokens
                                      ).removesuffix("\n")
        return self.known[key]

    def block(self, text: str, ptx: bool) -> str:
        lines = (self.line(line, ptx) for line in text.splitlines())
        return '<pre class="code">' + "\n".join(lines) + "</pre>"


def _token_html(kind: object, value: str) -> str:
    """A token as HTML; whitespace, punctuation and operators stay bare text (Pygments'
    HtmlFormatter wraps each in a span, which makes a PTX listing ten times its size)."""
    escaped = html.escape(value, quote=False)
    if kind in Whitespace or kind in Text or kind in Punctuation or kind in Operator:
        return escaped
    while kind not in STANDARD_TYPES:
        kind = kind.parent  # type: ignore[attr-defined]
    css = STANDARD_TYPES[kind]
    return f'<span class="{css}">{escaped}</span>' if css else escaped


def _egraph(picture: EGraphPicture) -> str:
    """The drawing at its natural size (scrolled), or the DOT text, saying why."""
    heading = f"<h4>e-graph {html.escape(picture.name)}</h4>"
    if picture.svg is not None:
        data = base64.b64encode(picture.svg.encode("utf-8")).decode("ascii")
        return (f'{heading}<div class="egraph"><img alt="e-graph {html.escape(picture.name)}"'
                f' src="data:image/svg+xml;base64,{data}"></div>')
    return (f"{heading}<p class=\"note\">Graphviz's <code>dot</code> is not installed, so "
            "the e-graph is shown as its DOT text (install Graphviz to get a picture).</p>"
            f"<details class=\"whole\"><summary>DOT text ({len(picture.dot)} characters)"
            f"</summary><pre class=\"plain\">{html.escape(picture.dot)}</pre></details>")


def _final_ptx(stages: list[Stage], colours: Highlighter) -> str:
    if not stages or not stages[-1].ptx:
        language = stages[-1].language if stages else "none"
        return (f"<p>The pipeline stopped before PTX: its last stage is in language "
                f"{html.escape(language)}.</p>")
    return f'<details open id="final-ptx"><summary>PTX</summary>' \
           f'{colours.block(stages[-1].text, True)}</details>'


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
pre { font-family: ui-monospace, monospace; font-size: 12.5px; background: #f7f7f7;
      padding: 0.6em; overflow: auto; max-height: 40em; }
table.pipeline { border-collapse: collapse; font-size: 14px; }
table.pipeline td, table.pipeline th { padding: 1px 10px; border-bottom: 1px solid #ddd;
      text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
details.stage { border: 1px solid #ccc; border-radius: 4px; margin: 4px 0; padding: 2px 8px; }
details.stage > summary { cursor: pointer; }
details.whole > summary { cursor: pointer; color: #555; }
.same { color: #888; }
.changed { color: #a40; }
.doc, .note { color: #555; }
.failure { background: #fee; color: #900; }
.diff del { background: #fdd; text-decoration: none; display: inline-block; min-width: 100%; }
.diff ins { background: #dfd; text-decoration: none; display: inline-block; min-width: 100%; }
.diff .hunk { color: #66a; }
.egraph { overflow: auto; max-height: 40em; border: 1px solid #ddd; }
svg.chart text { font-size: 12px; font-family: system-ui, sans-serif; }
svg.chart rect { fill: #4a7fb5; }
"""

# Opening a stage from the pipeline table's link: the browser scrolls to it but leaves it
# closed
_SCRIPT = """<script>
function openTarget() {
  var target = document.getElementById(location.hash.slice(1));
  if (target && target.tagName === "DETAILS") { target.open = true; }
}
function setAll(open) {
  document.querySelectorAll("details.stage").forEach(function (d) { d.open = open; });
}
document.getElementById("open-all").addEventListener("click", function () { setAll(true); });
document.getElementById("close-all").addEventListener("click", function () { setAll(false); });
window.addEventListener("hashchange", openTarget);
openTarget();
</script>"""
