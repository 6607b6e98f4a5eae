/**
 * The script of the inspect page: it runs in the browser. This directory is its own TypeScript project
 * (`tsconfig.json` here: the DOM lib, compiled as classic scripts, not modules); the build writes each
 * file to `dist/page/`, and `renderInspectHtml` inlines them, this entry point last, into one script
 * element of the HTML it writes, inside one function scope. The scripts must stay self-contained: no
 * imports at run time (the model's types come from the CLI project through `import()` types, erased at
 * compile time, see inspect-model-types.ts), no references to anything outside this directory; each
 * declares one function that the others call by name (listed in its `exported` comment for the linter).
 * Every text reaches the DOM through `createTextNode`, never as markup.
 */

/** Renders the timeline from the JSON model embedded in `#turnlog-data` into `#app`. */
function inspectPage(doc: Document): void {
  const dataEl = doc.getElementById('turnlog-data')
  const app = doc.getElementById('app')
  if (dataEl === null || app === null) return
  const model = JSON.parse(dataEl.textContent ?? '{}') as InspectModel
  const dom = pageDom(doc)
  const index = indexInspectModel(model)
  const links = pageLinks(dom)
  const timeline = dom.el('section', 'timeline')
  app.appendChild(renderHeader(dom, model, index))
  const lineage = renderLineage(dom, model, links)
  if (lineage !== null) app.appendChild(lineage)
  const problems = renderProblems(dom, model, index, links)
  if (problems !== null) app.appendChild(problems)
  app.appendChild(renderControls(dom, timeline))
  renderTimeline(dom, model, timeline, index, links)
  app.appendChild(timeline)
  app.appendChild(
    dom.el(
      'footer',
      undefined,
      `turnlog inspect · format ${model.formatVersion} · generated ${model.generatedAt} · ${model.items.length} timeline entries`,
    ),
  )
  doc.body.setAttribute('data-rendered', 'ok')
  doc.body.setAttribute('data-items', String(model.items.length))
}

inspectPage(document)
