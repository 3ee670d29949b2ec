import { z } from 'zod';
import { chunkText, splitSentences } from '../../text/chunk.js';
import { extractEntities } from '../../text/entities.js';
import { classifyFactType, FACT_TYPES, type FactType } from '../../text/fact-type.js';
import { keywordTerms } from '../../text/terms.js';
import { findDates } from '../../text/temporal.js';
import type { BankConfig } from '../bank-config.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import type { EntityInput } from '../types.js';

/** One unit to store: a verbatim chunk, or an extracted fact. */
export interface Fact {
  text: string;
  type: FactType;
  entities: EntityInput[];
  occurred_start: Date | null;
  occurred_end: Date | null;
  /** Which chunk of the item's content it came from (null when the content was one chunk). */
  chunk: number | null;
}

export interface ItemSource {
  content: string;
  context?: string;
  fact_type?: FactType;
  entities?: EntityInput[];
  mentioned: Date;
}

export type Extraction = 'chunks' | 'local' | 'llm';

/** Verbatim chunks are at most this long; model extraction reads chunks of this size. */
const CHUNK_TOKENS = 1000;
const LLM_CHUNK_TOKENS = 2000;

function datesOf(text: string, mentioned: Date) {
  const first = findDates(text, mentioned)[0];
  return { occurred_start: first?.start ?? null, occurred_end: first?.end ?? null };
}

function withAutoEntities(text: string, supplied: EntityInput[]): EntityInput[] {
  const known = new Set(supplied.map((e) => e.text.toLowerCase()));
  return [...supplied, ...extractEntities(text).filter((e) => !known.has(e.text.toLowerCase()))];
}

/** `chunks`: the content verbatim, split only when it is long. */
export function verbatimChunks(item: ItemSource, autoEntities: boolean, chunkChars?: number | null): Fact[] {
  const chunks = chunkText(item.content, chunkChars ? Math.ceil(chunkChars / 4) : CHUNK_TOKENS);
  const parts = chunks.length ? chunks : [item.content];
  return parts.map((text, k) => ({
    text,
    type: item.fact_type ?? classifyFactType(text),
    entities: autoEntities ? withAutoEntities(text, item.entities ?? []) : [...(item.entities ?? [])],
    ...datesOf(text, item.mentioned),
    chunk: parts.length > 1 ? k : null,
  }));
}

const SPEAKER = /^([\p{Lu}][\p{L}\p{N} .'-]{0,40}):\s+/u;

/**
 * The local extractor (no model): sentences become facts, each made self-contained by its
 * speaker ("Caroline: ..."), typed by rules, with its entities and dates. `concise` keeps the
 * sentences that carry at least three content words; `verbose` and `custom` keep them all.
 */
export function localFacts(item: ItemSource, mode: 'concise' | 'verbose' | 'custom'): Fact[] {
  const chunks = chunkText(item.content, CHUNK_TOKENS);
  const facts: Fact[] = [];
  chunks.forEach((chunk, k) => {
    for (const turn of chunk.split(/\n+/)) {
      const speaker = SPEAKER.exec(turn)?.[1];
      const body = speaker ? turn.slice(speaker.length + 1).trim() : turn.trim();
      for (const sentence of splitSentences(body)) {
        if (mode === 'concise' && keywordTerms(sentence).length < 3) continue;
        const text = speaker ? `${speaker}: ${sentence}` : sentence;
        facts.push({
          text,
          type: item.fact_type ?? classifyFactType(sentence),
          entities: withAutoEntities(text, item.entities ?? []),
          ...datesOf(sentence, item.mentioned),
          chunk: chunks.length > 1 ? k : null,
        });
      }
    }
  });
  // A concise pass that found nothing significant still keeps the item whole.
  return facts.length ? facts : verbatimChunks(item, true);
}

const LlmFacts = z.object({
  facts: z.array(
    z.object({
      text: z.string().min(1),
      fact_type: z.enum(FACT_TYPES).catch('world'),
      entities: z.array(z.object({ text: z.string().min(1), type: z.string().default('OTHER') })).default([]),
      occurred_start: z.string().nullable().optional(),
      occurred_end: z.string().nullable().optional(),
    }),
  ),
});

const FACT_SCHEMA = {
  type: 'object',
  properties: {
    facts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          text: { type: 'string' },
          fact_type: { type: 'string', enum: [...FACT_TYPES] },
          entities: {
            type: 'array',
            items: {
              type: 'object',
              properties: { text: { type: 'string' }, type: { type: 'string' } },
              required: ['text', 'type'],
            },
          },
          occurred_start: { type: ['string', 'null'] },
          occurred_end: { type: ['string', 'null'] },
        },
        required: ['text', 'fact_type', 'entities'],
      },
    },
  },
  required: ['facts'],
};

