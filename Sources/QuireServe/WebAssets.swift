/// The web page at `/`: plain HTML, CSS and a little JavaScript, shipped in the binary.
///
/// The script builds every element with `textContent` and attributes it sets itself (no
/// `innerHTML`), so article text such as `<script>` shows as text; links are made only for
/// `http:`/`https:` URLs. The Content-Security-Policy allows nothing but this server's own
/// script, style and API.
enum WebAssets {
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Quire</title>
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Quire</h1>
          <span id="store-info"></span>
          <span id="live" role="status"></span>
        </header>
        <form id="filters" autocomplete="off">
          <label>Search <input id="q" name="q" type="search" placeholder="full-text search"></label>
          <label>Section <select id="section" name="section"><option value="">all sections</option></select></label>
          <label>From <input id="since" name="since" type="date"></label>
          <label>To <input id="until" name="until" type="date"></label>
          <label>Order <select id="sort" name="sort">
            <option value="newest">newest first</option><option value="oldest">oldest first</option><option value="id">by id (relevance when searching)</option>
          </select></label>
          <button type="submit">Apply</button>
          <button type="button" id="reset">Reset</button>
        </form>
        <p id="status" role="status"></p>
        <main>
          <section id="list-pane">
            <table id="list">
              <thead><tr><th>Date</th><th>Section</th><th>Headline</th></tr></thead>
              <tbody id="rows"></tbody>
            </table>
            <button type="button" id="more" hidden>More</button>
          </section>
          <article id="detail" hidden></article>
        </main>
        </body>
        </html>

