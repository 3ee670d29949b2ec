import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { LlmError } from '../../llm/errors.js';
import type { LanguageModel } from '../../llm/model.js';
import { effectiveConfig } from '../bank-config.js';
import type { Deps } from '../services.js';
import type { BankStore, MemoryStore } from '../../store/store.js';
import type { Memory, ObservationChange, ObservationRelation } from '../types.js';
import { observationMemory } from './observation.js';
import type { Neighbourhood, Step } from './step.js';

const MAX_TEXT = 2000;

const SYSTEM = `You consolidate an AI agent's memories into observations: short, self-contained statements of durable knowledge, each backed by the memories that prove it.

You get one new memory [NEW], the existing observations nearest to it ([o1], [o2], ...) and other memories that may be related ([m1], [m2], ...). Decide one action:
- "update": the new memory restates, refines or conflicts with an existing observation. Give that observation's ref and its full new text (keep it as it is when the new memory only repeats it).
- "create": the new memory and some of the other memories state the same fact, or conflict about it, and no observation covers it yet. Give the new observation's text.
- "none": the new memory is unrelated to every candidate.

Rules:
- "supports" lists the refs of memories that back the observation (NEW, m1, ...); "contradicts" lists those that conflict with it.
- Never keep two conflicting statements silently: when memories conflict, write the observation so that it states the conflict, with dates when they are known (e.g. "Alice said in March 2024 that she lives in Paris, but in June 2024 that she lives in Berlin").
- Use only what the memories say; add no facts, no advice and no speculation.
- One or two sentences, in the third person, with names rather than pronouns.`;

const PLAN_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['none', 'create', 'update'] },
    observation: { type: ['string', 'null'], description: 'ref of the observation to update, e.g. "o1"' },
    text: { type: 'string', description: 'the observation text after this step' },
    supports: { type: 'array', items: { type: 'string' } },
    contradicts: { type: 'array', items: { type: 'string' } },
  },
  required: ['action'],
} as const;

const Plan = z.object({
  action: z.enum(['none', 'create', 'update']),
  observation: z.string().nullish(),
  text: z.string().nullish(),
  supports: z.array(z.string()).nullish(),
  contradicts: z.array(z.string()).nullish(),
});

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : 'undated');

function userPrompt(n: Neighbourhood): string {
  const lines = [`New memory:\n[NEW] (${day(n.memory.mentioned_at)}) ${n.memory.text}`];
  if (n.observations.length) {
    lines.push(
      '\nExisting observations:',
      ...n.observations.map((o, i) => {
        const proof = n.details.get(o.id)?.proof_count ?? 0;
        return `[o${i + 1}] ${o.text} (backed by ${proof} ${proof === 1 ? 'memory' : 'memories'})`;
      }),
    );
  }
  if (n.memories.length) {
    lines.push(
      '\nOther memories:',
      ...n.memories.map((m, i) => `[m${i + 1}] (${day(m.mentioned_at)}) ${m.text}`),
    );
  }
  return lines.join('\n');
}

/**
 * The step a language model proposes for a new memory: null for "none", undefined when its
 * answer cannot be used (the caller falls back to the rules). Errors other than an unusable
 * answer propagate, so the operation is retried.
 */
export async function planWithModel(
  s: Deps<BankStore & MemoryStore, 'embedder'>,
  llm: LanguageModel,
  projectId: string,
  bankId: string,
  n: Neighbourhood,
  signal?: AbortSignal,
): Promise<Step | null | undefined> {
  const bank = await s.store.getBank(projectId, bankId);
  const focus = bank ? effectiveConfig(bank.config).observations_mission : null;
  let json: unknown;
  try {
    const reply = await llm.complete({
      system: focus ? `${SYSTEM}\n\nWhat this bank wants observations about:\n${focus}` : SYSTEM,
      messages: [{ role: 'user', content: userPrompt(n) }],
      jsonSchema: { name: 'consolidation_step', schema: PLAN_SCHEMA },
      maxTokens: 600,
      temperature: 0,
      signal,
    });
    json = reply.json;
  } catch (err) {
    if (err instanceof LlmError && err.kind === 'bad_response') return undefined;
    throw err;
  }
  const parsed = Plan.safeParse(json);
  if (!parsed.success) return undefined;
  const plan = parsed.data;
  if (plan.action === 'none') return null;

  const refs = new Map<string, Memory>([
    ['NEW', n.memory],
    ...n.memories.map((m, i) => [`m${i + 1}`, m] as const),
  ]);
  const verdicts = new Map<string, ObservationRelation>();
  for (const ref of plan.supports ?? []) if (refs.has(ref)) verdicts.set(refs.get(ref)!.id, 'supports');
  for (const ref of plan.contradicts ?? []) if (refs.has(ref)) verdicts.set(refs.get(ref)!.id, 'contradicts');
  if (!verdicts.has(n.memory.id)) verdicts.set(n.memory.id, 'supports');
  const links = [...verdicts].map(([memoryId, relation]) => ({ memoryId, relation }));
  const supporters = [...refs.values()].filter((m) => verdicts.get(m.id) === 'supports');
  const text = plan.text?.trim().slice(0, MAX_TEXT) ?? '';
  const contradiction = links.some((l) => l.relation === 'contradicts');

  if (plan.action === 'update') {
    const target = n.observations[Number(plan.observation?.replace(/^o/, '')) - 1];
    if (!target) return undefined;
    const change: ObservationChange = { id: target.id, writer: 'llm', links };
    if (text && text !== target.text) {
      const detail = n.details.get(target.id);
      const earlier = detail ? await s.store.getMemories(projectId, bankId, detail.source_memory_ids) : [];
      change.memory = await observationMemory(s, target.id, text, [...earlier, ...supporters]);
    }
    return { change, created: false, contradiction };
  }
  if (!text || supporters.length === 0) return undefined;
  const id = randomUUID();
  return {
    change: { id, writer: 'llm', memory: await observationMemory(s, id, text, supporters), links },
    created: true,
    contradiction,
  };
}
