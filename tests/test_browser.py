"""hlodiff's HTML reports of real fixtures, loaded in a real headless Chromium (Debian's `chromium`).

Asserts on what the browser rendered: timeline cells, cause text, highlighted spans, links that resolve and
reveal their target, that no request leaves the page, that a dump's hostile names stay text and run nothing,
and that the report reads without script. Skips with the reason when no Chromium is installed (`.ci/run`
installs it where the machine allows).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import FIXTURES, cli, cli_json
from browser import Browser, find_chromium

CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Chromium (headless browser tests): none found; apt-get install chromium")


def _save(name: str) -> str:
    return str(FIXTURES / "torch_xla" / name / "graphs.hlo.0")


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        yield b


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("reports")
    made = {}
    for name, args in {
        "run": ["explain-recompile", _save("metric_even_steps")],
        "compare": ["compare", _save("batch_shape") + "#0", _save("batch_shape") + "#5"],
        "hostile": ["explain-recompile", _save("hostile_names")],
        "grouped": ["explain-recompile", str(FIXTURES / "jax" / "dtype_reductions" / "dump")],
    }.items():
        made[name] = out / f"{name}.html"
        result = cli(*args, "--html", str(made[name]))
        assert result.exit_code == 1, result.output
    return made


def test_timeline_cells_and_the_link_to_the_recompilation(browser, reports):
    page = browser.open(reports["run"])
    cells = page.evaluate("[...document.querySelectorAll('table.tl td[data-step]')]"
                          ".map(td => [td.dataset.step, td.innerText.trim(), td.className])")
    assert cells == [["0", "A", "compiled"], ["1", "B", "recompiled"], ["2", "A", "hit"], ["3", "B", "hit"],
                     ["4", "A", "hit"], ["5", "B", "hit"]]
    page.evaluate("document.querySelector('td.recompiled a').click()")
    where = page.evaluate("(() => { const s = document.getElementById('recompile-1');"
                          "const r = s.getBoundingClientRect(); return [location.hash, r.top < innerHeight, "
                          "r.bottom > 0]; })()")
    assert where == ["#recompile-1", True, True]


def test_cause_text_and_fix_as_the_reader_sees_them(browser, reports):
    page = browser.open(reports["run"])
    cause = page.evaluate("document.querySelector('.cause').innerText")
    assert "outputs" in cause and "1 output removed (f32[])" in cause
    assert "/home/user/project/metric_even_steps.py:32" in cause
    doc = cli_json("explain-recompile", _save("metric_even_steps"))
    for c in doc["recompilations"][0]["causes"]:
        if c.get("fix"):
            assert f"fix: {c['fix']}" in cause
    visible = page.evaluate("getComputedStyle(document.querySelector('.cause')).display !== 'none'")
    assert visible


def test_highlighted_spans_mark_only_what_changed(browser, reports):
    page = browser.open(reports["compare"])
    marks = page.evaluate(
        "[...document.querySelectorAll('tr.changed')].filter(tr => tr.innerText.includes('parameter(3)'))"
        ".map(tr => [...tr.querySelectorAll('mark')].map(m => [m.closest('td').classList.contains('l') ? 'L' : 'R',"
        " m.innerText]))")
    assert marks == [[["L", "4"], ["R", "2"]]]
    color = page.evaluate("getComputedStyle(document.querySelector('tr.changed mark')).backgroundColor")
    assert color not in ("rgba(0, 0, 0, 0)", "transparent")


def test_every_link_resolves_and_a_folded_counterpart_is_revealed(browser, reports):
    for name in ("run", "compare", "grouped"):
        page = browser.open(reports[name])
        broken = page.evaluate("[...document.querySelectorAll('a[href^=\"#\"]')]"
                               ".filter(a => !document.getElementById(decodeURIComponent(a.hash.slice(1))))"
                               ".map(a => a.getAttribute('href'))")
        assert broken == [], name
    page = browser.open(reports["compare"])
    result = page.evaluate("""(() => {
        const a = [...document.querySelectorAll('details.run a.pair')][0];
        const target = document.getElementById(a.hash.slice(1));
        const details = target.closest('details');
        const before = details.open;
        a.click();
        const r = target.getBoundingClientRect();
        return [before, details.open, r.top >= 0 && r.bottom <= innerHeight, location.hash === a.hash];
    })()""")
    assert result == [False, True, True, True]


def test_no_request_leaves_the_page(browser, reports):
    for name, path in reports.items():
        page = browser.open(path)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.settle()
        assert page.requests() == [path.resolve().as_uri()], name


def test_hostile_names_from_the_dump_stay_text(browser, reports):
    page = browser.open(reports["hostile"])
    page.settle()
    assert page.events("Page.javascriptDialogOpening") == []
    assert page.evaluate("document.scripts.length") == 1
    text = page.evaluate("document.body.innerText")
    assert '/home/user/project/hostile_names/<script>alert("hlodiff")</script>.py:8' in text
    assert page.evaluate("document.querySelectorAll('code script, td script, th script').length") == 0


def test_readable_without_javascript(browser, reports):
    page = browser.open(reports["compare"], scripts=False)
    state = page.evaluate("""(() => ({
        cause: document.querySelector('.cause').innerText.includes('input shape changed'),
        rows: document.querySelectorAll('table.sbs tr.changed').length,
        button_hidden: document.querySelector('button[data-toggle]').hidden,
        folded: document.querySelectorAll('details.run').length,
    }))()""")
    # 18 changed rows: the 15 that changed themselves, and 3 users whose operand changed shape (marked changed as
    # XLA's hlo_diff does, MatchedDifferentShapeMarkAsChanged)
    assert state == {"cause": True, "rows": 18, "button_hidden": True, "folded": 1}
    page.evaluate("document.querySelector('details.run summary').click()")  # native, no script needed
    assert page.evaluate("document.querySelector('details.run').open") is True


def test_grouped_computations_render_once(browser, reports):
    page = browser.open(reports["grouped"])
    notes = page.evaluate("[...document.querySelectorAll('p.note')].map(p => p.innerText)"
                          ".filter(t => t.includes('with the same change'))")
    assert len(notes) == 2 and notes[0].startswith("and 4 more computations with the same change: %region_")


@pytest.fixture(scope="module")
def big_reports(tmp_path_factory) -> dict[str, Path]:
    """The biggest fixture pair's compare (33K instructions a side, a 1,753-output root tuple) and a 60-step run."""
    out = tmp_path_factory.mktemp("big_reports")
    big = FIXTURES / "big"
    made = {"compare": out / "compare.html", "run": out / "run.html"}
    for name, args in {"compare": ["compare", str(big / "transformer24.hlo.gz"), str(big / "transformer24_variant.hlo.gz")],
                       "run": ["explain-recompile", _save("long_run")]}.items():
        result = cli(*args, "--html", str(made[name]))
        assert result.exit_code == 1, result.output
    return made


