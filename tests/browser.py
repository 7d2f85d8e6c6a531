"""Headless Chromium for the page tests (Debian's chromium, driven over the DevTools protocol): navigate,
evaluate, set the window's width, collect console errors, screenshot; and a page of tables in a stand-in for the
book's theme with the book's CSS (:func:`page`), measured at a window's width (:func:`measure`)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]


def chromium() -> str | None:
    """The browser's executable, or None where it is not installed (``make test`` installs it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """Just enough of the Chrome DevTools protocol: navigate, collect console errors, evaluate, screenshot."""

    def __init__(self, exe: str, profile_dir: Path, width: int = 1280):
        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--window-size={width},900",
                                      f"--user-data-dir={profile_dir}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile_dir / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        import websocket
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def resize(self, width: int, height: int = 900) -> None:
        """Lay the page out for a window ``width`` CSS pixels wide (a phone's 390 as well: a window has a minimum)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def open(self, url: str, timeout: float = 30) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.time() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.time() < deadline, f"{url} did not load in {timeout} s"
            self.events.append(json.loads(self.ws.recv()))
        self.evaluate("new Promise(r => setTimeout(r, 500))")  # let late scripts report

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        errors = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif m == "Runtime.exceptionThrown":
                errors.append(p["exceptionDetails"].get("exception", {}).get("description", str(p)))
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(f"{p['entry'].get('url', '')}: {p['entry']['text']}")
        return errors

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png",
                                                    captureBeyondViewport=True)["data"]))

    def close(self) -> None:
        self.ws.close()
        self.proc.terminate()
        self.proc.wait(timeout=20)


#: a page's tables as laid out at the window's width: the page's own width against the window's (a page wider than
#: its window scrolls sideways), each table wider than its box (it scrolls in a box around it, its own or a notebook
#: output's, or it reaches past the window), and each word of a table cell broken across lines or sticking out of
#: its cell
TABLE_LAYOUT = """(() => {
  const col = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const tables = Array.from(col.querySelectorAll('table'));
  const name = t => ((t.closest('.pk-table') || t).querySelector('caption, .pk-caption') || t)
    .textContent.trim().slice(0, 60);
  const scrolls = e => getComputedStyle(e).overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1;
  const inScroll = t => { for (let e = t.parentElement; e && e !== col; e = e.parentElement) if (scrolls(e)) return true;
                          return false; };
  const wide = tables.filter(t => inScroll(t) ||
                             t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(name);
  const broken = [];
  for (const c of col.querySelectorAll('table th, table td')) {
    const right = c.getBoundingClientRect().right - parseFloat(getComputedStyle(c).paddingRight) + 1;
    const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/\\S+/g)) {
        const r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        const boxes = Array.from(r.getClientRects()).filter(b => b.width > 0);
        const lines = new Set(boxes.map(b => Math.round(b.top)));
        if (lines.size > 1 || boxes.some(b => b.right > right)) broken.push(m[0]);
      }
    }
  }
  return {window: window.innerWidth, page: document.scrollingElement.scrollWidth, tables: tables.length,
          wide, broken};
})()"""


REPO = Path(__file__).resolve().parents[1]
#: a stand-in for the book theme's page (sphinx-book-theme, widths as measured on the built pages): a 253-px
#: sidebar, a text column of at most 740 px and the page's table of contents from 992 px up, one column below;
#: a wide block (class pk-wide) 1.36 times the column, as the theme sets it; a notebook's output in a box that scrolls
#: sideways, as MyST-NB's CSS sets it (:func:`output`)
THEME = """
body { margin: 0; font: 16px/1.5 sans-serif; }
.bd-container { display: flex; }
.bd-sidebar-primary { flex: 0 0 253px; }
.bd-sidebar-secondary { flex: 0 0 272px; }
article.bd-article { flex: 0 1 740px; min-width: 0; padding: 0 1rem; box-sizing: border-box; }
div.pk-wide { position: relative; z-index: 2; width: 136%; max-width: 136%; }
div.cell_output .output { max-width: 100%; overflow-x: auto; }
@media (max-width: 991px) {
  .bd-sidebar-primary, .bd-sidebar-secondary { display: none; }
  article.bd-article { flex: 1 1 auto; }
  div.pk-wide { width: auto; max-width: none; }
}
"""


def output(html: str) -> str:
    """``html`` (a table as ``report.show_table`` writes it) in a notebook cell's output, as the book's pages hold it."""
    return f'<div class="cell_output"><div class="output text_html">{html}</div></div>'


def page(path: Path, body: str, css: str | None = None) -> str:
    """A page of ``body`` (tables as ``report.show_table`` writes them) in :data:`THEME` with ``css`` (the book's
    ``probekit.css`` unless given), written to ``path``; its URL."""
    css = (REPO / "book" / "_static" / "probekit.css").read_text() if css is None else css
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{THEME}</style><style>{css}</style>"
                    f"</head><body><div class='bd-container'><div class='bd-sidebar-primary'></div>"
                    f"<article class='bd-article'>{body}</article><div class='bd-sidebar-secondary'></div></div>"
                    f"</body></html>")
    return path.as_uri()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A headless Chromium for a test module; the module's tests skip where it is not installed."""
    exe = chromium()
    if exe is None:
        pytest.skip("Debian's chromium is not installed (`make test` installs it: apt-get install chromium)")
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def measure(browser: Browser, url: str, width: int) -> dict:
    """:data:`TABLE_LAYOUT` of the page at ``url`` in a window ``width`` px wide."""
    browser.resize(width)
    browser.open(url)
    return browser.evaluate(TABLE_LAYOUT)
