import { z } from 'zod'

/**
 * A schema for a JSON object read by its `type` (a Responses item, an Agents SDK item): `select`
 * names the schema of a known kind, or `undefined` for a kind this version does not know, which is
 * accepted verbatim (forward compatibility). The chosen schema's issues are reported with their own
 * paths, so a bad field reads `call_id`, not "no union member matched". Unknown fields are kept:
 * the payload stored is the caller's frozen copy, never the parsed value.
 */
export function typedItemSchema(select: (item: Readonly<Record<string, unknown>>) => z.ZodType | undefined): z.ZodType {
  return z.looseObject({}).superRefine((item, ctx) => {
    const schema = select(item)
    if (schema === undefined) return
    const result = schema.safeParse(item)
    if (result.success) return
    for (const issue of result.error.issues)
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, params: { code: issue.code } })
  })
}

/** A string field that, when present, is a string (the SDKs' `x?: string | null` reads null as absent). */
export const optionalString = z.string().nullable().optional()

/** A content part: an object with a string `type`, unknown fields kept. */
export const PartSchema = z.looseObject({ type: z.string() })

/**
 * A content part list where the known part kinds (`known`, by `type`) are validated and any other
 * kind is kept verbatim.
 */
export function partsSchema(known: Readonly<Record<string, z.ZodType>>): z.ZodType {
  return z.array(
    typedItemSchema((part) => (typeof part['type'] === 'string' && Object.hasOwn(known, part['type']) ? known[part['type']] : PartSchema)),
  )
}

/** The text of a list of parts: each part's `text` (or `refusal`), `[type]` for the others, space-joined. */
export function partsText(parts: unknown): string {
  if (typeof parts === 'string') return parts
  if (!Array.isArray(parts)) return ''
  return parts
    .map((p: unknown) => {
      if (typeof p !== 'object' || p === null) return ''
      const part = p as Record<string, unknown>
      if (typeof part['text'] === 'string') return part['text']
      if (typeof part['refusal'] === 'string') return part['refusal']
      return `[${String(part['type'])}]`
    })
    .join(' ')
}
