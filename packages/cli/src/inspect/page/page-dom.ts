/* exported pageDom */
/** The page's DOM helpers, bound to its document. Every text reaches the DOM as a text node. */
interface PageDom {
  readonly doc: Document
  /** A new element with an optional class and text. */
  el(tag: string, cls?: string, text?: string): HTMLElement
  /** Appends `children` to `parent` and returns `parent`. */
  add(parent: HTMLElement, ...children: HTMLElement[]): HTMLElement
  /** The last 8 characters of an id, marked as shortened. */
  short(id: string): string
  /** Appends `text`, showing control characters and lone surrogates as marked symbols. */
  appendVisible(parent: HTMLElement, text: string): void
  /** A text box showing the first `limit` characters, with a button that shows the rest. */
  textBlock(cls: string, text: string, limit: number): HTMLElement
}

/** The DOM helpers of the page for `doc`. */
function pageDom(doc: Document): PageDom {
  const el = (tag: string, cls?: string, text?: string): HTMLElement => {
    const e = doc.createElement(tag)
    if (cls !== undefined) e.className = cls
    if (text !== undefined) e.appendChild(doc.createTextNode(text))
    return e
  }
  const add = (parent: HTMLElement, ...children: HTMLElement[]): HTMLElement => {
    for (const c of children) parent.appendChild(c)
    return parent
  }
  const short = (id: string): string => (id.length > 8 ? `…${id.slice(-8)}` : id)
  const appendVisible = (parent: HTMLElement, text: string): void => {
    let run = ''
    const flush = (): void => {
      if (run !== '') parent.appendChild(doc.createTextNode(run))
      run = ''
    }
    const special = (shown: string, title: string): void => {
      flush()
      const s = el('span', 'ctl', shown)
      s.title = title
      parent.appendChild(s)
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          run += text.slice(i, i + 2)
          i++
          continue
        }
      }
      const hex = c.toString(16).toUpperCase().padStart(4, '0')
      if (c >= 0xd800 && c <= 0xdfff) special(`\\u${hex}`, `lone surrogate U+${hex}`)
      else if (c === 0x0a || c === 0x09) run += text[i] ?? ''
      else if (c < 0x20) special(String.fromCharCode(0x2400 + c), `control character U+${hex}`)
      else if (c === 0x7f) special('\u2421', 'control character U+007F')
      else if (c >= 0x80 && c < 0xa0) special(`\\x${hex.slice(2)}`, `control character U+${hex}`)
      // line/paragraph separators and every bidi control (Unicode's Bidi_Control: embeddings, overrides,
      // isolates and the marks LRM, RLM, ALM), which can reorder what the page shows
      else if (
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x061c ||
        c === 0x200e ||
        c === 0x200f ||
        (c >= 0x202a && c <= 0x202e) ||
        (c >= 0x2066 && c <= 0x2069)
      )
        special(`\\u${hex}`, `invisible formatting character U+${hex}`)
      else run += text[i] ?? ''
    }
    flush()
  }
  const textBlock = (cls: string, text: string, limit: number): HTMLElement => {
    const box = el('div', cls)
    if (text.length <= limit) {
      appendVisible(box, text)
      return box
    }
    const head = el('span')
    appendVisible(head, text.slice(0, limit))
    const rest = el('span', 'rest')
    appendVisible(rest, text.slice(limit))
    const more = el('button', 'more', `show all (${text.length} characters)`)
    more.setAttribute('type', 'button')
    more.addEventListener('click', () => {
      box.classList.add('expanded')
    })
    return add(box, head, rest, more)
  }
  return { doc, el, add, short, appendVisible, textBlock }
}
