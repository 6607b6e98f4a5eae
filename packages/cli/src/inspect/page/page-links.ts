/* exported pageLinks */
/** The page's internal links: rows by key (`m:<message id>`, `s:<seq>`) and the chips that jump to them. */
interface PageLinks {
  /** Filled by the timeline as it renders its rows. */
  readonly rowFor: Map<string, HTMLElement>
  /** Scrolls to the row of `key` and flashes it (nothing when there is none). */
  jump(key: string): void
  /** A button showing a message id that jumps to the message. */
  idChip(id: string): HTMLElement
}

/** The links of the page drawn with `dom`. */
function pageLinks(dom: PageDom): PageLinks {
  const rowFor = new Map<string, HTMLElement>()
  const jump = (key: string): void => {
    const target = rowFor.get(key)
    if (target === undefined) return
    target.scrollIntoView({ block: 'center', behavior: 'smooth' })
    target.classList.add('flash')
    setTimeout(() => target.classList.remove('flash'), 1200)
  }
  const idChip = (id: string): HTMLElement => {
    const b = dom.el('button', 'idchip', dom.short(id))
    b.setAttribute('type', 'button')
    b.title = id
    b.addEventListener('click', () => jump(`m:${id}`))
    return b
  }
  return { rowFor, jump, idChip }
}
