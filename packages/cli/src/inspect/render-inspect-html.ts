import { readFileSync } from 'node:fs'
import type { InspectModel } from './build-inspect-model.js'

/**
 * The compiled browser scripts of the page (`src/inspect/page/`, its own TypeScript project), written by
 * the build to `dist/page/` and shipped in the package; the entry point, which runs the page, last. The
 * URL is the same from `dist/inspect/` (the installed CLI) and `src/inspect/` (the sources, under Jest):
 * both sit two levels below the package root.
 */
const PAGE_DIR_URL = new URL('../../dist/page/', import.meta.url)
const PAGE_SCRIPTS = [
  'inspect-model-types.js',
  'page-dom.js',
  'page-links.js',
  'index-inspect-model.js',
  'render-header.js',
  'render-lineage.js',
  'render-problems.js',
  'render-controls.js',
  'timeline-lanes.js',
  'render-message-card.js',
  'render-event-card.js',
  'render-timeline.js',
  'inspect-page.js',
] as const

let pageScript: string | undefined

/**
 * The inspect page's script as inlined into the HTML: the compiled files in one function scope (their
 * functions stay off `window`), ASCII only (the non-ASCII characters of the scripts, all in string
 * literals, become `\u` escapes, so the file reads the same whatever encoding a viewer assumes). Read
 * once, on first use.
 */
