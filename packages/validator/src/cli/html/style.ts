/**
 * The report's one stylesheet, inline (the page loads nothing). `content-visibility: auto` lets a
 * browser skip laying out events off screen, which keeps a report of thousands of events quick
 * to open.
 */
export const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--user:#ddf4ff;--agent:#f6f8fa;--code:#f6f8fa;--err:#cf222e;--err-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;--ok:#1a7f37;--ok-bg:#dafbe1;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--user:#0c2d6b;--agent:#151b23;--code:#151b23;--err:#ff7b72;--err-bg:#3c1618;--warn:#d29922;--warn-bg:#372a05;--ok:#3fb950;--ok-bg:#12261e;--link:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header,main,footer{max-width:980px;margin:0 auto;padding:12px 16px}
a{color:var(--link)}
h1{font-size:22px;margin:8px 0}
h2{font-size:17px;margin:18px 0 6px}
code,pre,.tool-name,dl.args{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;padding:6px 8px;background:var(--code);border-radius:6px;max-height:24em;overflow:auto}
.verdict{display:inline-block;padding:1px 12px;border-radius:14px;margin-right:8px}
.verdict.pass{background:var(--ok-bg);color:var(--ok)}
.verdict.fail{background:var(--err-bg);color:var(--err)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td:first-child{border-left:3px solid var(--err)}
ol.index{padding-left:2.5em;margin:4px 0}
ol.index li{margin:2px 0;overflow-wrap:anywhere}
.rule{color:var(--muted)}
.note,.meta{color:var(--muted);font-size:12px}
.note{margin:4px 0}
section.input>h2{border-bottom:1px solid var(--line);padding-bottom:4px;overflow-wrap:anywhere}
.ev{margin:10px 0;padding:4px 10px;border-left:3px solid transparent;content-visibility:auto;contain-intrinsic-size:auto 90px}
.ev p{margin:2px 0}
.meta{margin:0}
.meta a{color:inherit}
.has-error{border-left-color:var(--err)}
.has-warning{border-left-color:var(--warn)}
.bubble{width:fit-content;max-width:85%;white-space:pre-wrap;overflow-wrap:anywhere;padding:8px 12px;border-radius:14px;background:var(--agent);border:1px solid var(--line)}
.from-user .bubble{margin-left:auto;background:var(--user)}
.from-user .meta,.from-user>.note{text-align:right}
.from-other .bubble{margin:0 auto}
.thought{font-style:italic;color:var(--muted);white-space:pre-wrap;overflow-wrap:anywhere}
.tool-name{font-weight:600}
.variant{color:var(--muted);font-size:12px}
dl.args{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;margin:4px 0;padding:6px 8px;background:var(--code);border-radius:6px}
dl.args dt{color:var(--muted)}
dl.args dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:12em;overflow:auto}
.obs{margin-left:28px}
.ev.joined{margin-top:-8px}
.failed>.tool,.failure>.tool{color:var(--err)}
.line{color:var(--muted)}
.status-error,.status-stuck{color:var(--err)}
.status-finished{color:var(--ok)}
details>summary{cursor:pointer;color:var(--muted)}
.issue{margin:6px 0;padding:4px 8px;border-radius:6px;border:1px solid var(--err);background:var(--err-bg)}
.issue.warning{border-color:var(--warn);background:var(--warn-bg)}
.issue pre{background:none;padding:0;margin:2px 0;max-height:none}
.issue-head{margin:0;font-weight:600}
.issue-head .sev{text-transform:uppercase;font-size:11px;letter-spacing:.04em}
.gap{margin:12px 0;text-align:center;color:var(--muted);border:1px dashed var(--line);border-radius:6px;padding:6px}
:target{outline:2px solid var(--link);outline-offset:2px}
footer{color:var(--muted);font-size:12px}
`;
