import { canonicalJson } from '../content-hash.js'

/**
 * What becomes of an item whose own `id` an earlier item of the run already sent (a re-inserted
 * transcript, a history sent again, a compaction that carries a covered item again): OpenAI refuses an
 * input holding one item id twice ("Duplicate item found with id …").
 *
 * - `without-id`: sent without its `id` (a kind whose input `id` is optional): its content is kept
 *   whole, and the API reads it as an item of its own;
 * - `left-out`: not sent (an item whose only meaning the API reads is its id, already in the request:
 *   an item reference);
 * - `left-out-if-same`: not sent when it is the item first sent under its id again, byte for byte
 *   (canonical JSON); otherwise sent as it is (a kind whose `id` is required: dropping another
 *   content would lose it);
 * - `as-is`: sent as it is (a kind whose `id` is required and that opens or answers a call, which a
 *   run may not leave out; an item kind this version does not know).
 */
export type RepeatedItemId = 'without-id' | 'left-out' | 'left-out-if-same' | 'as-is'

/** How a format's items read for {@link sendEachItemIdOnce}. Every hook gets a wire copy (an object). */
export interface ItemIdRules {
  /** A stored placeholder the provider refuses back (redacted encrypted reasoning): never sent. */
  readonly placeholder: (item: Readonly<Record<string, unknown>>) => boolean
  /**
   * A reasoning item: the items its response outputs after it are tied to it by their ids. One under
   * an id already sent is left out.
   */
  readonly reasoning: (item: Readonly<Record<string, unknown>>) => boolean
  /**
   * An item the API ties to its response's reasoning item by its own `id` and that may go without
   * it (an assistant message, a function or custom tool call).
   */
  readonly tiedToReasoning: (item: Readonly<Record<string, unknown>>) => boolean
  /** An input item (a user message, a call's output, …): it ends the response before it. */
  readonly endsResponse: (item: Readonly<Record<string, unknown>>) => boolean
  /** What becomes of an item (not a reasoning item) when an earlier item of the run, `first`, was sent under its `id`. */
  readonly repeated: (item: Readonly<Record<string, unknown>>, first: Readonly<Record<string, unknown>>) => RepeatedItemId
}

/** The item's own id: a non-empty string `id`, else undefined. */
function ownId(item: Readonly<Record<string, unknown>>): string | undefined {
  const id = item['id']
  return typeof id === 'string' && id.length > 0 ? id : undefined
}

/**
 * What is sent of a run of wire copies of provider items (Responses API items, Agents SDK items),
 * each item id once: a placeholder is left out; a reasoning item whose `id` an earlier item of the run
 * sent is left out; any other item whose `id` an earlier item sent goes as `rules.repeated` says.
 *
 * The API ties the items a response outputs to that response's reasoning item by id and refuses one
 * without it ("Item 'fc_…' of type 'function_call' was provided without its required 'reasoning'
 * item"). A response runs from a reasoning item to the next reasoning item or input item. So an item
 * {@link ItemIdRules.tiedToReasoning} keeps its `id` only when the reasoning item heading its response
 * in what is sent is the one heading it in the list (by id; none in both is the same): after a
 * left-out reasoning item, or where a left-out input item no longer ends the response before it, it
 * goes without its `id` (its `call_id` stays, so its output still pairs).
 *
 * An id is counted as sent only when an item goes with it. No copy that opens or answers a call is
 * left out. The copies are fresh: they are changed in place.
 */
export function sendEachItemIdOnce(copies: unknown[], rules: ItemIdRules): unknown[] {
  const out: unknown[] = []
  // the first item sent under each id
  const sent = new Map<string, Readonly<Record<string, unknown>>>()
  // the id of the reasoning item heading the current response, in the list and in what is sent (null: none)
  let listHead: string | null = null
  let sentHead: string | null = null
  for (const copy of copies) {
    if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
      out.push(copy)
      continue
    }
    const item = copy as Record<string, unknown>
    const id = ownId(item)
    if (rules.placeholder(item)) {
      if (rules.reasoning(item)) listHead = id ?? null
      else if (rules.endsResponse(item)) listHead = null
      continue
    }
    const first = id === undefined ? undefined : sent.get(id)
    if (rules.reasoning(item)) {
      // a repeat is left out: the API reads a reasoning item by its id (its encrypted content is the
      // same item's), its input type requires the id, and the first one is in the request
      listHead = id ?? null
      if (first !== undefined) continue
      if (id !== undefined) sent.set(id, item)
      sentHead = listHead
      out.push(item)
      continue
    }
    const ends = rules.endsResponse(item)
    if (ends) listHead = null
    else if (listHead !== sentHead && rules.tiedToReasoning(item)) {
      // sent after another reasoning item than its own (or none): an item of its own, not recorded as sent
      delete item['id']
      out.push(item)
      continue
    }
    if (first !== undefined) {
      const repeated = rules.repeated(item, first)
      if (repeated === 'left-out') continue
      if (repeated === 'left-out-if-same' && canonicalJson(item) === canonicalJson(first)) continue
      if (repeated === 'without-id') delete item['id']
    } else if (id !== undefined) sent.set(id, item)
    if (ends) sentHead = null
    out.push(item)
  }
  return out
}
