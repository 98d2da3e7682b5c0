"""hlodiff's HTML reports of real fixtures, loaded in a real headless Chromium (Debian's `chromium`).

Asserts on what the browser rendered: timeline cells, cause text, highlighted spans, links that resolve and
reveal their target, that no request leaves the page, that a dump's hostile names stay text and run nothing,
and that the report reads without script. Skips with the reason when no Chromium is installed (`.ci/run`
installs it where the machine allows).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlodiff.cli import main
from browser import Browser, find_chromium

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
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
        result = CliRunner().invoke(main, [*args, "--html", str(made[name])])
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
    doc = json.loads(CliRunner().invoke(main, ["explain-recompile", _save("metric_even_steps"), "--json"]).output)
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
    assert state == {"cause": True, "rows": 15, "button_hidden": True, "folded": 1}
    page.evaluate("document.querySelector('details.run summary').click()")  # native, no script needed
    assert page.evaluate("document.querySelector('details.run').open") is True


def test_grouped_computations_render_once(browser, reports):
    page = browser.open(reports["grouped"])
    notes = page.evaluate("[...document.querySelectorAll('p.note')].map(p => p.innerText)"
                          ".filter(t => t.includes('with the same change'))")
    assert len(notes) == 2 and notes[0].startswith("and 4 more computations with the same change: %region_")
