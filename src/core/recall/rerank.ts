import { speakerOf } from '../../text/entities.js';
import { memoByText } from '../../text/memo.js';
import { keywordTerms } from '../../text/terms.js';
import type { FactType, Memory } from '../types.js';
import { contextGroup } from './context-terms.js';
import type { AnalyzedQuery } from './query.js';

/** A fused candidate with its channel scores, each in [0, 1] (0 when the channel missed it). */
export interface Candidate {
  memory: Memory;
  semantic: number;
  keyword: number;
  graph: number;
  temporal: number;
}

/**
 * How much each signal counts in the reranker, keyword = 1. Chosen on the LoCoMo development
 * split with round values (docs/recall.md has the ablation): lexical evidence dominates;
 * GloVe similarity helps only at a low weight; a date the query names, and the speaker a
 * question names, are strong evidence; a memory that only asks questions states no fact.
 */
export const RERANK_WEIGHTS = {
  /** BM25, relative to the best keyword hit of the bank. */
  keyword: 1,
  /** Cosine similarity of the embeddings. */
  semantic: 0.1,
  /**
   * Inside the time range the query names; doubled (`ABSOLUTE_WINDOW`) when the range is a
   * calendar date the query names rather than one relative to when it is asked.
   */
  temporal: 0.5,
  /** Linked to the query's entities or their graph neighbours. */
  graph: 0.3,
  /** The query names the memory's speaker (full) or an entity linked to it (half). */
  entity: 0.3,
  /** Keyword evidence of the other candidates of the same conversation or document. */
  context: 0.2,
  /** Query terms close together in the memory. */
  proximity: 0.05,
  /** The query asks "when" and the memory carries a date. */
  dated: 0.3,
  /** The query asks "how many/much" and the memory states a number (an amount of money for money). */
  quantity: 0.3,
  /** Newer (relative to `query_timestamp`) first, all else equal. */
  recency: 0.05,
  /** A prior by fact type: corrections and stated facts about a person first. */
  type: 0.05,
  /** Share of the memory's sentences that state rather than ask: a question holds no fact. */
  statement: 0.2,
  /**
   * The query asks for advice ("can you suggest…") and the memory states a taste (fact type
   * `preference`): the advice should suit it, and it rarely shares the request's words. Low, as a
   * history's requests on the topic answer too (docs/recall.md, "Requests for advice").
   */
  taste: 0.1,
} as const;

type Feature = keyof typeof RERANK_WEIGHTS;
/** The features in the weights' order (the order the mean is summed in), listed once. */
const FEATURES = Object.keys(RERANK_WEIGHTS) as Feature[];
/** The order `rerank` lists a candidate's values in: the features', checked once here. */
const VALUES = [
  'keyword',
  'semantic',
  'temporal',
  'graph',
  'entity',
  'context',
  'proximity',
  'dated',
  'quantity',
  'recency',
  'type',
  'statement',
  'taste',
] as const satisfies readonly Feature[];
if (VALUES.join() !== FEATURES.join()) throw new Error('rerank: VALUES must list RERANK_WEIGHTS in order');

/**
 * How much more a time range counts when the query names it by calendar date ("on 9 November,
 * 2022", "in 2021") than when it is relative ("last week", "a couple of days ago", "in March"):
 * people use relative expressions loosely ("last week" for ten days ago), dates they name
 * precisely. On the LoCoMo development split (absolute dates) 2 lifts temporal recall@10 from
 * .888 to .904; on LongMemEval's (relative ones) 2 for relative ranges too costs multi-session
 * questions two points.
 */
export const ABSOLUTE_WINDOW = 2;

/** Fact type prior: a correction supersedes what it corrects; a profile fact rarely goes stale. */
const TYPE_PRIOR: Record<FactType, number> = {
  correction: 1,
  profile: 0.8,
  preference: 0.8,
  observation: 0.7,
  experience: 0.6,
  procedure: 0.6,
  reasoning: 0.5,
  world: 0.5,
};

const DAY = 86_400_000;

/** Milliseconds of a stored time: a Date's own (no copy per candidate), or a string's parse. */
const ms = (d: Date | string): number => (d instanceof Date ? d.getTime() : new Date(d).getTime());

/**
 * Closeness to a time window: 1 at its middle, 0.5 at its edges, 0 outside; from the nearer of
 * the time the memory tells of (occurred) and the time it was said (mentioned). A `loose` window
 * (one relative to when the question is asked: "a couple of days ago", "two weeks ago", which
 * people use loosely) goes on falling past its edges, to 0 at half its width beyond them.
 */