MAX_PAGE_HEIGHT = 4_000
"""px: the compare page of the 33K-instruction pair was 16,900 px tall at 800 px when its root tuple was shown
whole; cut around its changes it is about 2,400."""


@pytest.mark.parametrize("width", [800, 1400])
@pytest.mark.parametrize("name", ["compare", "run"])
def test_big_reports_stay_a_page_at_800_and_1400_px(browser, big_reports, name, width):
    page = browser.open(big_reports[name], width=width, height=900)
    size = page.evaluate("({height: document.documentElement.scrollHeight,"
                         " width: document.documentElement.scrollWidth, inner: innerWidth})")
    assert size["width"] <= size["inner"], size  # nothing overflows the window sideways
    assert size["height"] < MAX_PAGE_HEIGHT, size
    wrapped = page.evaluate("[...document.querySelectorAll('td.ln')].filter(td => td.innerText &&"
                            " td.scrollWidth > td.clientWidth + 1).length")
    assert wrapped == 0  # every line number fits its gutter
    if name == "compare":
        whole = page.evaluate("""(() => { const d = document.querySelector('details.whole');
            const before = document.documentElement.scrollHeight; d.open = true;
            return [d.querySelector('.whole-text').innerText.length, before]; })()""")
        assert whole[0] > 30_000  # the whole 36,000-character line is one click away
    else:
        timeline = page.evaluate("(() => { const t = document.querySelector('.timeline');"
                                 " return [t.querySelectorAll('td[data-step]').length, t.clientWidth <= innerWidth]; })()")
        assert timeline == [60, True]
        graphs = page.evaluate("(() => { const t = document.querySelector('h2#graphs ~ table.data');"
                               " return [t.scrollWidth <= t.clientWidth, t.innerText.includes('long_run.py:37')]; })()")
        assert graphs == [True, True]  # the compiled-graphs table, trigger column included, without scrolling


@pytest.mark.parametrize("width", [800, 1400])
def test_step_details_show_on_focus_not_only_as_a_tooltip(browser, big_reports, width):
    page = browser.open(big_reports["run"], width=width, height=900)
    shown = page.evaluate("""(() => {
        const td = document.querySelector('td.hit[data-step="7"]');
        const tip = td.querySelector('.tip');
        const hidden = getComputedStyle(tip).display === 'none';
        td.focus();
        const r = tip.getBoundingClientRect();
        return [hidden, getComputedStyle(tip).display !== 'none', tip.innerText, r.left >= 0 && r.right <= innerWidth
                && r.bottom <= innerHeight && r.top >= 0];
    })()""")
    assert shown[0] is True and shown[1] is True and shown[3] is True
    assert shown[2].startswith("step 7:") and "cache hit of #1" in shown[2]
