"""The HTML reports as files: what they contain, that they stand alone, that dump text stays text.

The same reports are loaded in a real Chromium by tests/test_browser.py; these checks need no browser.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import FIXTURES, cli, truth_of


HOSTILE = '<script>alert("hlodiff")</script>.py'


def _save(name: str) -> str:
    return str(FIXTURES / "torch_xla" / name / "graphs.hlo.0")


def report(tmp_path: Path, *args: str) -> str:
    page = tmp_path / "report.html"
    result = cli(*args, "--html", str(page))
    assert result.exit_code in (0, 1), result.output
    return page.read_text(encoding="utf-8")


class Dom(HTMLParser):
    """Elements with their attributes and text, enough to check structure without a browser."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self.stack: list[dict] = []
        self.scripts: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": "", "children": []}
        for parent in self.stack:
            parent["children"].append(el)
        self.elements.append(el)
        if tag not in ("meta", "col", "br", "input", "img", "link"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        """Text goes to every open element, except that a hidden tip's (class ``tip``: shown on hover or focus
        only) goes to the tip alone: a cell's text is what the reader sees in it."""
        tips = [i for i, el in enumerate(self.stack) if "tip" in (el["attrs"].get("class") or "").split()]
        for el in self.stack[tips[-1] if tips else 0:]:
            el["text"] += data
        if self.stack and self.stack[-1]["tag"] == "script":
            self.scripts.append(data)

    def find(self, tag: str | None = None, **attrs) -> list[dict]:
        out = []
        for el in self.elements:
            if tag and el["tag"] != tag:
                continue
            if all(_has(el["attrs"].get(k.rstrip("_")), v) for k, v in attrs.items()):
                out.append(el)
        return out

    def ids(self) -> set[str]:
        return {el["attrs"]["id"] for el in self.elements if "id" in el["attrs"]}


def _has(value, wanted) -> bool:
    if value is None:
        return False
    return wanted in value.split() if wanted and " " not in wanted else value == wanted


def test_run_report_draws_the_timeline_and_links_each_recompilation(tmp_path):
    dom = Dom(report(tmp_path, "explain-recompile", _save("metric_even_steps")))
    cells = [el for el in dom.find("td") if "data-step" in el["attrs"]]
    assert [el["attrs"]["data-step"] for el in cells] == ["0", "1", "2", "3", "4", "5"]
    assert "".join(el["text"] for el in cells) == "ABABAB"  # the alternation, one letter per distinct graph
    assert [_has(el["attrs"]["class"], "recompiled") for el in cells] == [False, True, False, False, False, False]
    assert any(a["attrs"].get("href") == "#recompile-1" for a in cells[1]["children"])
    assert "recompile-1" in dom.ids()
    assert "alternating" in " ".join(el["text"] for el in dom.find("th", class_="fam")) + \
        " ".join(el["text"] for el in dom.find("li"))
    (cause,) = dom.find("div", class_="cause")
    assert "1 output removed (f32[])" in cause["text"] and "metric_even_steps.py:32" in cause["text"]
    assert "live tensor id=23" in dom.find("ul", class_="tensors")[0]["text"]


def test_an_xla_dump_s_timeline_repeats_the_letter_of_a_computation_compiled_again(tmp_path):
    """weak_type compiles one computation twice (JAX's cache key changed, the HLO did not): the terminal says
    (A,A), and so must the timeline, where that repeat is the clue."""
    dom = Dom(report(tmp_path, "explain-recompile", str(FIXTURES / "jax" / "weak_type" / "dump")))
    cells = [el for el in dom.find("td") if "data-step" in el["attrs"]]
    assert "".join(el["text"] for el in cells) == "AA"


def test_a_header_only_difference_shows_the_header_lines(tmp_path):
    """donate_toggle compiles one computation twice, once with a donated argument: the page shows the
    input_output_alias that differs, not only 'no instruction differs'."""
    dom = Dom(report(tmp_path, "explain-recompile", str(FIXTURES / "jax" / "donate_toggle" / "dump")))
    (table,) = dom.find("table", class_="header-diff")
    assert "input_output_alias" in table["text"] and "may-alias" in table["text"]
    # an XLA dump shows compilations, not steps: the timeline says what its columns are
    (heading,) = [el for el in dom.find("h2") if el["attrs"].get("id") == "timeline"]
    assert heading["text"].startswith("Timeline: 2 compilations")


def test_every_internal_link_resolves(tmp_path):
    for args in (["explain-recompile", _save("metric_even_steps")], ["explain-recompile", _save("batch_shape")],
                 ["explain-recompile", _save("dtype_zeros_like")], ["compare", _save("slice_index") + "#0",
                                                                    _save("slice_index") + "#1"]):
        dom = Dom(report(tmp_path, *args))
        targets = [a["attrs"]["href"][1:] for a in dom.find("a") if a["attrs"].get("href", "").startswith("#")]
        assert targets and set(targets) <= dom.ids(), args
        pairs = dom.find("a", class_="pair")
        assert pairs, args  # matched instructions link to their counterparts


def test_changed_instructions_are_marked_to_the_character(tmp_path):
    text = report(tmp_path, "compare", _save("batch_shape") + "#0", _save("batch_shape") + "#5")
    rows = re.findall(r"<tr class='changed'>(.*?)</tr>", text)
    param = next(r for r in rows if "parameter(" in r and "f32[" in r)
    left, right = param.split("<td class='ln'>")[1:3]
    assert re.findall(r"<mark>(.*?)</mark>", left) == ["4"] and re.findall(r"<mark>(.*?)</mark>", right) == ["2"]
    assert "f32[<mark>4</mark>,8]" in left and "f32[<mark>2</mark>,8]" in right


def test_dtype_change_marks_the_type_only(tmp_path):
    text = report(tmp_path, "explain-recompile", _save("dtype_zeros_like"))
    rows = re.findall(r"<tr class='changed'>(.*?)</tr>", text)
    constant = next(r for r in rows if "constant(0)" in r)
    assert "<mark>bf16</mark>[] constant(0)" in constant and "<mark>f32</mark>[] constant(0)" in constant


def test_report_stands_alone_and_only_runs_its_own_script(tmp_path):
    text = report(tmp_path, "explain-recompile", _save("lr_constant"))
    dom = Dom(text)
    assert not re.search(r"(?i)\b(src|href)\s*=\s*['\"]?(https?:|//|file:)", text)
    assert "url(" not in text and "@import" not in text and "@font-face" not in text
    (script,) = dom.find("script")
    (csp,) = [m for m in dom.find("meta") if m["attrs"].get("http-equiv") == "Content-Security-Policy"]
    digest = base64.b64encode(hashlib.sha256("".join(dom.scripts).encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp["attrs"]["content"] and "default-src 'none'" in csp["attrs"]["content"]
    assert "metadata=" not in text  # the side-by-side view elides metadata; causes carry the source lines


def test_hostile_names_from_a_dump_stay_text(tmp_path):
    text = report(tmp_path, "explain-recompile", _save("hostile_names"))
    assert text.count("<script") == 1  # hlodiff's own, at the end
    assert HOSTILE not in text
    assert '&lt;script&gt;alert(&quot;hlodiff&quot;)&lt;/script&gt;.py' in text
    dom = Dom(text)
    assert HOSTILE in " ".join(el["text"] for el in dom.find("code"))


def test_compare_report_of_equal_graphs(tmp_path):
    dom = Dom(report(tmp_path, "compare", _save("steady") + "#1", _save("steady") + "#2"))
    assert "equal after normalization" in dom.find("p", class_="summary")[0]["text"]
    assert not dom.find("table", class_="sbs")


def test_big_pair_embeds_only_the_neighbourhoods_of_changes(tmp_path):
    big = FIXTURES / "big"
    text = report(tmp_path, "compare", str(big / "transformer24.hlo.gz"), str(big / "transformer24_variant.hlo.gz"))
    assert len(text.encode()) < 300_000  # 29k instructions a side; whole text would be ~14 MB
    assert re.search(r"[\d,]+ unchanged instructions not embedded", text)
    added = re.findall(r"<tr class='only_right'>", text)
    assert len(added) == 20  # the added output's 20 instructions, every one shown
    root = next(r for r in re.findall(r"<tr class='changed'>.*?</tr>", text) if "ROOT" in r)
    shown = re.sub(r"<details class='whole'>.*?</details>", "", root)  # what shows before expanding
    assert len(re.sub(r"<[^>]+>", "", shown)) < 3_000 < len(root)  # the 1,753-output tuple, 36,000 characters a side
    assert re.search(r"<summary>whole line \([\d,]+ characters, [\d,]+ changes?\)</summary>", root)


def test_source_line_text_shown_when_the_file_is_readable(tmp_path):
    """The dump names /home/user/project/batch_shape.py; put the script there (under tmp) and the report quotes
    the line."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "batch_shape.py").write_bytes((FIXTURES / "torch_xla" / "batch_shape.py").read_bytes())
    dump = tmp_path / "graphs.hlo.0"
    dump.write_text(Path(_save("batch_shape")).read_text().replace("/home/user/project", str(project)))
    text = report(tmp_path, "explain-recompile", str(dump))
    truth = truth_of(FIXTURES / "torch_xla" / "batch_shape")
    line = (project / "batch_shape.py").read_text().splitlines()[truth["user_line"] - 1]
    assert f"<pre class='src'>{truth['user_line']}  {html.escape(line)}</pre>" in text
    assert "<pre class='src'>" not in report(tmp_path, "explain-recompile", _save("batch_shape"))


def test_same_inputs_same_bytes(tmp_path):
    a = report(tmp_path, "explain-recompile", _save("item_partial"))
    b = report(tmp_path, "explain-recompile", _save("item_partial"))
    assert a == b


@pytest.mark.parametrize("flag", ["--json", None])
def test_html_does_not_change_stdout(tmp_path, flag):
    args = ["explain-recompile", _save("slice_index")] + ([flag] if flag else [])
    plain = cli(*args)
    with_html = cli(*args, "--html", str(tmp_path / "r.html"))
    assert plain.output == with_html.output and plain.exit_code == with_html.exit_code == 1


def test_identical_changes_in_many_computations_are_grouped(tmp_path):
    """Real JAX dump: float32 -> bfloat16 input; the five max-reductions' region computations change alike."""
    text = report(tmp_path, "explain-recompile", str(FIXTURES / "jax" / "dtype_reductions" / "dump"))
    assert re.search(r"and 4 more computations with the same change: %region_\d+\.\d+, ", text)
    assert "and 1 more computation with the same change: %region_" in text  # the two min-reductions
    heads = re.findall(r"<div class='section-head' id='[^']+'>(.*?) <span", text)
    assert len(heads) == 3 and heads[0].startswith("ENTRY ")  # the entry, the max regions, the min regions
    # the causes say the same of each region: one shown, the others folded under it
    assert re.search(r"<summary>and \d+ more dtype causes like it", text)


def test_compare_dump_writes_one_section_per_change(tmp_path):
    text = report(tmp_path, "compare", _save("unbounded_growth"))
    sections = re.findall(r"<section class='recompile' id='(change-\d+)'><h2>(.*?)</h2>", text)
    assert [s[0] for s in sections] == ["change-0", "change-1", "change-2", "change-3"]
    assert sections[0][1].endswith("unbounded_growth/graphs.hlo.0#0 → " + _save("unbounded_growth") + "#1")
    assert text.count("<table class='sbs'>") >= 4


def test_job_report_leads_with_the_diverging_rank(tmp_path):
    """Real 4-process JAX job where rank 2 ran a smaller batch once."""
    text = report(tmp_path, "explain-recompile", str(FIXTURES / "jax" / "ranks_batch_4p"))
    dom = Dom(text)
    (heading,) = [h for h in dom.find("h2") if h["attrs"].get("id") == "ranks"]
    assert text.index("id='ranks'") < text.index("id='timeline'")
    rows = [tr for tr in dom.find("tr") if tr["text"].startswith(("0", "1", "2", "3"))]
    assert len(rows) == 4
    divergence = [h["text"] for h in dom.find("h3") if h["text"].startswith("step ")]
    assert len(divergence) == 1 and "rank 2 ran" in divergence[0]
    assert "input shape changed on parameter %x.1: f32[4,8]{1,0} -> f32[2,8]{1,0}" in text.replace("&gt;", ">")


def test_compare_html_never_replaces_an_input(tmp_path):
    left = tmp_path / "a.hlo.0"
    left.write_bytes(Path(_save("slice_index")).read_bytes())
    before = left.read_bytes()
    result = cli("compare", f"{left}#0", f"{left}#1", "--html", str(left))
    assert result.exit_code == 2 and "refusing to write the HTML report" in result.output
    assert left.read_bytes() == before


def test_compare_report_shows_the_cost_of_the_difference(tmp_path):
    text = report(tmp_path, "compare", _save("batch_shape") + "#0", _save("batch_shape") + "#5")
    # x f32[4,8] -> f32[2,8] and y f32[4,4] -> f32[2,4]: (16 + 8) fewer floats of 4 bytes come in
    fewer = (4 * 8 - 2 * 8 + 4 * 4 - 2 * 4) * 4
    row = re.search(r"<tr><th>inputs</th>(.*?)</tr>", text).group(1)
    assert re.findall(r"<td class='num'>(.*?)</td>", row)[2] == f"-{fewer} B"
    quiet = report(tmp_path, "compare", _save("slice_index") + "#0", _save("slice_index") + "#1")
    assert "<summary>cost: no change in inputs, outputs, memory or copies</summary>" in quiet


def test_code_in_causes_and_fixes_is_code_not_backticks(tmp_path):
    dom = Dom(report(tmp_path, "explain-recompile", _save("dtype_zeros_like")))
    prose = [el for el in dom.elements if (el["attrs"].get("class") or "").split()[:1] in (["fix"], ["cause"],
                                                                                            ["summary"], ["hint"])]
    assert prose and not [el["text"] for el in prose if "`" in el["text"]]
    assert any(c["tag"] == "code" and c["text"] == "dtype=" for el in prose for c in el["children"])


def test_gutter_fits_the_largest_line_number(tmp_path):
    big = FIXTURES / "big"
    text = report(tmp_path, "compare", str(big / "transformer24.hlo.gz"), str(big / "transformer24_variant.hlo.gz"))
    numbers = [int(n) for n in re.findall(r"<td class='ln'>(\d+)</td>", text)]
    digits = len(str(max(numbers)))
    assert digits == 5 and re.search(rf"<col class='ln' style='width:calc\({digits}ch \+ \.9em\)'>", text)


def test_timeline_steps_explain_themselves_without_a_tooltip(tmp_path):
    dom = Dom(report(tmp_path, "explain-recompile", _save("metric_even_steps")))
    cells = [el for el in dom.find("td") if "data-step" in el["attrs"]]
    assert not [el for el in cells if "title" in el["attrs"]]
    for el in cells:  # focusable (itself, or the link inside), with the step's details inside
        tips = [c for c in el["children"] if "tip" in (c["attrs"].get("class") or "")]
        assert len(tips) == 1 and f"step {el['attrs']['data-step']}:" in tips[0]["text"]
        assert "tabindex" in el["attrs"] or any(c["tag"] == "a" for c in el["children"])


def test_a_jax_run_reads_in_story_order(tmp_path):
    """The recompilation to act on (jit_f, a new argument shape) before the eager op's (jnp.ones outside jit)."""
    text = report(tmp_path, "explain-recompile", str(FIXTURES / "jax" / "debug_print" / "dump"))
    sections = re.findall(r"<h2>\S+#(\d+) recompiled", text)
    assert sections == ["4", "3"]  # dump#4 is jit_f, dump#3 jit_broadcast_in_dim: run order would be 3, 4