export function temporalScore(m: Memory, window: { start: Date; end: Date } | null, loose = false): number {
  if (!window) return 0;
  const s = window.start.getTime();
  const e = window.end.getTime();
  const mid = s + (e - s) / 2;
  const half = Math.max((e - s) / 2, 1000);
  // Inside the window (or, loose, within half its width of it): the distance to the middle.
  const reach = loose ? half : 0;
  let best = Number.POSITIVE_INFINITY;
  if (m.occurred_start) {
    const os = ms(m.occurred_start);
    const oe = m.occurred_end ? ms(m.occurred_end) : os;
    if (os < e + reach && oe >= s - reach)
      best = os <= mid && mid <= oe ? 0 : Math.min(Math.abs(os - mid), Math.abs(oe - mid));
  }
  if (m.mentioned_at) {
    const t = ms(m.mentioned_at);
    if (t >= s - reach && t < e + reach) best = Math.min(best, Math.abs(t - mid));
  }
  if (best === Number.POSITIVE_INFINITY) return 0;
  return loose ? Math.max(0, 1 - 0.5 * (best / half)) : 1 - 0.5 * Math.min(best / half, 1);
}

/**
 * The names the query mentions that the candidates know: a speaker or a linked entity of one of
 * them equal to a run of the query's words. Found by lookup, not by parsing the query, so a
 * lower-case or unusual name counts as much as a famous one.
 */
function queryEntities(q: AnalyzedQuery, candidates: Candidate[], features: TextFeatures[]): string[] {
  const known = new Set<string>();
  for (const [i, c] of candidates.entries()) {
    const { speaker } = features[i]!;
    if (speaker) known.add(speaker);
    for (const e of c.memory.entities) known.add(e.toLowerCase());
  }
  return q.entityProbes.filter((p) => known.has(p));
}

/** Query entities matched by the memory: its speaker counts 1, a linked entity 0.5; the mean. */
function entityOverlap(m: Memory, speaker: string | null, entities: string[]): number {
  const linked = new Set(m.entities.map((e) => e.toLowerCase()));
  let sum = 0;
  for (const e of entities) sum += e === speaker ? 1 : linked.has(e) ? 0.5 : 0;
  return sum / entities.length;
}

/**
 * Term proximity: the shortest stretch of the memory's own text holding every query term it
 * contains, when it contains at least two; (k - 1) / (span - 1), so adjacent terms give 1.
 */
function proximity(terms: readonly string[], query: Map<string, number>, scratch: Proximity): number {
  // The query terms' positions in the text and which term each is (its index in the query), in
  // arrays kept for the whole Recall: no array, set or map per candidate.
  const { at, found, count } = scratch;
  let n = 0;
  let wanted = 0;
  for (let i = 0; i < terms.length; i++) {
    const q = query.get(terms[i]!);
    if (q === undefined) continue;
    at[n] = i;
    found[n++] = q;
    // `count` is all zeros between calls: a term's first sighting is one more wanted.
    if (count[q] === 0) wanted++;
    count[q] = 1;
  }
  for (let i = 0; i < n; i++) count[found[i]!] = 0;
  if (wanted < 2) return 0;
  let best = Number.POSITIVE_INFINITY;
  let have = 0;
  let left = 0;
  for (let right = 0; right < n; right++) {
    if (count[found[right]!]!++ === 0) have++;
    while (have === wanted) {
      best = Math.min(best, at[right]! - at[left]! + 1);
      if (--count[found[left]!]! === 0) have--;
      left++;
    }
  }
  // The window left every count at zero again but those right of `left`.
  for (let i = left; i < n; i++) count[found[i]!] = 0;
  return (wanted - 1) / (best - 1);
}

/** The reusable arrays of `proximity` for one Recall's query terms. */
interface Proximity {
  at: number[];
  found: number[];
  count: Int32Array;
}

// Sentences end at . ! ? (a quoted or bracketed tail, like "[shares a photo]", is not one).
const SENTENCE = /[^.!?]+[.!?]*/g;

/** Share of the sentences of a memory's own words (speaker label and attachments aside) that are not questions. */
function statementShare(text: string): number {
  const body = text.replace(/^\s*[^:\n]{1,40}:\s+/, '').replace(/\[[^\]]*\]/g, ' ');
  let sentences = 0;
  let questions = 0;
  for (const m of body.matchAll(SENTENCE)) {
    const words = m[0].trim().split(/\s+/).filter(Boolean).length;
    if (words === 0) continue;
    sentences++;
    if (m[0].trim().endsWith('?')) questions++;
  }
  return sentences === 0 ? 0 : 1 - questions / sentences;
}

