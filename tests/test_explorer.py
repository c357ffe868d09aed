"""The pipeline explorer (``nanotile K --dump-html=PAGE``, nanotile/explorer.py): the page's
contents, read with html.parser, then the page in a real browser (Debian's chromium driven
by Playwright; those tests skip, saying why, without them).

The kernels are written here or shipped in examples/: no corpus needed. With the
environment variable NANOTILE_EXPLORER_SCREENSHOT=PATH.png (and ../shared present), the
browser test also saves a screenshot of matmul_f16's page to PATH.png.
"""

from __future__ import annotations

import base64
import html
import os
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from nanotile.cli import main
from tests.shared_corpus import CUTILE, EXAMPLES, missing_reason
from tests.test_start_up import heavy, modules_after

# Two equal constants: cse merges them, eqsat turns the multiply into a shift
KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %x: tile<i32>) {
    %c8 = constant <i32: 8> : tile<i32>
    %d8 = constant <i32: 8> : tile<i32>
    %y = muli %x, %c8 : tile<i32>
    %z = addi %y, %d8 : tile<i32>
    %t = store_ptr_tko weak %p, %z : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
SCREENSHOT_KNOB = "NANOTILE_EXPLORER_SCREENSHOT"
FAKE_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
            '<text x="4" y="24">e-graph</text></svg>')


