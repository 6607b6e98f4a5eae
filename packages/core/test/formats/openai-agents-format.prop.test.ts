import { openAIAgentsItemArb, openAIAgentsCallArb } from '@turnlog/testing'
import { describeItemFormatProperties } from '../support/item-format-properties.js'

describeItemFormatProperties({ format: 'openai-agents', itemArb: openAIAgentsItemArb, callArb: openAIAgentsCallArb })