// A number in digits or words ("3", "2.5", "twelve", "a dozen"); "one" is left out, being
// mostly a pronoun ("the one I bought").
const NUMBER =
  /\b\d+(?:[.,]\d+)?\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|dozen|couple|half)\b/i;
const MONEY = /[$€£]\s?\d|\b\d[\d,.]*\s?(?:dollars|bucks|euros|pounds|usd|eur|gbp)\b/i;

/** What the reranker reads from a memory's text alone, computed once per text. */
interface TextFeatures {
  terms: string[];
  speaker: string | null;
  statement: number;
  number: boolean;
  money: boolean;
}
const textFeatures = memoByText(
  (text): TextFeatures => ({
    terms: keywordTerms(text),
    speaker: speakerOf(text)?.toLowerCase() ?? null,
    statement: statementShare(text),
    number: NUMBER.test(text),
    money: MONEY.test(text),
  }),
);

function recency(m: Memory, reference: Date): number {
  const at = m.occurred_start ?? m.mentioned_at ?? m.created_at;
  const ageDays = Math.max(0, (reference.getTime() - ms(at)) / DAY);
  return 1 / (1 + ageDays / 365);
}

/**
 * The reranker: a weighted mean of the signals above, in [0, 1]. Signals that do not apply to
 * the query (no entity named, no time range, not a "when" question, no quantity asked, no
 * advice asked, graph off) are left out of the mean rather than counted as zero. `on.temporal`: a window applies (the query's, or one
 * anchored on an event). Needs no model; deterministic.
 */
export function rerank(
  q: AnalyzedQuery,
  candidates: Candidate[],
  on: { graph: boolean; temporal: boolean },
): number[] {
  const topKeyword = Math.max(0, ...candidates.map((c) => c.keyword));
  const groupEvidence = new Map<string, number>();
  const groupOf = candidates.map((c) => contextGroup(c.memory) ?? `memory\u0000${c.memory.id}`);
  for (const [i, c] of candidates.entries()) {
    groupEvidence.set(groupOf[i]!, (groupEvidence.get(groupOf[i]!) ?? 0) + c.keyword);
  }
  const topGroup = Math.max(0, ...groupEvidence.values());
  // Each distinct query term and its index, for `proximity`.
  const queryTerms = new Map<string, number>();
  for (const t of q.terms) if (!queryTerms.has(t)) queryTerms.set(t, queryTerms.size);
  const scratch: Proximity = { at: [], found: [], count: new Int32Array(queryTerms.size) };
  // Looked up once per candidate, for the entities and the scores.
  const features = candidates.map((c) => textFeatures(c.memory.text));
  const entities = queryEntities(q, candidates, features);
  const applies: Record<Feature, boolean> = {
    keyword: true,
    semantic: true,
    temporal: on.temporal,
    graph: on.graph,
    entity: entities.length > 0,
    context: topGroup > 0,
    proximity: queryTerms.size > 1,
    dated: q.asksWhen,
    quantity: q.asksQuantity !== null,
    recency: true,
    type: true,
    statement: true,
    taste: q.asksAdvice,
  };
  const weights: Record<Feature, number> = { ...RERANK_WEIGHTS };
  if (q.windowAbsolute) weights.temporal *= ABSOLUTE_WINDOW;
  const total = FEATURES.reduce((s, f) => s + (applies[f] ? weights[f] : 0), 0);
  // Each feature's weight and whether it applies, in `FEATURES`' order.
  const w = FEATURES.map((f) => weights[f]);
  const used = FEATURES.map((f) => applies[f]);
  const out = new Array<number>(candidates.length);
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    const m = c.memory;
    const text = features[i]!;
    // In `VALUES`' order (`FEATURES`'): no record per candidate, no lookup by a feature's name.
    const values = [
      topKeyword > 0 ? c.keyword / topKeyword : 0,
      Math.max(0, c.semantic),
      c.temporal,
      c.graph,
      applies.entity ? entityOverlap(m, text.speaker, entities) : 0,
      topGroup > 0 ? groupEvidence.get(groupOf[i]!)! / topGroup : 0,
      applies.proximity ? proximity(text.terms, queryTerms, scratch) : 0,
      m.occurred_start !== null ? 1 : 0,
      (q.asksQuantity === 'money' ? text.money : text.number) ? 1 : 0,
      recency(m, q.reference),
      TYPE_PRIOR[m.type] ?? 0.5,
      text.statement,
      m.type === 'preference' ? 1 : 0,
    ];
    let sum = 0;
    for (let f = 0; f < values.length; f++) if (used[f]) sum += w[f]! * values[f]!;
    out[i] = sum / total;
  }
  return out;
}
