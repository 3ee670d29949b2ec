import { countTokens, splitByTokens } from '../../text/tokens.js';
import type { Budget } from '../recall/budget.js';
import type { RecallResult } from '../recall/recall.js';
import type { Disposition } from './disposition.js';
import type { Evidence, MemoryEvidence, ObservationEvidence } from './evidence.js';

/** Longest extractive answer per budget, in tokens. */
export const EXTRACTIVE_TOKENS: Record<Budget, number> = { low: 300, mid: 600, high: 1200 };

/** Words that mark a memory as being about feelings, for the empathy note. */
const FEELING =
  /\b(?:feel|feels|felt|feeling|feelings|sad|upset|anxious|anxiety|stressed|stress|worried|worry|afraid|scared|lonely|grief|grieving|depressed|excited|angry|frustrated|overwhelmed|hurt|heartbroken|proud|ashamed|nervous|cried|crying|happy|unhappy|miserable|devastated|relieved|grateful)\b/i;

type Item =
  | { kind: 'observation'; score: number; keyword: number; e: ObservationEvidence }
  | { kind: 'memory'; score: number; keyword: number; e: MemoryEvidence };

export interface ExtractiveAnswer {
  text: string;
  observations: ObservationEvidence[];
  memories: MemoryEvidence[];
}

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : null);
/** Words of a statement quoted beside another. */
const QUOTE_WORDS = 25;
const quote = (m: { text: string; mentioned_at: Date | null }) => {
  const words = m.text.split(/\s+/);
  const text = words.length > QUOTE_WORDS ? `${words.slice(0, QUOTE_WORDS).join(' ')}…` : m.text;
  return `"${text}"${day(m.mentioned_at) ? ` (${day(m.mentioned_at)})` : ''}`;
};

/** "2 observations and 1 memory" */
function tally(items: Item[]): string {
  const obs = items.filter((i) => i.kind === 'observation').length;
  const mem = items.length - obs;
  const part = (n: number, one: string, many: string) => (n ? `${n} ${n === 1 ? one : many}` : null);
  return [part(obs, 'observation', 'observations'), part(mem, 'memory', 'memories')]
    .filter(Boolean)
    .join(' and ');
}

/** How many statements to give: literal readers get fewer, flexible ones more. */
const ITEMS_BY_LITERALISM = { 1: 12, 2: 10, 3: 8, 4: 6, 5: 3 } as const;

function attribution(m: RecallResult): string {
  return [day(m.occurred_start ?? m.mentioned_at), m.type, m.context ? `context: ${m.context}` : null]
    .filter(Boolean)
    .join(', ');
}

/**
 * The answer without a model: the best observations and memories in relevance order, one line
 * each with its date, type and context, within a token budget. The disposition shapes it as
 * far as rules can: literalism narrows it to statements sharing the question's words, high
 * skepticism marks single-source and conflicting statements (and says when nothing is firmly
 * established), high empathy notes that the memories are about feelings.
 */
export function extractiveAnswer(e: Evidence, d: Disposition, budget: Budget): ExtractiveAnswer {
  let items: Item[] = [
    ...e.observations.map((o) => ({
      kind: 'observation' as const,
      score: o.memory.scores.final,
      keyword: o.memory.scores.keyword,
      e: o,
    })),
    ...e.memories.map((m) => ({
      kind: 'memory' as const,
      score: m.memory.scores.final,
      keyword: m.memory.scores.keyword,
      e: m,
    })),
  ].sort((a, b) => b.score - a.score);
  if (d.literalism >= 4 && items.some((i) => i.keyword > 0)) items = items.filter((i) => i.keyword > 0);
  items = items.slice(0, ITEMS_BY_LITERALISM[d.literalism]);
  if (items.length === 0)
    return { text: 'I have no memories that answer this.', observations: [], memories: [] };

  const byId = new Map(e.memories.map((m) => [m.memory.id, m.memory]));
  const conflictsOf = (id: string) =>
    e.conflicts.flatMap(([a, b]) => (a === id ? [b] : b === id ? [a] : [])).flatMap((x) => byId.get(x) ?? []);

  const line = (i: Item): string => {
    const marks: string[] = [];
    if (i.kind === 'observation') {
      const { memory: m, detail, contradicting } = i.e;
      const n = detail.proof_count;
      if (d.skepticism >= 3 && contradicting.length)
        marks.push(`conflicting: ${contradicting.map(quote).join('; ')}`);
      if (d.skepticism >= 4 && n <= 1) marks.push('single source');
      const when = attribution(m);
      return `- ${m.text} (observation from ${n} ${n === 1 ? 'memory' : 'memories'}${when ? `, ${when}` : ''})${marks.map((x) => ` [${x}]`).join('')}`;
    }
    const { memory: m, copies } = i.e;
    const against = conflictsOf(m.id);
    if (d.skepticism >= 3 && against.length) marks.push(`conflicts with ${against.map(quote).join('; ')}`);
    if (d.skepticism >= 4 && copies <= 1) marks.push('single source');
    if (copies > 1 && d.skepticism >= 3) marks.push(`stated ${copies} times`);
    return `- ${m.text} (${attribution(m)})${marks.map((x) => ` [${x}]`).join('')}`;
  };

  const notes: string[] = [];
  const proof = (i: Item) => (i.kind === 'observation' ? i.e.detail.proof_count : i.e.copies);
  const disputed = items.some((i) =>
    i.kind === 'observation' ? i.e.contradicting.length > 0 : conflictsOf(i.e.memory.id).length > 0,
  );
  if (d.skepticism === 5 && disputed)
    notes.push('The memories disagree on some of this; the conflicting statements are marked.');
  if (d.skepticism === 5 && items.every((i) => proof(i) <= 1)) {
    notes.push('The memories do not firmly establish this: each statement below rests on a single memory.');
  }
  const felt = items.map((i) => i.e.memory.text).find((t) => FEELING.test(t));
  if (d.empathy >= 4 && felt)
    notes.push('Some of these memories are about feelings; they are quoted as they were recorded.');

  const limit = EXTRACTIVE_TOKENS[budget];
  let used = countTokens([...notes, 'From 10 observations and 10 memories:'].join('\n'));
  const kept: Item[] = [];
  const lines: string[] = [];
  for (const i of items) {
    let l = line(i);
    // A single statement longer than the whole budget is cut rather than left out.
    if (kept.length === 0 && countTokens(l) > limit - used)
      l = `${splitByTokens(l, Math.max(limit - used - 2, 1))[0]}…`;
    const n = countTokens(l) + 1;
    if (kept.length > 0 && used + n > limit) break;
    used += n;
    kept.push(i);
    lines.push(l);
  }
  return {
    text: [...notes, `From ${tally(kept)}:`, ...lines].join('\n'),
    observations: kept.flatMap((i) => (i.kind === 'observation' ? [i.e] : [])),
    memories: kept.flatMap((i) => (i.kind === 'memory' ? [i.e] : [])),
  };
}
