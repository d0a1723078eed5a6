#!/usr/bin/env python3
"""Drives headless chromium through its DevTools protocol against a running `quire serve`.

Usage: browser-test.py BASE_URL QUIRE_BINARY STORE HOSTILE_ID SCREENSHOT_DIR

Checks that the list renders newest first, that the section filter and the search box change
it, that the detail view shows the record `quire get` prints, that a hostile record shows as
text, and that articles another process loads are counted as they arrive. Saves a PNG screenshot of each step in SCREENSHOT_DIR. Python standard library only:
the WebSocket client below is the minimum the DevTools protocol needs (RFC 6455, text frames).
"""
import base64, json, os, re, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.parse, urllib.request

BASE, QUIRE, STORE, HOSTILE, SHOTS = sys.argv[1:6]
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


class WebSocket:
    def __init__(self, url):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\n"
                           f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("WebSocket handshake refused: " + head.decode(errors="replace"))

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise RuntimeError("DevTools connection closed")
            out += chunk
        return out

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F == 0x8:
                raise RuntimeError("DevTools closed the connection")
            if b0 & 0x0F in (0x9, 0xA):
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.next_id = ws, 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.receive())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def js(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError("script failed: " + json.dumps(result["exceptionDetails"])[:500])
        return result["result"].get("value")

    def wait(self, expression, what, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.js(expression):
                return True
            time.sleep(0.1)
        check(False, "timed out waiting for " + what)
        return False

    def screenshot(self, name):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path = os.path.join(SHOTS, name + ".png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        check(os.path.getsize(path) > 1000, f"screenshot {path}")


def api(path):
    with urllib.request.urlopen(BASE.rstrip("/") + path, timeout=10) as r:
        return json.load(r)


def main():
    profile = tempfile.mkdtemp(prefix="quire-chromium-")
    browser = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--window-size=1280,900", "--remote-debugging-port=0",
         "--user-data-dir=" + profile, "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        deadline = time.time() + 30
        while time.time() < deadline and endpoint is None:
            line = browser.stderr.readline()
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                endpoint = m.group(1)
        if endpoint is None:
            print("FAIL  chromium did not start its DevTools endpoint")
            return 1
        port = re.match(r"ws://[^:]+:(\d+)/", endpoint).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        page = Page(WebSocket(target["webSocketDebuggerUrl"]))
        page.call("Page.enable")
        page.call("Runtime.enable")
        run(page)
        date_fields(page)
        many_tabs(page, port)
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()
        shutil.rmtree(profile, ignore_errors=True)  # the screenshots stay; chromium's profile need not
    print(f"screenshots in {SHOTS}")
    if failures:
        print(f"{len(failures)} browser check(s) failed")
        return 1
    print("browser test passed")
    return 0


ROWS = "document.querySelectorAll('#rows tr').length"


def run(page):
    # 1. The list renders, newest first, with the API's first page.
    page.call("Page.navigate", url=BASE)
    page.wait(ROWS + " > 0", "the list to render")
    first = api("/api/articles?limit=50")
    shown = page.js("[...document.querySelectorAll('#rows tr')].map(tr => tr.getAttribute('data-id'))")
    check(shown == [a["id"] for a in first["articles"]], "the list shows the API's first page, newest first")
    dates = page.js("[...document.querySelectorAll('#rows td.date')].map(td => td.textContent)")
    check(dates == sorted(dates, reverse=True), "dates descend")
    page.screenshot("1-list")

    # 2. Filtering by section changes it.
    sections = api("/api/sections")["sections"]
    section = next(s["name"] for s in sections if s["name"] != "Arts")
    page.wait(f"[...document.querySelectorAll('#section option')].some(o => o.value === {json.dumps(section)})",
              "the section list")
    page.js(f"document.getElementById('section').value = {json.dumps(section)};"
            "document.getElementById('filters').requestSubmit(); true")
    page.wait(f"[...document.querySelectorAll('#rows tr')].length > 0 && "
              f"[...document.querySelectorAll('#rows tr td:nth-child(2)')].every(td => td.textContent === {json.dumps(section)})",
              "the list to show only section " + section)
    expected = [a["id"] for a in api("/api/articles?limit=50&section=" + urllib.parse.quote(section))["articles"]]
    shown = page.js("[...document.querySelectorAll('#rows tr')].map(tr => tr.getAttribute('data-id'))")
    check(shown == expected and shown != [a["id"] for a in first["articles"]], f"the section filter ({section}) changes the list")
    page.screenshot("2-section")

    # Dates: a From day narrows the list further.
    day = expected[-1] and api("/api/articles/" + urllib.parse.quote(expected[len(expected) // 2], safe=""))["publishedAt"][:10]
    page.js(f"document.getElementById('since').value = {json.dumps(day)};"
            "document.getElementById('filters').requestSubmit(); true")
    page.wait(f"[...document.querySelectorAll('#rows td.date')].length > 0 && "
              f"[...document.querySelectorAll('#rows td.date')].every(td => td.textContent >= {json.dumps(day)})",
              "the From day to narrow the list")
    count = page.js(ROWS)
    check(0 < count < len(expected), f"the From day {day} narrows the list ({count} of {len(expected)} rows)")

    # 3. The search box changes it: a word of the first headline finds a shorter list.
    page.js("document.getElementById('reset').click(); true")
    page.wait(ROWS + " === 50", "the reset list")
    word = page.js("document.querySelector('#rows tr').textContent.split(/[^A-Za-z]+/)"
                   ".filter(w => w.length >= 6).sort((a, b) => b.length - a.length)[0] || 'climate'")
    page.js(f"document.getElementById('q').value = {json.dumps(word)}; document.getElementById('filters').requestSubmit(); true")
    page.wait(ROWS + " > 0 && " + ROWS + " < 50", "the search answer")
    count = page.js(ROWS)
    check(0 < count < 50, f"searching {word!r} narrows the list ({count} rows)")
    page.screenshot("3-search")

    # 4. The detail view shows the record `quire get` prints.
    page.js("document.getElementById('reset').click(); true")
    page.wait(ROWS + " === 50", "the reset list")
    # The first listed record with images and keywords (the hostile one, first, has neither).
    rows = page.js("[...document.querySelectorAll('#rows tr')].map(tr => tr.getAttribute('data-id'))")
    full = api("/api/articles?limit=50")["articles"]
    index = next((i for i, a in enumerate(full) if a.get("multimedia") and a.get("keywords") and a.get("byline")), 1)
    target = rows[index]
    page.js(f"document.querySelectorAll('#rows tr')[{index}].querySelector('a.headline').click(); true")
    page.wait("document.getElementById('detail-headline') !== null", "the detail view")
    printed = json.loads(subprocess.run([QUIRE, "--store", STORE, "get", target], capture_output=True, text=True,
                                        check=True).stdout)
    check(page.js("document.getElementById('detail-headline').textContent") == printed.get("headline", printed["id"]),
          "the detail headline is the record's")
    if printed.get("byline"):
        check(page.js("document.getElementById('detail-byline').textContent") == printed["byline"], "the byline")
    fields = page.js("document.getElementById('detail-fields').textContent")
    missing = [k for k, v in printed.items() if isinstance(v, (str, int)) and str(v) not in fields]
    check(not missing, f"every field of `quire get {target}` is shown (missing: {missing})")
    keywords = [k["value"] for k in printed.get("keywords", [])]
    shown_keywords = page.js("[...document.querySelectorAll('#detail-keywords li')].map(li => li.textContent)") or []
    check(shown_keywords == keywords, "the keywords")
    images = printed.get("multimedia", [])
    check(bool(images) and page.js("document.querySelectorAll('#detail-images li').length") == len(images),
          f"the images ({len(images)})")
    check(bool(keywords), f"the record has keywords ({len(keywords)})")
    page.screenshot("4-detail")

    # 5. A hostile record is shown as text, and none of its markup runs.
    hostile = json.loads(subprocess.run([QUIRE, "--store", STORE, "get", HOSTILE], capture_output=True, text=True,
                                        check=True).stdout)
    # A fresh load (not a fragment change of the page showing the previous record).
    page.call("Page.navigate", url="about:blank")
    page.wait("document.location.href === 'about:blank'", "a blank page")
    page.call("Page.navigate", url=BASE + "#article=" + urllib.parse.quote(HOSTILE, safe=""))
    # A bidirectional override is shown as its escape, as the CLI shows it, not obeyed.
    check("\u202e" in hostile["headline"], "the hostile headline holds a right-to-left override")
    shown = hostile["headline"].replace("\u202e", "\\u202e")
    page.wait(f"document.getElementById('detail-headline')?.textContent === {json.dumps(shown)} && "
              + ROWS + " > 0", "the hostile record")
    check(page.js("document.getElementById('detail-headline').textContent") == shown,
          "the hostile headline shows as text")
    check(page.js("document.querySelector('#rows tr a.headline').textContent") == shown,
          "the hostile headline shows as text in the list")
    check(page.js("typeof window.__pwned") == "undefined", "no script from the record ran")
    check(page.js("document.querySelectorAll('script').length") == 1, "the only script element is the page's own")
    check(page.js("document.querySelectorAll('#detail img, #detail iframe, #rows img').length") == 0,
          "no element from the record's markup")
    check(page.js("[...document.querySelectorAll('a')].every(a => !a.href.startsWith('javascript:'))"),
          "no javascript: link")
    page.screenshot("5-hostile")

    # 6. Articles another process commits are counted as they arrive.
    lines = "".join(json.dumps({"id": f"browser-live-{n}", "headline": "arrived"}) + "\n" for n in range(3))
    subprocess.run([QUIRE, "--store", STORE, "load", "-", "--quiet"], input=lines, text=True, check=True)
    page.wait("(document.getElementById('live')?.textContent || '').startsWith('+3 articles since loaded')",
              "the arrivals to be counted")
    check(page.js("document.getElementById('live').textContent").startswith("+3 articles since loaded"),
          "three articles loaded by another process show as arrived")
    page.screenshot("6-arrived")




def date_fields(page):
    """The dates are offered only with an order by date or a search: the API refuses them by id."""
    def disabled_after(sort, query):
        return page.js(
            f"(() => {{ const q = document.getElementById('q'); q.value = {json.dumps(query)};"
            " q.dispatchEvent(new Event('input'));"
            f" const s = document.getElementById('sort'); s.value = {json.dumps(sort)};"
            " s.dispatchEvent(new Event('change'));"
            " return [document.getElementById('since').disabled, document.getElementById('until').disabled]; })()")
    check(disabled_after("id", "") == [True, True], "by id without a search, the dates are not offered")
    check(disabled_after("id", "storm") == [False, False], "by id with a search, the dates are offered")
    check(disabled_after("oldest", "") == [False, False], "by date, the dates are offered")

def many_tabs(page, port):
    """7. Eight more tabs of the page: each one loads, and the first one's requests are answered.
    A change stream in every tab took all six connections a browser gives an HTTP/1.1 host."""
    tabs = []
    for _ in range(8):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{BASE}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as r:
            tab = Page(WebSocket(json.load(r)["webSocketDebuggerUrl"]))
        tab.call("Runtime.enable")
        tabs.append(tab)
    for n, tab in enumerate(tabs):
        tab.wait(f"{ROWS} > 0", f"tab {n + 2} to list articles", timeout=20)
    check(all(tab.js(ROWS) > 0 for tab in tabs), "nine tabs of the page each list articles")
    answer = page.js("Promise.race([fetch('/api/stats').then(r => 'answered ' + r.status),"
                     " new Promise(r => setTimeout(() => r('no answer in 8 s'), 8000))])")
    check(answer == "answered 200", f"with nine tabs open the first tab's request is answered ({answer})")


if __name__ == "__main__":
    sys.exit(main())
