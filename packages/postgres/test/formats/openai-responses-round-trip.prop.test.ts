import { openAIResponsesFormat } from '@turnlog/core'
import { openAIResponsesCallArb, openAIResponsesItemArb } from '@turnlog/testing'
import { describeItemFormatRoundTrip } from '../support/item-format-round-trip.js'

// append → load → toWire of openai-responses payloads, and the audit of their pairing, on Postgres and PGlite.
describeItemFormatRoundTrip({
  format: 'openai-responses',
  formatObject: openAIResponsesFormat,
  itemArb: openAIResponsesItemArb,
  callArb: openAIResponsesCallArb,
})
