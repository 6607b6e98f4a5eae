import { openAIResponsesItemArb, openAIResponsesCallArb } from '@turnlog/testing'
import { describeItemFormatProperties } from '../support/item-format-properties.js'

describeItemFormatProperties({ format: 'openai-responses', itemArb: openAIResponsesItemArb, callArb: openAIResponsesCallArb })
