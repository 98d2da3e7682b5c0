"""The page every HTML report shares: one self-contained file (inline CSS, a few lines of inline script, no
fonts, no network), with a Content-Security-Policy that forbids any request, so a report opened from a dump of
someone else's run can neither phone home nor run anything but hlodiff's own script.

Every piece of text that came from a dump goes through :func:`esc`; builders below never take raw HTML from a
caller except the already-built fragments of the views.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

from hlodiff import __version__
from hlodiff.errors import printable

KIND_CLASS = {
    "reordered": "k-blue", "shape": "k-purple", "dtype": "k-purple", "layout": "k-blue", "constant": "k-amber",
    "attribute": "k-amber", "inputs": "k-green", "outputs": "k-green", "ops": "k-red", "partial": "k-red",
    "sharding": "k-blue",
}
"""Colour family per cause kind; kinds added later get the neutral badge."""

CSS = """
:root{--fg:#1d2330;--dim:#5d6675;--line:#d9dde4;--bg2:#f5f6f8;--mark:#ffe38a;--add:#e3f6e5;--del:#fde8e8;
--chg:#fff6d6;--acc:#2457c5}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:#fff}
main{max-width:1500px;margin:0 auto;padding:1.2em 2em 4em;overflow-wrap:break-word}
@media (max-width:900px){main{padding:1em 1em 4em}table.data .opt{display:none}
table.data th,table.data td{padding:.2em .45em}}
h1{font-size:1.45em;margin:.2em 0 .4em}h2{font-size:1.15em;margin:2.2em 0 .6em;padding-bottom:.2em;
border-bottom:2px solid var(--line)}h3{font-size:1em;margin:1.4em 0 .4em}
a{color:var(--acc);text-decoration:none}a:hover{text-decoration:underline}
.summary{font-size:1.08em;font-weight:600;background:var(--bg2);border-left:4px solid var(--acc);
padding:.6em .9em;margin:.6em 0}
.dim{color:var(--dim)}.small{font-size:.88em}.note{color:var(--dim);font-style:italic;margin:.3em 0}
.hint{background:#fff8e1;border-left:4px solid #e0a800;padding:.3em .8em;margin:.4em 0}
nav.toc{font-size:.92em;margin:.5em 0 1em}nav.toc a{margin-right:1.2em}
table.data,table.header-diff{border-collapse:collapse;font-size:.9em;margin:.4em 0;display:block;max-width:100%;
overflow-x:auto}
table.data th,table.data td{border-bottom:1px solid var(--line);padding:.2em .7em;text-align:left;
vertical-align:top}table.data td.num,table.data th.num{text-align:right;font-variant-numeric:tabular-nums}
table.data th{background:var(--bg2)}
table.data td.num,table.data td.nw{white-space:nowrap}
.timeline{overflow-x:auto;margin:.4em 0 .2em;padding-bottom:.3em}
table.tl{border-collapse:separate;border-spacing:2px;font-size:.8em}
table.tl th.fam{text-align:right;font-weight:600;padding-right:.6em;white-space:nowrap;max-width:min(28em,30vw);
overflow:hidden;text-overflow:ellipsis}
table.tl td.pattern{width:auto;text-align:left;padding-left:.6em;white-space:nowrap;background:none}
.tip{display:none}
table.tl td:hover>.tip,table.tl td:focus-within>.tip,table.tl th:hover>.tip,table.tl th:focus>.tip{display:block;
position:fixed;left:0;right:0;bottom:0;z-index:5;padding:.5em 2em;background:#1d2330;color:#fff;font:13px/1.4
system-ui,sans-serif;text-align:left;white-space:normal;overflow-wrap:anywhere}
table.tl td:focus,table.tl th:focus{outline:2px solid var(--acc);outline-offset:1px}
table.tl th.step{color:var(--dim);font-weight:normal;min-width:1.9em}
table.tl td{width:1.9em;height:1.9em;text-align:center;border-radius:3px;padding:0}
table.tl td.empty{background:#fafbfc}
table.tl td.hit{background:#dfe6f3;color:#3c4a63}
table.tl td.compiled{background:#2457c5;color:#fff;font-weight:700}
table.tl td.recompiled{background:#c7302b;color:#fff;font-weight:700}
table.tl td a{color:inherit;display:block;line-height:1.9em}
.legend span{display:inline-block;width:1em;height:1em;border-radius:2px;vertical-align:-.15em;margin:0 .3em 0 1em}
.badge{display:inline-block;min-width:6.5em;padding:0 .5em;border-radius:3px;font-weight:700;font-size:.85em;
text-align:center;margin-right:.6em;background:#e8eaee;color:#333}
.k-blue{background:#dbe7ff;color:#1d3f8f}.k-purple{background:#eadcff;color:#4d2590}
.k-amber{background:#ffedc2;color:#7a4a00}.k-green{background:#d8f3dc;color:#1b5e20}
.k-red{background:#fddcdc;color:#8c1d18}
details.alike>summary{cursor:pointer;color:var(--dim);font-size:.9em;margin:-.3em 0 .6em}
.with{margin:.3em 0 .3em 1.4em;border-left:2px solid #dfe6f3;padding-left:.7em}
.story{margin-top:1.6em;font-size:1.05em}
section.recompile{border-top:3px solid var(--line);margin-top:2.5em}
.cause{margin:.7em 0 .9em;padding:.5em .8em;border:1px solid var(--line);border-radius:5px;background:#fff}
.cause .what{font-weight:600}
.fix{margin:.35em 0 0 7.1em;color:#1b5e20}.fix b{color:#1b5e20}
.fix.head{margin:.2em 0 .6em;font-size:1.02em}
.loc{margin:.15em 0 0 7.1em;font-size:.92em}.loc code{background:var(--bg2);padding:0 .3em}
.loc.lib{color:var(--dim)}
pre.src{margin:.2em 0 0 7.1em;background:#f3f6fb;border-left:3px solid var(--acc);padding:.2em .6em;
font:12.5px/1.4 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;white-space:pre-wrap}
ul.tensors{margin:.3em 0;padding-left:1.4em;font-size:.92em}
table.sbs{border-collapse:collapse;width:100%;table-layout:fixed;
font:12px/1.45 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;margin:.3em 0 1em}
table.sbs td{vertical-align:top;padding:0 .4em;white-space:pre-wrap;word-break:break-all;border-left:1px solid #eee}
table.sbs td.ln{color:#9aa1ac;text-align:right;border-left:none;user-select:none;white-space:nowrap;
word-break:normal;padding:0 .45em 0 0}
table.sbs th{font:600 12px system-ui,sans-serif;text-align:left;background:var(--bg2);padding:.2em .4em}
table.sbs tr.changed td.code{background:var(--chg)}
table.sbs tr.only_left td.code.l,table.sbs tr.moved td.code.l{background:var(--del)}
table.sbs tr.only_right td.code.r,table.sbs tr.moved td.code.r{background:var(--add)}
table.sbs td.blank{background:#fafafa}
table.sbs mark{background:var(--mark);border-radius:2px;padding:0 1px;outline:1px solid #e6c14d}
table.sbs td:target{outline:2px solid var(--acc);background:#e3ecff !important}
table.sbs a.pair{color:inherit}table.sbs a.pair:hover{color:var(--acc)}
.elided{color:#8a93a3;font-style:italic;background:#f0f2f5;border-radius:2px}
details.whole>summary{cursor:pointer;color:var(--dim);font:11px system-ui,sans-serif;margin:.1em 0}
details.whole[open]>summary{margin-bottom:.2em}
.whole-text{max-height:24em;overflow-y:auto;border-top:1px dashed var(--line)}
details.run>summary{cursor:pointer;color:var(--dim);font:12px system-ui,sans-serif;padding:.15em .4em;
background:#fafbfc;list-style-position:inside}
details.run table.sbs{margin:0}
.cap{color:#8a5a00;background:#fff8e1;padding:.1em .5em;font:12px system-ui,sans-serif}
.section-head{font-weight:600;margin:1.2em 0 .2em}
.flash{animation:flash 1.2s ease-out}@keyframes flash{from{background:#9fbaf5}to{background:transparent}}
footer{margin-top:3em;color:var(--dim);font-size:.85em}
"""

JS = """
(function(){
function reveal(el){for(var p=el.parentElement;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}}
function go(id){var el=document.getElementById(id);if(!el)return false;reveal(el);
el.scrollIntoView({block:'center'});el.classList.remove('flash');void el.offsetWidth;el.classList.add('flash');
return true;}
document.addEventListener('click',function(ev){var a=ev.target.closest('a[href^="#"]');if(!a)return;
var id=decodeURIComponent(a.getAttribute('href').slice(1));if(go(id)){history.replaceState(null,'','#'+id);
ev.preventDefault();}});
document.querySelectorAll('button[data-toggle]').forEach(function(b){b.hidden=false;
b.addEventListener('click',function(){var s=document.getElementById(b.getAttribute('data-toggle'));
var open=b.getAttribute('aria-pressed')!=='true';b.setAttribute('aria-pressed',open?'true':'false');
s.querySelectorAll('details.run').forEach(function(d){d.open=open;});
b.textContent=open?'collapse unchanged':'expand unchanged';});});
if(location.hash)go(decodeURIComponent(location.hash.slice(1)));
})();
"""
"""Small, optional: opens collapsed runs when a link points into them, and the expand/collapse buttons (hidden
without script). Everything else is plain HTML and works with script off."""


def esc(text) -> str:
    """Escape any text from a dump or the user's files for element content and quoted attributes."""
    return html.escape(printable("" if text is None else str(text), keep_lines=True), quote=True)


_INLINE_CODE = re.compile(r"`([^`\n]+)`")


def prose(text) -> str:
    """Escape a sentence hlodiff wrote (a cause, a fix, a hint) and show its `code` spans as code: the terminal
    prints the backticks, a page should not."""
    return _INLINE_CODE.sub(r"<code>\1</code>", esc(text))


def badge(kind: str) -> str:
    return f"<span class='badge {KIND_CLASS.get(kind, '')}'>{esc(kind)}</span>"


def frame_text(frame: dict | None) -> str:
    """``file:line (function)`` from a JSON frame."""
    if not frame:
        return "-"
    where = frame.get("file") or "?"
    if frame.get("line") is not None:
        where += f":{frame['line']}"
    return f"{where} ({frame['function']})" if frame.get("function") else where


def short_frame(frame: dict | None) -> str:
    if not frame:
        return "-"
    name = (frame.get("file") or "?").replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{frame['line']}" if frame.get("line") is not None else name


def _script_hash() -> str:
    digest = hashlib.sha256(JS.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def page(title: str, body: list[str]) -> str:
    """The whole document. The CSP allows the inline style and exactly hlodiff's script (by hash), nothing else:
    no image, font, frame or connection can be loaded even if a dump's text were to slip through unescaped."""
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; script-src '{_script_hash()}'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    head = ("<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<meta name='generator' content='hlodiff {esc(__version__)}'>"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>")
    foot = (f"<footer>hlodiff {esc(__version__)}: this page is self-contained; it loads nothing and works offline."
            "</footer></main>")
    return "\n".join([head, *body, foot, f"<script>{JS}</script>", "</body></html>\n"])
