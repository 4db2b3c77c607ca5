"""The built site in a real browser: headless Chromium driven over the DevTools protocol.

The site is served on 127.0.0.1 by `http.server` in a thread. Chromium resolves every
other host to nothing (`--host-resolver-rules`), and the test also records every request
the page makes (`Network.requestWillBeSent`), so a request leaving the machine fails the
test whether or not it could have succeeded. Console errors, uncaught exceptions and
JavaScript dialogs are collected the same way. Screenshots go to `test-artifacts/`.

Skipped when `/usr/bin/chromium` is missing (Debian's `chromium` package provides it).
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from rooflinec.site.build import build_site
from tests.test_site_build import PAYLOAD, plant

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "specs"
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
PAGES = {
    "home": "index.html",
    "device": "devices/nvidia-h100-sxm.html",
    "kernel": "kernels/gemm.html",
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve(root: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Visit:
    """What happened while a page loaded and its charts rendered."""

    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    live_charts: int = 0
    static_charts: int = 0
    tables: int = 0
    sliders: int = 0
    slider_moves_chart: bool | None = None
    text: str = ""
    scripts: int = 0
    script_result: Any = None


class _Tab:
    """One page target over the DevTools protocol (just enough of it)."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        self.ws.close()

    def _receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv())
        if "id" not in message:
            self.events.append(message)
        return message

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return result.get("result", {}).get("value")

    def wait_for(self, event: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        while time.monotonic() < deadline:
            if any(e.get("method") == event for e in self.events[seen - 1 if seen else 0 :]):
                return True
            self.ws.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                self._receive()
            except Exception:  # a timeout: nothing more arrived
                break
        return any(e.get("method") == event for e in self.events)


@dataclass
class Browser:
    port: int

    def visit(self, url: str, screenshot: Path | None = None, script: str | None = None) -> Visit:
        """Load `url`, wait for its charts, run `script` (its value in `script_result`),
        then take the screenshot."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT"
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            target = json.loads(response.read())
        tab = _Tab(target["webSocketDebuggerUrl"])
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                tab.call(f"{domain}.enable")
            tab.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280,
                height=2000,
                deviceScaleFactor=1,
                mobile=False,
            )
            tab.call("Page.navigate", url=url)
            tab.wait_for("Page.loadEventFired", 30)
            visit = Visit()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                counts = tab.evaluate(
                    "[document.querySelectorAll('.rooflinec-chart').length,"
                    " document.querySelectorAll('.rooflinec-live svg.marks').length]"
                )
                if counts and counts[1] >= counts[0]:
                    break
                time.sleep(0.2)
            visit.static_charts, visit.live_charts = counts or (0, 0)
            visit.tables = tab.evaluate("document.querySelectorAll('article table').length")
            visit.sliders = tab.evaluate(
                "document.querySelectorAll('.rooflinec-live input[type=range]').length"
            )
            if visit.sliders:
                visit.slider_moves_chart = tab.evaluate(
                    """(async () => {
                        const live = document.querySelector('.rooflinec-live');
                        const before = live.querySelector('svg.marks').innerHTML;
                        const slider = live.querySelector('input[type=range]');
                        slider.value = slider.max;
                        slider.dispatchEvent(new Event('input', {bubbles: true}));
                        await new Promise(r => setTimeout(r, 600));
                        const after = live.querySelector('svg.marks').innerHTML;
                        slider.value = 1;
                        slider.dispatchEvent(new Event('input', {bubbles: true}));
                        await new Promise(r => setTimeout(r, 300));
                        return before !== after;
                    })()"""
                )
            visit.text = tab.evaluate("document.title + '\\n' + document.body.innerText") or ""
            visit.scripts = tab.evaluate(
                "[...document.scripts].filter(s => !s.src && s.type !== 'application/json'"
                " && /alert/.test(s.textContent)).length"
            )
            if script is not None:
                visit.script_result = tab.evaluate(script)
            tab.evaluate("window.scrollTo(0, 0)")
            if screenshot is not None:
                shot = tab.call("Page.captureScreenshot", format="png")
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                screenshot.write_bytes(base64.b64decode(shot["data"]))
            tab.wait_for("Never.happens", 0.3)  # collect late events
            for event in tab.events:
                method, params = event.get("method"), event.get("params", {})
                if method == "Network.requestWillBeSent":
                    visit.requests.append(params["request"]["url"])
                elif method == "Network.loadingFailed":
                    visit.failed.append(f"{params.get('errorText')} {params.get('requestId')}")
                elif method == "Runtime.exceptionThrown":
                    details = params.get("exceptionDetails", {})
                    visit.console_errors.append(json.dumps(details)[:500])
                elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                    "error",
                    "assert",
                ):
                    visit.console_errors.append(json.dumps(params.get("args"))[:500])
                elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                    visit.console_errors.append(params["entry"].get("text", ""))
                elif method == "Page.javascriptDialogOpening":
                    visit.dialogs.append(params.get("message", ""))
                    tab.call("Page.handleJavaScriptDialog", accept=False)
            return visit
        finally:
            tab.close()
            close = urllib.request.Request(
                f"http://127.0.0.1:{self.port}/json/close/{target['id']}", method="GET"
            )
            with contextlib.suppress(OSError):
                urllib.request.urlopen(close, timeout=5).close()


@contextlib.contextmanager
def launch(profile: Path) -> Iterator[Browser]:
    """Headless Chromium with its profile in `profile`, every host but 127.0.0.1
    resolving to nothing; stopped on exit. (The benchmark drives it too.)"""
    process = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-default-apps",
            "--disable-extensions",
            "--mute-audio",
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--window-size=1280,2000",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("Chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        yield Browser(int(port_file.read_text().splitlines()[0]))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (/usr/bin/chromium); apt-get install chromium")
    pytest.importorskip("websocket", reason="websocket-client is needed to drive Chromium")
    with launch(tmp_path_factory.mktemp("chromium-profile")) as started:
        yield started


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[str]:
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(BUNDLED, out)
    yield from _serve(out)


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_page_in_a_browser(kind: str, site_url: str, browser: Browser) -> None:
    """Loads with no error and no outside request; the chart is drawn live; tables present."""
    visit = browser.visit(f"{site_url}/{PAGES[kind]}", ARTIFACTS / f"site-{kind}.png")
    outside = [
        u
        for u in visit.requests
        if urlparse(u).scheme not in ("data", "blob") and urlparse(u).hostname != "127.0.0.1"
    ]
    assert outside == []
    assert visit.failed == []
    assert visit.console_errors == []
    assert visit.dialogs == []
    assert visit.static_charts >= 1
    assert visit.live_charts == visit.static_charts
    assert visit.tables >= (1 if kind == "home" else 2)
    if kind in ("home", "device"):
        assert visit.sliders >= 2
        assert visit.slider_moves_chart is True


def test_planted_markup_fires_nothing(
    tmp_path_factory: pytest.TempPathFactory, browser: Browser
) -> None:
    """A device and a kernel whose texts carry script and markup: shown as text, no dialog."""
    root = tmp_path_factory.mktemp("planted")
    specs = root / "specs"
    shutil.copytree(BUNDLED, specs)
    plant(specs)
    build_site(specs, root / "site")
    server = _serve(root / "site")
    url = next(server)
    try:
        for kind in ("device", "kernel"):
            visit = browser.visit(f"{url}/{PAGES[kind]}", ARTIFACTS / f"planted-{kind}.png")
            assert visit.dialogs == []
            assert visit.console_errors == []
            assert visit.scripts == 0
            assert visit.live_charts == visit.static_charts >= 1
            assert "{{ 7*7 }}" in visit.text and "<script>alert(1)</script>" in visit.text
        assert PAYLOAD.startswith("<script>")
    finally:
        server.close()


# --------------------------------------------------------------------------- big tables

# What the table tools do to a page, read back from the DOM: pick a vendor in the first
# table's vendor select, sort by the ridge-point column, and report the rows then shown.
_FILTER_AND_SORT = """(async (vendor, heading) => {
    const wrappers = [...document.querySelectorAll('.rooflinec-table')];
    const wrapper = wrappers.find(w => [...w.querySelectorAll('thead th')]
        .some(th => th.textContent.replace('↕', '').trim() === heading));
    if (!wrapper) { return {error: 'no table with a ' + heading + ' column'}; }
    const select = wrapper.querySelector('select[data-column=vendor]');
    if (!select) { return {error: 'no vendor select'}; }
    const before = wrapper.querySelectorAll('tbody tr').length;
    select.value = vendor;
    select.dispatchEvent(new Event('change'));
    const heads = [...wrapper.querySelectorAll('thead th')];
    const col = heads.findIndex(th => th.textContent.replace(/[↕↑↓]/g, '').trim() === heading);
    heads[col].querySelector('button.rooflinec-sort').click();
    await new Promise(r => setTimeout(r, 50));
    const named = name => heads.findIndex(
        th => th.textContent.replace(/[↕↑↓]/g, '').trim() === name);
    const vendorCol = named('vendor');
    const shown = [...wrapper.querySelectorAll('tbody tr')].filter(tr => !tr.hidden);
    return {
        before: before,
        vendors: [...new Set(shown.map(tr => tr.cells[vendorCol].textContent.trim()))],
        cells: shown.map(tr => tr.cells[col].textContent.trim()),
        sorted: heads[col].getAttribute('aria-sort'),
        count: wrapper.querySelector('.rooflinec-count').textContent,
    };
})"""

_LEADING_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([kMGTPE]?)")
_SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def _number(cell: str) -> float:
    match = _LEADING_NUMBER.match(cell)
    assert match is not None, cell
    return float(match.group(1)) * _SI[match.group(2)]


TABLE_PAGES = {
    # page, vendor to show, column to sort by, the vendor's devices the page has
    "devices": ("devices/index.html", "AMD", "ridge point", 11),
    "comparison": ("comparison.html", "AMD", "BF16 or FP16", 11),
    "home": ("index.html", "NVIDIA", "ridge point", 21),
}


@pytest.mark.parametrize("kind", sorted(TABLE_PAGES))
def test_table_filters_to_one_vendor_and_sorts_by_ridge(
    kind: str, site_url: str, browser: Browser
) -> None:
    """On the bundled site, a table shows one vendor's devices only, in ridge-point order,
    with no console error; the page without JavaScript holds every row."""
    path, vendor, heading, expected = TABLE_PAGES[kind]
    visit = browser.visit(
        f"{site_url}/{path}",
        ARTIFACTS / f"table-{kind}.png",
        script=f"{_FILTER_AND_SORT}({json.dumps(vendor)}, {json.dumps(heading)})",
    )
    assert visit.console_errors == []
    result = visit.script_result
    assert "error" not in result, result
    assert [vendor] == result["vendors"]
    assert "ascending" == result["sorted"]
    numbers = [_number(c) for c in result["cells"] if c not in ("–", "no peak")]
    assert expected == len(result["cells"])
    assert sorted(numbers) == numbers
    assert f"{expected} of {result['before']} rows" == result["count"]
