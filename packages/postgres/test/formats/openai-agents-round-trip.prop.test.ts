import { openAIAgentsFormat } from '@turnlog/core'
import { openAIAgentsCallArb, openAIAgentsItemArb } from '@turnlog/testing'
import { describeItemFormatRoundTrip } from '../support/item-format-round-trip.js'

// append → load → toWire of openai-agents payloads, and the audit of their pairing, on Postgres and PGlite.
describeItemFormatRoundTrip({
  format: 'openai-agents',
  formatObject: openAIAgentsFormat,
  itemArb: openAIAgentsItemArb,
  callArb: openAIAgentsCallArb,
})