class Page(HTMLParser):
    """What the tests read in a page: the stages' summaries, the diff lines, the URLs."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stages: list[tuple[str, str]] = []  # (id, summary text)
        self.urls: list[str] = []
        self.depth = {"details": 0}
        self.open_tags: list[str] = []
        self._summary: str | None = None
        self._stage_id: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "details":
            self.depth["details"] += 1
            if "stage" in (values.get("class") or "").split():
                self._stage_id = values.get("id")
        if tag == "summary" and self._stage_id is not None:
            self._summary = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.depth["details"] -= 1
        if tag == "summary" and self._summary is not None:
            self.stages.append((self._stage_id or "", " ".join(self._summary.split())))
            self._summary = self._stage_id = None

    def handle_data(self, data: str) -> None:
        if self._summary is not None:
            self._summary += data


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL)
    return path


def explore(source: Path, page: Path, *flags: str) -> str:
    """Run ``nanotile SOURCE --dump-html=PAGE FLAGS`` and return the page."""
    assert main([str(source), f"--dump-html={page}", "-o", os.devnull, *flags]) == 0
    return page.read_text(encoding="utf-8")


def stage_html(page: str, number: int) -> str:
    """The <details> element of stage ``number`` (stages do not nest; the last one runs
    on to the end of the page)."""
    return page.split('<details class="stage" ')[number + 1]


def default_steps() -> list[str]:
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    return [step.spelling() for step in parse_pipeline(default_pipeline("sm_100"))]


def test_the_page_has_a_stage_per_step_in_pipeline_order(kernel, tmp_path):
    page = Page(explore(kernel, tmp_path / "k.html"))
    # "N. NAME LANGUAGE -> LANGUAGE · ...": a name may hold spaces (pass options)
    names = [re.match(r"\d+\. (.+?) \S+ \u2192 ", summary).group(1)
             for _, summary in page.stages]
    assert names == ["input", *default_steps()]
    assert [stage_id for stage_id, _ in page.stages] == \
        [f"stage-{n}" for n in range(len(names))]


def test_each_stage_shows_the_languages_it_reads_and_writes(kernel, tmp_path):
    page = Page(explore(kernel, tmp_path / "k.html"))
    summaries = dict(page.stages)
    assert "tile → tile-canon" in summaries["stage-2"]  # assume-to-facts
    select = next(s for _, s in page.stages if "select-instructions" in s)
    assert "simt → ptx-sm100" in select


def test_the_diff_marks_the_lines_a_pass_changed(kernel, tmp_path):
    page = explore(kernel, tmp_path / "k.html")
    number = ["input", *default_steps()].index("cse")
    cse = stage_html(page, number)
    deleted = [html.unescape(re.sub(r"<[^>]+>", "", line))
               for line in re.findall(r"<del>(.*?)</del>", cse)]
    inserted = [html.unescape(re.sub(r"<[^>]+>", "", line))
                for line in re.findall(r"<ins>(.*?)</ins>", cse)]
    assert deleted == ["-    %d8 = constant <i32: 8> : tile<i32>",
                       "-    %z = addi %y, %d8 : tile<i32>"]
    assert inserted == ["+    %z = addi %y, %c8 : tile<i32>"]
    unchanged = stage_html(page, ["input", *default_steps()].index("fold-static-if"))
    assert "unchanged" in unchanged and "<del>" not in unchanged


def test_the_page_ends_with_the_final_ptx(kernel, tmp_path):
    page = explore(kernel, tmp_path / "k.html")
    ptx = page[page.index('id="final-ptx"'):]
    text = re.sub(r"<[^>]+>", "", ptx)
    assert ".visible .entry k(" in text and ".target sm_100a" in text


def test_the_page_parses_and_loads_nothing_from_the_network(tmp_path):
    text = explore(EXAMPLES / "axpy.tileirbc", tmp_path / "axpy.html")
    page = Page(text)
    assert page.depth["details"] == 0  # every <details> closed
    assert all(url.startswith(("#", "data:")) for url in page.urls), page.urls
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text)
    assert "<title>nanotile pipeline: " in text and "axpy.tileirbc" in text


def test_the_pass_times_are_a_bar_chart(kernel, tmp_path):
    page = explore(kernel, tmp_path / "k.html")
    chart = page[page.index('<svg class="chart"'):page.index("</svg>")]
    rows = re.findall(r'text-anchor="end">([^<]+)</text>', chart)
    assert rows[0] == "(verify)" and "eqsat" in rows and "ptx-cse" in rows
    assert len(re.findall("<rect ", chart)) == len(rows)


def test_without_graphviz_the_egraph_is_its_dot_text(kernel, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no `dot` on it
    page = explore(kernel, tmp_path / "k.html")
    eqsat = stage_html(page, ["input", *default_steps()].index("eqsat{target=sm_100}"))
    assert "e-graph eqsat-k" in eqsat and "is not installed" in eqsat
    assert "digraph" in eqsat


@pytest.fixture
def fake_dot(tmp_path: Path, monkeypatch) -> Path:
    """A `dot` first on PATH that draws every graph as one small SVG (eqsat runs
    ``dot -Tsvg IN.dot -o OUT.svg``): the page's pictures without Graphviz."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "dot"
    script.write_text("#!/bin/sh\nprintf '%s' '" + FAKE_SVG + "' > \"$4\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return script


def test_with_graphviz_the_egraph_is_a_picture(kernel, tmp_path, fake_dot):
    page = explore(kernel, tmp_path / "k.html")
    eqsat = stage_html(page, ["input", *default_steps()].index("eqsat{target=sm_100}"))
    data = base64.b64encode(FAKE_SVG.encode()).decode()
    assert f'src="data:image/svg+xml;base64,{data}"' in eqsat
    assert "is not installed" not in eqsat


def test_the_egraph_folder_is_temporary_and_unnamed(kernel, tmp_path, monkeypatch):
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    page = explore(kernel, tmp_path / "k.html")
    assert "dump-egraph" not in page and "e-graph eqsat-k" in page
    assert list(temporary.iterdir()) == []


def test_dump_egraph_still_writes_its_folder(kernel, tmp_path):
    page = explore(kernel, tmp_path / "k.html", f"--dump-egraph={tmp_path / 'graphs'}")
    assert "e-graph eqsat-k" in page
    assert (tmp_path / "graphs" / "eqsat-k.dot").exists()


def test_the_page_is_the_only_file_written(kernel, tmp_path):
    explore(kernel, tmp_path / "k.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.html", "k.mlir"]


@pytest.mark.parametrize("target, reason", [
    ("missing/k.html", "folder '{tmp}/missing' does not exist"),
    ("k.mlir/k.html", "folder '{tmp}/k.mlir' is not a folder"),
    (".", "it is a folder"),
])
def test_an_unwritable_page_is_a_located_error(kernel, tmp_path, capsys, target, reason):
    path = tmp_path / target
    assert main([str(kernel), f"--dump-html={path}", "-o", os.devnull]) == 1
    err = capsys.readouterr().err
    expected = f"{path}: error: --dump-html: cannot write the page: " + \
        reason.format(tmp=tmp_path)
    assert err.strip() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.mlir"]


def test_a_failing_pipeline_still_writes_its_page(kernel, tmp_path, capsys):
    page_path = tmp_path / "k.html"
    assert main([str(kernel), "-p", "cse,select-instructions{gpu=sm_100}",
                 f"--dump-html={page_path}", "-o", os.devnull]) == 1
    assert "pass 'select-instructions' reads language" in capsys.readouterr().err
    page = page_path.read_text()
    assert '<pre class="failure">' in page and "reads language" in page
    assert [s.split(" ")[1] for _, s in Page(page).stages] == ["input", "cse"]


def test_several_inputs_are_refused(kernel, tmp_path, capsys):
    assert main([str(kernel), str(kernel), f"--dump-html={tmp_path / 'k.html'}"]) == 2
    assert "--dump-html writes one page" in capsys.readouterr().err
    assert not (tmp_path / "k.html").exists()


def test_the_passes_runner_takes_the_flag_too(kernel, tmp_path):
    from nanotile.cli_options import main as passes_main

    assert passes_main([str(kernel), "-p", "cse,dce", f"--dump-html={tmp_path / 'k.html'}",
                        "-o", os.devnull]) == 0
    page = (tmp_path / "k.html").read_text()
    assert "stopped before PTX" in page and str(kernel) in page


def test_help_lists_the_flag():
    from nanotile.driver import help_text

    assert "--dump-html PAGE.html" in help_text()


def test_only_dump_html_imports_the_explorer(kernel, tmp_path):
    modules = modules_after(str(kernel), "-p", "cse")
    assert not heavy(modules, "nanotile.explorer", "pygments")
    modules = modules_after(str(kernel), "-p", "cse", f"--dump-html={tmp_path / 'k.html'}")
    assert "nanotile.explorer" in modules and "pygments" in modules


# --------------------------------------------------------------------------------------
# In a browser


def _browser_or_skip():
    """Playwright's Chromium, Debian's build (no `playwright install`), or a skip."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("needs Playwright for Python (pip install playwright; the test extra)")
    return sync_playwright


@pytest.fixture(scope="module")
def browser():
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_page(browser, path: Path):
    """The page loaded in a new tab, and the console errors and page errors it had."""
    tab = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(path.resolve().as_uri(), wait_until="load")
    return tab, errors


def screenshot_diff(tab, number: int, path: Path) -> None:
    """Open stage ``number`` and save the viewport with its diff."""
    stage = tab.locator(f"#stage-{number}")
    if stage.get_attribute("open") is None:
        stage.locator("> summary").click()
    stage.locator("pre.diff").scroll_into_view_if_needed()
    tab.evaluate(f"document.getElementById('stage-{number}').scrollIntoView()")
    tab.screenshot(path=str(path))


def test_in_a_browser_every_stage_opens_and_the_diff_shows(browser, tmp_path, fake_dot):
    path = tmp_path / "axpy.html"
    explore(EXAMPLES / "axpy.tileirbc", path)
    tab, errors = open_page(browser, path)
    assert tab.evaluate("document.querySelector('.egraph img').naturalWidth") == 120
    stages = tab.locator("details.stage")
    assert stages.count() == len(default_steps()) + 1
    for number in range(stages.count()):
        stage = tab.locator(f"#stage-{number}")
        stage.locator("> summary").click()
        assert stage.get_attribute("open") is not None, f"stage {number} did not open"
        stage.locator("> summary").click()
        assert stage.get_attribute("open") is None, f"stage {number} did not close"
    tab.locator('table.pipeline a[href="#stage-2"]').click()  # the link opens it too
    # the page opens it on "hashchange", an event the browser dispatches after the click
    tab.wait_for_function("document.getElementById('stage-2').open")
    assert tab.locator("#stage-2").get_attribute("open") is not None
    tab.locator("#open-all").click()
    assert tab.locator("details.stage:not([open])").count() == 0
    tab.locator("#close-all").click()
    assert tab.locator("details.stage[open]").count() == 0
    shot = tmp_path / "axpy-diff.png"
    screenshot_diff(tab, 2, shot)  # assume-to-facts
    assert tab.locator("#stage-2 pre.diff del").first.is_visible()
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000
    assert errors == []


def test_matmul_f16_screenshot(browser, tmp_path):
    """Only with NANOTILE_EXPLORER_SCREENSHOT=PATH.png: matmul_f16's page, at lower-views'
    diff, saved there (the pictures of issue notes)."""
    target = os.environ.get(SCREENSHOT_KNOB)
    if not target:
        pytest.skip(f"set {SCREENSHOT_KNOB}=PATH.png to save matmul_f16's page")
    source = CUTILE / "matmul_f16.mlir"
    if not source.exists():
        pytest.skip(missing_reason(source))
    path = tmp_path / "matmul_f16.html"
    explore(source, path)
    tab, errors = open_page(browser, path)
    screenshot_diff(tab, ["input", *default_steps()].index("lower-views"), Path(target))
    assert errors == []