export function inspectPageScript(): string {
  if (pageScript === undefined) {
    const sources = PAGE_SCRIPTS.map((name) => {
      const url = new URL(name, PAGE_DIR_URL)
      try {
        return readFileSync(url, 'utf8')
      } catch (error) {
        throw new Error(`the inspect page script ${url.pathname} is missing: build the CLI (pnpm build)`, { cause: error })
      }
    })
    const source = `(function () {\n${sources.join('\n')}\n})()\n`
    const script = source.replace(/[^\t\n\r -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    // the compiled page script is ours, but a `</script` or `<!--` in it would end the element early
    if (/<\/script|<!--/i.test(script)) throw new Error('the inspect page script contains an HTML-sensitive sequence')
    pageScript = script
  }
  return pageScript
}

/**
 * JSON text safe inside a `<script>` element and pure ASCII: `<`, `>`, `&`, every non-ASCII character
 * and every control character become `\uXXXX` escapes (lone surrogates and NUL are already escaped by
 * `JSON.stringify`), so no payload can close the element or change the file's encoding.
 */
export function scriptSafeJson(value: unknown): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point: they are escaped
  return JSON.stringify(value).replace(/[<>&\u0000-\u001f\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Escapes text for an HTML text node or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/[^\x20-\x7e\n\t]/g, (c) => `&#${c.charCodeAt(0)};`)
}

const STYLE = `
:root{--bg:#f5f6f8;--card:#fff;--ink:#1f2430;--muted:#6b7280;--line:#e3e6eb;--live:#16a34a;--partial:#2563eb;--sup:#d97706;--ret:#9ca3af;--cmp:#7c3aed;--pend:#64748b;--bad:#dc2626;--warn:#d97706}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
code,pre,.args,.mid,.sid,.callid{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
#app{max-width:1180px;margin:0 auto;padding:20px 24px 40px}
header.top{display:grid;grid-template-columns:1fr auto;gap:6px 16px;align-items:center;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px 20px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.brand{grid-column:1/3;font-size:12px;letter-spacing:.06em;text-transform:uppercase;color:var(--muted)}
.brand .logo{font-weight:700;color:#111827}.brand .sep{margin:0 6px}
h1{margin:0;font-size:20px;font-weight:650}
.sid{grid-column:1/2;color:var(--muted);font-size:12.5px}
.facts{grid-column:1/2;display:flex;flex-wrap:wrap;gap:6px 14px;margin-top:6px}
.fact{color:var(--muted);font-size:13px}.fact b{color:var(--ink);font-size:15px}
.auditbadge{grid-column:2/3;grid-row:2/5;align-self:center;padding:10px 16px;border-radius:10px;font-weight:650;font-size:14px;white-space:nowrap}
.auditbadge.clean{background:#dcfce7;color:#166534}.auditbadge.dirty{background:#fee2e2;color:#991b1b}.auditbadge.info{background:#e0f2fe;color:#075985}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 8px}
section.lineage,.problems-wrap{margin-top:14px;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:12px 16px}
.chain,.children{display:flex;flex-wrap:wrap;align-items:center;gap:6px}
.children{margin-top:8px}.children .label{color:var(--muted);font-size:13px;margin-right:4px}
.node{border:1px solid var(--line);border-radius:8px;padding:3px 8px;background:#fafafa;font-size:12.5px}
.node.self{border-color:#111827;background:#111827;color:#fff}.node.self small{color:#d1d5db}
.node small{color:var(--muted)}.lineage .note{margin:8px 0 0;color:var(--muted);font-size:12px}.arrow{color:var(--muted)}
.problem{display:flex;flex-wrap:wrap;align-items:center;gap:6px;padding:6px 8px;border-radius:8px;margin:4px 0;background:#fff7ed}
.problem.sev-critical,.problem.sev-error{background:#fef2f2}.problem.sev-info{background:#f0f9ff}
.problem .sev{font-size:11px;font-weight:700;text-transform:uppercase;padding:1px 6px;border-radius:4px;background:var(--warn);color:#fff}
.problem.sev-critical .sev,.problem.sev-error .sev{background:var(--bad)}.problem.sev-info .sev{background:#0284c7}
.problem .kind{font-size:12px}.ptext{flex:1 1 300px}
.controls{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin:18px 0 10px}
.filter{border:1px solid var(--line);background:var(--card);border-radius:999px;padding:4px 12px;font:inherit;font-size:13px;cursor:pointer;color:var(--ink)}
.filter.on{background:#111827;color:#fff;border-color:#111827}
.legend{margin-left:auto;display:flex;flex-wrap:wrap;gap:10px;font-size:12px;color:var(--muted)}
.lg{display:inline-flex;align-items:center;gap:4px}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%}
.st-live.dot{background:var(--live)}.st-partial.dot{background:var(--partial)}.st-superseded-revision.dot{background:var(--sup)}.st-retracted.dot{background:var(--ret)}.st-compacted.dot{background:var(--cmp)}.st-pending.dot{background:var(--pend)}
.timeline{display:flex;flex-direction:column;gap:0}
.row{display:grid;grid-template-columns:repeat(var(--lanes),14px) 52px minmax(0,1fr);align-items:stretch}
.timeline[data-show=live] .row.evrow,.timeline[data-show=live] .row.msgrow[data-live=no]{display:none}
.timeline[data-show=changes] .row[data-status=superseded-revision]{display:none}
.lane{position:relative}
.lane.in::before{content:"";position:absolute;left:5px;top:0;bottom:0;border-left:3px solid var(--c)}
.lane.start::before{top:14px;border-top:3px solid var(--c);width:9px;border-top-left-radius:6px}
.lane.end::before{bottom:calc(100% - 20px);border-bottom:3px solid var(--c);width:9px;border-bottom-left-radius:6px}
.lane.start.end::before{top:14px;bottom:auto;height:6px}
.lane.member::after{content:"";position:absolute;left:2px;top:12px;width:9px;height:9px;border-radius:50%;background:var(--c);box-shadow:0 0 0 2px var(--bg)}
.seq{font:12px ui-monospace,Menlo,Consolas,monospace;color:var(--muted);text-align:right;padding:12px 8px 0 0}
.card{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--live);border-radius:10px;margin:4px 0;padding:8px 12px;min-width:0;box-shadow:0 1px 2px rgba(0,0,0,.03)}
.card.st-partial{border-left-color:var(--partial);border-style:dashed solid dashed solid;border-left-style:solid}
.card.st-superseded-revision{border-left-color:var(--sup);opacity:.72}
.card.st-retracted{border-left-color:var(--ret);opacity:.6;background:#fafafa}
.card.st-retracted .content{text-decoration:line-through;text-decoration-color:#9ca3af}
.card.st-compacted{border-left-color:var(--cmp);opacity:.62;background:#faf8ff}
.card.st-pending{border-left-color:var(--pend)}
.card.pairing-problem{box-shadow:0 0 0 2px var(--bad);opacity:1}
.card.has-finding{outline:2px solid rgba(220,38,38,.35);outline-offset:1px}
.head{display:flex;flex-wrap:wrap;align-items:center;gap:6px;font-size:12.5px}
.role{font-weight:700;text-transform:uppercase;font-size:11px;letter-spacing:.04em;padding:1px 7px;border-radius:4px;color:#fff;background:#6b7280}
.r-system,.r-developer{background:#475569}.r-user{background:#2563eb}.r-assistant{background:#059669}.r-tool{background:#c2410c}
.fmt{font-size:11px;font-family:ui-monospace,Menlo,Consolas,monospace;padding:0 6px;border-radius:4px;border:1px solid #c7d2fe;background:#eef2ff;color:#3730a3}.pkind{font-size:11.5px;color:var(--muted);font-style:italic}
.call.unanswered{background:#fef2f2;border-color:#fecaca}.call.unanswered .arrow{color:var(--bad)}.call .state{font-size:11px;color:var(--muted)}.call.unanswered .state{color:var(--bad);font-weight:600}
.mid{color:#374151;background:#f3f4f6;border-radius:4px;padding:0 5px}
.status{font-size:11.5px;font-weight:600;padding:0 7px;border-radius:999px;border:1px solid currentColor}
.status.st-live{color:var(--live)}.status.st-partial{color:var(--partial)}.status.st-superseded-revision{color:var(--sup)}.status.st-retracted{color:#6b7280}.status.st-compacted{color:var(--cmp)}.status.st-pending{color:var(--pend)}
.tag{font-size:11.5px;padding:0 7px;border-radius:999px;background:#f3f4f6;color:#374151}
.tag.streamed{background:#dbeafe;color:#1e40af}.tag.summary{background:#ede9fe;color:#5b21b6}.tag.inherited{background:#e0f2fe;color:#075985}.tag.ext{background:#fef9c3;color:#854d0e}
.fbadge{font-size:11.5px;font-weight:600;padding:0 7px;border-radius:4px;color:#fff;background:var(--warn)}
.fbadge.sev-error,.fbadge.sev-critical{background:var(--bad)}.fbadge.sev-info{background:#0284c7}
.when{margin-left:auto;color:var(--muted);font-size:11.5px;font-family:ui-monospace,Menlo,Consolas,monospace}
.body{margin-top:6px}
.content{white-space:pre-wrap;overflow-wrap:anywhere}
.content .rest,.content.expanded .more{display:none}.content.expanded .rest{display:inline}
.more{margin-left:6px;border:0;background:none;color:#2563eb;cursor:pointer;font:inherit;font-size:12px}
.answers{font-size:12px;color:#9a3412;margin-bottom:2px}
.empty{color:var(--muted);font-style:italic}
.calls{display:flex;flex-direction:column;gap:3px;margin-top:4px}
.call{display:flex;align-items:baseline;gap:8px;background:#f0fdf4;border:1px solid #bbf7d0;border-radius:6px;padding:3px 8px;min-width:0}
.call .arrow{color:#059669}.call .args{flex:1;color:#374151;font-size:12.5px;overflow-wrap:anywhere}.callid{font-size:11.5px;color:var(--muted)}
.warn{margin-top:6px;color:var(--bad);font-weight:600;font-size:13px}
.fate{margin-top:6px;font-size:12px;color:var(--muted);display:flex;flex-wrap:wrap;gap:4px;align-items:center}
.raw{margin-top:6px}.raw summary{cursor:pointer;color:var(--muted);font-size:12px}
.raw pre{margin:6px 0 0;background:#0f172a;color:#e2e8f0;border-radius:8px;padding:10px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:360px;overflow:auto}
.ctl{background:#fde68a;color:#92400e;border-radius:3px;padding:0 2px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
.raw pre .ctl{background:#b45309;color:#fff}
.card.event{border-left-color:var(--c,#94a3b8);background:linear-gradient(90deg,#f8fafc,#fff);padding:6px 12px}
.card.event .head{font-size:13px}.card.event .icon{font-size:16px;color:var(--c,#64748b);width:18px;text-align:center}
.evtext{color:#374151}
.covers{display:flex;flex-wrap:wrap;align-items:center;gap:4px;margin-top:5px}
.covers .label{font-size:12px;color:var(--muted)}
.idchip,.seqchip{border:1px solid var(--line);background:#fff;border-radius:6px;padding:0 6px;font:12px ui-monospace,Menlo,Consolas,monospace;color:#374151;cursor:pointer}
.covers .idchip{border-color:var(--c,#cbd5e1)}
.row.flash .card{animation:flash 1.2s ease-out}
@keyframes flash{from{box-shadow:0 0 0 4px #fbbf24}to{box-shadow:0 0 0 0 transparent}}
footer{margin-top:24px;color:var(--muted);font-size:12px;text-align:center}
noscript p{background:#fef3c7;padding:12px;border-radius:8px}
`

/**
 * The inspect page: one self-contained HTML file (inline CSS and script, no network) that renders the
 * {@link InspectModel} embedded in it as a timeline.
 */
export function renderInspectHtml(model: InspectModel): string {
  const script = inspectPageScript()
  const title = `turnlog · session ${model.session.id}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<div id="app"><noscript><p>This page renders the session with JavaScript; the data is in the turnlog-data script element.</p></noscript></div>
<script type="application/json" id="turnlog-data">${scriptSafeJson(model)}</script>
<script>${script}</script>
</body>
</html>
`
}
