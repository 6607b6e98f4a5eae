import type { BaseMessage } from '@langchain/core/messages'
import { uuid6, type BaseCheckpointSaver, type Checkpoint } from '@langchain/langgraph-checkpoint'
import { stepMessage, type LangGraphText } from './langgraph-text.js'
import { prng } from './workload.js'

/**
 * One thread's steps as LangGraph's loop drives a saver: per step one `put` (the `messages` channel,
 * grown by one message, and a small counter channel, both in `newVersions`) and one `putWrites` (the
 * task's write of that message). Returns the checkpoint id of each step.
 */
export async function runLangGraphThread(
  saver: BaseCheckpointSaver,
  text: LangGraphText,
  threadId: string,
  seed: number,
  steps: number,
): Promise<string[]> {
  const rand = prng(seed)
  let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } as Record<string, unknown> }
  const messages: BaseMessage[] = []
  const ids: string[] = []
  for (let step = 0; step < steps; step++) {
    const message = stepMessage(text, rand, seed, step)
    messages.push(message)
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(step),
      ts: new Date().toISOString(),
      channel_values: { messages: [...messages], step },
      channel_versions: { messages: step + 1, step: step + 1 },
      versions_seen: { agent: { messages: step } },
    }
    config = (await saver.put(
      config,
      checkpoint,
      { source: 'loop', step, parents: {} },
      { messages: step + 1, step: step + 1 },
    )) as typeof config
    await saver.putWrites(config, [['messages', [message]]], `task-${step}`)
    ids.push(checkpoint.id)
  }
  return ids
}