const MODE_RULES = {
  concise:
    'Extract few facts: only what is significant and worth remembering about the people involved. Merge related details into one fact. Skip small talk.',
  verbose:
    'Extract every distinct fact, with its details (who, what, where, when, why). Do not skip anything specific.',
  custom: 'Extract facts as the bank instructions below direct.',
} as const;

function systemPrompt(mode: 'concise' | 'verbose' | 'custom', cfg: BankConfig): string {
  const custom = cfg.retain_custom_instructions;
  return [
    'You turn text into memories for an AI agent.',
    MODE_RULES[mode],
    cfg.retain_mission ? `This bank's mission: ${cfg.retain_mission}` : '',
    'Each fact must be self-contained: name people instead of using pronouns, and state dates absolutely when the text allows (the text was said at the given time).',
    `Classify each fact as one of: ${FACT_TYPES.join(', ')} (world: general facts; experience: events someone lived; preference: likes and dislikes; profile: who someone is; procedure: how to do something; reasoning: why; correction: a fix to something said before; observation: a pattern).`,
    'List the entities (people, places, organisations, things) each fact mentions, with types PERSON, PLACE, ORGANIZATION, DATE or OTHER.',
    'occurred_start / occurred_end: ISO 8601 when the fact says when it happened, else null.',
    mode === 'custom' && custom ? `Bank instructions:\n${custom}` : '',
    'Answer with JSON only: {"facts": [...]}.',
  ]
    .filter(Boolean)
    .join('\n');
}

function parseDate(v: string | null | undefined): Date | null {
  if (!v) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Model extraction of one item, chunk by chunk. Any model failure is a 502 `llm_error`; nothing is stored. */
export async function llmFacts(
  s: Pick<Services, 'llm'>,
  item: ItemSource,
  mode: 'concise' | 'verbose' | 'custom',
  cfg: BankConfig,
  signal?: AbortSignal,
): Promise<{ facts: Fact[]; usage: { input: number; output: number } }> {
  const llm = s.llm!;
  const chunks = chunkText(item.content, LLM_CHUNK_TOKENS);
  const usage = { input: 0, output: 0 };
  const facts: Fact[] = [];
  for (const [k, chunk] of chunks.entries()) {
    let parsed: z.infer<typeof LlmFacts>;
    try {
      const res = await llm.complete({
        system: systemPrompt(mode, cfg),
        messages: [
          {
            role: 'user',
            content: `Said at: ${item.mentioned.toISOString()}\n${item.context ? `Context: ${item.context}\n` : ''}Text:\n${chunk}`,
          },
        ],
        jsonSchema: { name: 'facts', schema: FACT_SCHEMA },
        temperature: 0,
        signal,
      });
      usage.input += res.usage.inputTokens;
      usage.output += res.usage.outputTokens;
      parsed = LlmFacts.parse(res.json);
    } catch (err) {
      // Aborted, or refused by a budget before the call (429): not the model's failure.
      if (signal?.aborted || err instanceof AppError) throw err;
      throw new AppError('llm_error', `fact extraction failed: ${(err as Error).message}`);
    }
    const supplied = item.entities ?? [];
    for (const f of parsed.facts) {
      const known = new Set(supplied.map((e) => e.text.toLowerCase()));
      const found = datesOf(f.text, item.mentioned);
      facts.push({
        text: f.text,
        type: item.fact_type ?? f.fact_type,
        entities: [...supplied, ...f.entities.filter((e) => !known.has(e.text.toLowerCase()))],
        occurred_start: parseDate(f.occurred_start) ?? found.occurred_start,
        occurred_end: parseDate(f.occurred_end) ?? found.occurred_end,
        chunk: chunks.length > 1 ? k : null,
      });
    }
  }
  return { facts, usage };
}

/** Facts of one item under the bank's extraction mode; says which extractor ran. */
export async function extractItem(
  s: Pick<Services, 'llm'>,
  item: ItemSource,
  cfg: BankConfig,
  signal?: AbortSignal,
): Promise<{ facts: Fact[]; extraction: Extraction; usage: { input: number; output: number } }> {
  const mode = cfg.retain_extraction_mode;
  const none = { input: 0, output: 0 };
  if (mode === 'chunks') {
    return {
      facts: verbatimChunks(item, cfg.retain_auto_entities, cfg.retain_chunk_size),
      extraction: 'chunks',
      usage: none,
    };
  }
  if (!s.llm) return { facts: localFacts(item, mode), extraction: 'local', usage: none };
  const { facts, usage } = await llmFacts(s, item, mode, cfg, signal);
  return { facts, extraction: 'llm', usage };
}