        """

    static let style = """
        :root { color-scheme: light dark; --line: #8884; --accent: #2563eb; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, sans-serif; }
        header { display: flex; gap: 1em; align-items: baseline; padding: .6em 1em; border-bottom: 1px solid var(--line); }
        header h1 { margin: 0; font-size: 1.3em; }
        #store-info, #live { opacity: .75; font-size: .9em; }
        #filters { display: flex; flex-wrap: wrap; gap: .6em 1em; padding: .6em 1em; border-bottom: 1px solid var(--line); }
        #filters label { display: flex; gap: .4em; align-items: center; }
        #status { margin: .4em 1em; min-height: 1.2em; }
        #status.error { color: #c0392b; font-weight: 600; }
        main { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1em; padding: 0 1em 2em; }
        main.with-detail { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
        table { width: 100%; border-collapse: collapse; }
        th, td { text-align: left; padding: .3em .5em; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.date { white-space: nowrap; font-variant-numeric: tabular-nums; }
        tr.selected { background: #2563eb22; }
        a { color: var(--accent); }
        #more { margin: 1em 0; }
        #detail { border-left: 3px solid var(--accent); padding: 0 1em; overflow-wrap: anywhere; }
        #detail dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2em 1em; }
        #detail dt { font-weight: 600; }
        #detail dd { margin: 0; white-space: pre-wrap; }
        #detail ul { margin: 0; padding-left: 1.2em; }

        """

    static let script = #"""
        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const PAGE = 50;
          let next = null;
          let loading = false;
          let generation = 0;

          // Bidirectional marks, overrides and isolates reorder what is shown (a stored headline
          // could show another's text): written as \u202e, as the CLI's table cells write them.
          const BIDI = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
          function visible(text) {
            return text.replace(BIDI, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
          }
          function el(tag, text, attrs) {
            const node = document.createElement(tag);
            if (text !== undefined && text !== null) node.textContent = visible(String(text));
            for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
            return node;
          }
          function safeURL(value) {
            try {
              const url = new URL(String(value));
              return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
            } catch (_) { return null; }
          }
          function link(text, href) {
            const url = safeURL(href);
            return url ? el("a", text, { href: url, rel: "noopener noreferrer", target: "_blank" }) : el("span", text);
          }
          function state() { return new URLSearchParams(location.hash.slice(1)); }
          function setState(params) {
            const text = params.toString();
            if (location.hash.slice(1) === text) route(); else location.hash = text;
          }
          function status(text, isError) {
            $("status").textContent = text || "";
            $("status").className = isError ? "error" : "";
          }
          async function getJSON(url) {
            const response = await fetch(url, { headers: { Accept: "application/json" } });
            let body = null;
            try { body = await response.json(); } catch (_) { body = null; }
            if (!response.ok) throw new Error((body && body.error) || ("HTTP " + response.status));
            return body;
          }

          function listURL(cursor) {
            const params = new URLSearchParams();
            const s = state();
            for (const name of ["q", "section", "since", "until", "sort"]) {
              const value = s.get(name);
              if (value) params.set(name, value);
            }
            params.set("limit", String(PAGE));
            params.set("fields", "id,publishedAt,section,headline");
            if (cursor) params.set("cursor", cursor);
            return "/api/articles?" + params.toString();
          }
          function row(article) {
            const tr = el("tr", null, { "data-id": article.id });
            tr.append(el("td", String(article.publishedAt || "").slice(0, 10), { class: "date" }));
            tr.append(el("td", article.section || ""));
            const cell = el("td");
            const params = state();
            params.set("article", article.id);
            cell.append(el("a", article.headline || article.id, { href: "#" + params.toString(), class: "headline" }));
            tr.append(cell);
            return tr;
          }
          async function loadList(more) {
            if (loading && more) return;
            const mine = more ? generation : ++generation;
            loading = true;
            if (!more) { $("rows").replaceChildren(); next = null; status("Loading…"); }
            try {
              const page = await getJSON(listURL(more ? next : null));
              if (mine !== generation) return;
              for (const article of page.articles) $("rows").append(row(article));
              next = page.next;
              const shown = $("rows").children.length;
              status(shown === 0 ? "No articles match." : shown + (next || page.truncated ? "+" : "") + " articles"
                + (page.truncated ? " (a search lists its first " + shown + " hits: narrow it for more)" : ""));
            } catch (error) {
              if (mine !== generation) return;
              next = null;
              status(error.message, true);
            } finally {
              if (mine === generation) loading = false;
              $("more").hidden = !next;
              markSelected();
            }
          }

          function value(v) {
            if (v === null || v === undefined) return el("span", "—");
            if (Array.isArray(v)) {
              const list = el("ul");
              for (const item of v) { const li = el("li"); li.append(value(item)); list.append(li); }
              return list;
            }
            if (typeof v === "object") {
              const dl = el("dl");
              for (const [k, item] of Object.entries(v)) { dl.append(el("dt", k)); const dd = el("dd"); dd.append(value(item)); dl.append(dd); }
              return dl;
            }
            if (typeof v === "string" && safeURL(v)) return link(v, v);
            return el("span", String(v));
          }
          async function loadDetail(id) {
            const pane = $("detail");
            if (!id) { pane.hidden = true; pane.replaceChildren(); document.querySelector("main").className = ""; return; }
            pane.hidden = false;
            document.querySelector("main").className = "with-detail";
            pane.replaceChildren(el("p", "Loading…"));
            try {
              const a = await getJSON("/api/articles/" + encodeURIComponent(id));
              const parts = [el("h2", a.headline || a.id, { id: "detail-headline" })];
              if (a.byline) parts.push(el("p", a.byline, { id: "detail-byline" }));
              const when = [String(a.publishedAt || "").slice(0, 10), a.section].filter(Boolean).join(" · ");
              if (when) parts.push(el("p", when));
              if (a.abstract) parts.push(el("p", a.abstract, { id: "detail-abstract" }));
              const original = a.url || a.sourceURL;
              if (safeURL(original)) { const p = el("p"); p.append(link("Read the original article", original)); parts.push(p); }
              if (Array.isArray(a.keywords) && a.keywords.length) {
                parts.push(el("h3", "Keywords"));
                const ul = el("ul", null, { id: "detail-keywords" });
                for (const k of a.keywords) ul.append(el("li", (k && k.value) || JSON.stringify(k)));
                parts.push(ul);
              }
              if (Array.isArray(a.multimedia) && a.multimedia.length) {
                parts.push(el("h3", "Images"));
                const ul = el("ul", null, { id: "detail-images" });
                for (const m of a.multimedia) {
                  const li = el("li");
                  const label = [m && m.caption, m && m.width && m.height ? m.width + "×" + m.height : null].filter(Boolean).join(" ");
                  li.append(link(label || (m && m.url) || "image", m && m.url));
                  ul.append(li);
                }
                parts.push(ul);
              }
              parts.push(el("h3", "All fields"));
              const all = value(a);
              all.id = "detail-fields";
              parts.push(all);
              const close = el("button", "Close", { type: "button", id: "close" });
              close.addEventListener("click", () => { const s = state(); s.delete("article"); setState(s); });
              parts.push(close);
              pane.replaceChildren(...parts);
            } catch (error) {
              pane.replaceChildren(el("p", error.message, { class: "error", id: "detail-error" }));
            }
          }
          function markSelected() {
            const id = state().get("article");
            for (const tr of $("rows").children) tr.classList.toggle("selected", tr.getAttribute("data-id") === id);
          }

          let lastListKey = null;
          // Dates need an order by date or a search (the API refuses them by id): offered only then.
          function datesApply() {
            const off = $("sort").value === "id" && !$("q").value.trim();
            $("since").disabled = off;
            $("until").disabled = off;
          }

          function route() {
            const s = state();
            for (const name of ["q", "section", "since", "until"]) $(name).value = s.get(name) || "";
            $("sort").value = s.get("sort") || "newest";
            datesApply();
            const listKey = listURL(null);
            if (listKey !== lastListKey) { lastListKey = listKey; loadList(false); }
            loadDetail(s.get("article"));
            markSelected();
          }

          async function loadSections() {
            try {
              const body = await getJSON("/api/sections");
              const select = $("section");
              const chosen = state().get("section") || "";
              for (const s of body.sections) select.append(el("option", s.name + " (" + s.count + ")", { value: s.name }));
              select.value = chosen;
            } catch (_) { /* the list shows the store's state */ }
          }
          async function loadInfo() {
            try {
              const stats = await getJSON("/api/stats");
              const articles = (stats.collections || []).find((c) => c.name === "articles");
              $("store-info").textContent = (articles ? articles.records : 0) + " articles in " + stats.path;
            } catch (error) { $("store-info").textContent = error.message; }
          }
          // One stream for all the tabs of this origin: a browser gives an HTTP/1.1 host six
          // connections, and a stream in each tab (or in a page kept in the back-forward cache)
          // took them all, so a seventh tab never loaded. The tab holding the lock streams and
          // passes each event on; the others listen, and one takes over when it goes.
          function watch() {
            if (!window.EventSource) return;
            // The count at the first event; what arrived since is the difference from it. (Summed
            // `change`s missed what a reconnection's catch-up commit, which carries none, brought.)
            let base = null;
            const show = (text) => {
              try {
                const data = JSON.parse(text);
                const articles = data.collections && data.collections.articles;
                const records = articles && typeof articles.records === "number" ? articles.records : 0;
                if (base === null) { base = records; return; }
                const arrived = records - base;
                if (arrived !== 0) {
                  $("live").textContent = (arrived > 0 ? "+" : "") + arrived + " articles since loaded (Apply to refresh)";
                  loadInfo();
                }
              } catch (_) { /* ignore a malformed event */ }
            };
            const shared = window.BroadcastChannel && navigator.locks;
            const channel = shared ? new BroadcastChannel("quire-changes") : null;
            if (channel) channel.onmessage = (message) => show(message.data);
            let source = null;
            let release = null;
            const open = () => {
              source = new EventSource("/api/changes");
              const relay = (event) => { show(event.data); if (channel) channel.postMessage(event.data); };
              source.addEventListener("hello", relay);
              source.addEventListener("commit", relay);
            };
            const stop = () => {
              if (source) { source.close(); source = null; }
              if (release) { release(); release = null; }
            };
            const start = () => {
              if (!shared) { open(); return; }
              navigator.locks.request("quire-changes", () => new Promise((done) => { release = done; open(); }));
            };
            start();
            // A page kept in the back-forward cache holds no stream and no lock.
            window.addEventListener("pagehide", stop);
            window.addEventListener("pageshow", (event) => { if (event.persisted) start(); });
          }

          document.addEventListener("DOMContentLoaded", () => {
            $("filters").addEventListener("submit", (event) => {
              event.preventDefault();
              const s = new URLSearchParams();
              for (const name of ["q", "section", "since", "until"]) { const raw = $(name).value; const v = name === "section" ? raw : raw.trim(); if (v.trim() && !$(name).disabled) s.set(name, v); }
              if ($("sort").value !== "newest") s.set("sort", $("sort").value);
              lastListKey = null;
              setState(s);
            });
            $("reset").addEventListener("click", () => { lastListKey = null; setState(new URLSearchParams()); });
            $("sort").addEventListener("change", datesApply);
            $("q").addEventListener("input", datesApply);
            $("more").addEventListener("click", () => loadList(true));
            if (window.IntersectionObserver) {
              new IntersectionObserver((entries) => {
                if (entries.some((e) => e.isIntersecting) && next) loadList(true);
              }).observe($("more"));
            }
            window.addEventListener("hashchange", route);
            loadSections();
            loadInfo();
            route();
            watch();
          });
        })();

        """#
}
