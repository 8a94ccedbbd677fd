// HTMLAssets.swift — the HTML export's own style and script, inline (the page is one file: no network, no fonts
// but the system's), and the Content-Security-Policy that allows exactly these two and nothing else: no other
// script or style, no image, frame, font or connection. The policy names each by its SHA-256, so a change to
// either needs its hash changed too (HTMLExportTests recomputes both with sha256sum; headless Chromium reports
// a mismatch as a console error, which the integration test fails on).
//
// Light and dark follow `prefers-color-scheme`; printing uses the light colours, hides the buttons, and prints
// every folded thread unfolded: by CSS where the browser has `::details-content` (Chromium), and by the script,
// which opens them before printing and folds them again after, elsewhere.

/// The page's inline style, script and security policy.
enum HTMLAssets {
    /// The Content-Security-Policy of the page: only the inline style and script below, by hash.
    static let contentSecurityPolicy: StaticString = """
        default-src 'none'; style-src 'sha256-Q+t1/gzg5FynvKsWHWjFYIwli9t8HXUSEm9yBegyBb8='; script-src 'sha256-h0SEcpPqBlATSGMM0cIj3Kh5UZF5FBN/t1W3WVJXa9A='; \
        base-uri 'none'; form-action 'none'
        """

    /// The style sheet: CSS variables for light, dark and print.
    static let style: StaticString = """

        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1c1e21; --muted: #5d6470; --line: #d8dce2;
          --panel: #f4f6f9; --app: #0a5fb4; --app-bg: #e6f0fb; --alarm: #b3261e; --alarm-bg: #fdecea; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #141619; --fg: #e3e5e8; --muted: #9aa1ac; --line: #30343a; --panel: #1c1f23;
            --app: #78b4ff; --app-bg: #16263a; --alarm: #ff8a80; --alarm-bg: #3a1c1c; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
        header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
        header { padding-top: 20px; }
        h1 { font-size: 19px; line-height: 1.35; margin: 4px 0 12px; color: var(--alarm); overflow-wrap: anywhere; }
        h2 { font-size: 16px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
        h3 { font-size: 14px; margin: 16px 0 6px; }
        .kicker, .muted, footer { color: var(--muted); }
        .kicker { margin: 0; font-size: 12px; letter-spacing: .03em; }
        code, .mono, table.frames, table.images, table.breadcrumbs, dl.registers { font-family: ui-monospace, "DejaVu Sans Mono",
          "Liberation Mono", monospace; font-size: 12.5px; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 0; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        dd.alarm { color: var(--alarm); font-weight: 600; }
        table { border-collapse: collapse; width: 100%; }
        th { text-align: left; font-weight: 600; color: var(--muted); border-bottom: 1px solid var(--line); }
        th, td { padding: 2px 8px 2px 0; vertical-align: top; }
        td { border-bottom: 1px solid var(--panel); }
        td.path, td.source { overflow-wrap: anywhere; }
        td.index, td.address, td.time { white-space: nowrap; color: var(--muted); }
        td.time { text-align: right; }
        td.level { white-space: nowrap; }
        td.message { overflow-wrap: anywhere; width: 100%; }
        td.size, td.build-id, td.name, td.image { white-space: nowrap; }
        tr.app td { background: var(--app-bg); }
        tr.app td:first-child { box-shadow: inset 3px 0 var(--app); padding-left: 6px; }
        tr.app td.function, tr.app td.name { color: var(--app); font-weight: 700; }
        td:first-child, th:first-child { padding-left: 6px; }
        .note { display: inline-block; margin-left: 6px; padding: 0 5px; border-radius: 3px; font-size: 11px;
          background: var(--panel); color: var(--muted); font-family: system-ui, sans-serif; }
        .note.handler { background: var(--alarm-bg); color: var(--alarm); }
        .stop { margin: 6px 0; color: var(--muted); }
        dl.registers { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 0 16px;
          margin: 4px 0 0; }
        dl.registers div { display: flex; gap: 8px; }
        dl.registers dt { min-width: 64px; text-align: right; color: var(--muted); }
        dl.registers dd { margin: 0; }
        details { margin: 6px 0; border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
        details details { border-style: dashed; }
        summary { cursor: pointer; overflow-wrap: anywhere; }
        summary .mono { color: var(--muted); }
        .fault { border-left: 3px solid var(--alarm); padding: 2px 0 2px 12px; margin: 10px 0; }
        ul.errors { margin: 0; padding-left: 20px; font-family: ui-monospace, "DejaVu Sans Mono", monospace;
          font-size: 12.5px; }
        ul.errors li { overflow-wrap: anywhere; }
        #toolbar { margin: 0 0 8px; }
        button { font: inherit; font-size: 12px; color: var(--fg); background: var(--panel);
          border: 1px solid var(--line); border-radius: 4px; padding: 2px 10px; cursor: pointer; }
        .columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 0 32px; }
        footer { margin-top: 32px; padding-bottom: 24px; font-size: 12px; }
        @media print {
          :root { color-scheme: light; --bg: #fff; --fg: #000; --muted: #444; --line: #bbb; --panel: #eee;
            --app: #000; --app-bg: #eef3fa; --alarm: #000; --alarm-bg: #eee; }
          body { font-size: 10.5pt; }
          header, main, footer { max-width: none; padding: 0; }
          #toolbar { display: none; }
          details { border: none; padding: 0; }
          details::details-content { content-visibility: visible; display: block; }
          tr { break-inside: avoid; }
          h2, h3 { break-after: avoid; }
        }

        """

    /// The script: buttons that unfold or fold every thread, and every thread unfolded while printing.
    static let script: StaticString = """

        (function () {
          "use strict";
          var folded = [];
          function setAll(open) {
            document.querySelectorAll("details").forEach(function (d) { d.open = open; });
          }
          document.getElementById("expand").addEventListener("click", function () { setAll(true); });
          document.getElementById("collapse").addEventListener("click", function () { setAll(false); });
          document.getElementById("toolbar").hidden = false;
          window.addEventListener("beforeprint", function () {
            folded = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
            folded.forEach(function (d) { d.open = true; });
          });
          window.addEventListener("afterprint", function () {
            folded.forEach(function (d) { d.open = false; });
            folded = [];
          });
        })();

        """
}
