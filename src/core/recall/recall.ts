import { anchoredWindow } from '../../text/event-anchor.js';
import { tokensExceed } from '../../text/tokens.js';
import { effectiveConfig } from '../bank-config.js';
import { requireBank, staleVectors } from '../banks.js';
import { chargeRefundable, type CostRefund } from '../budgets.js';
import { AppError, invalid } from '../errors.js';
import { type BankScope, requireInScope } from '../bank-scope.js';
import { orgBankId } from '../ids.js';
import { scheduleReembed } from '../reembed.js';
import type { Deps, Snapshots } from '../services.js';
import type { BankStore, LimitStore, MemoryStore, OperationStore, SearchStore } from '../../store/store.js';
import type { Bank, FactType, Memory, MemoryFilter, TagsMatch } from '../types.js';
import { BUDGETS, type Budget, cutToBudget, recallUnits } from './budget.js';
import { recallCacheKey } from './cache.js';
import { fuse, type RankedList } from './fuse.js';
import { resolveOrgConflicts } from './org-blend.js';
import { type AnalyzedQuery, analyzeQuery, asOf } from './query.js';
import { type Candidate, rerank, temporalScore } from './rerank.js';
import { type RecallResponse, type RecallResult, STAGES, type Stage } from './response.js';

/** What the channels of one bank read, all within one snapshot. */
export type BankSearchStore = MemoryStore & SearchStore;

/**
 * Recall's concerns: banks (and their org bank), the search channels, the project's budgets (units
 * charged) and the queue (a re-embed of stale vectors); it writes nothing else.
 */
export type RecallStore = BankStore & LimitStore & OperationStore & SearchStore & BankReads;

/** What a bank's search reads: snapshots of it, and candidates at a version read in one. */
type BankReads = Pick<MemoryStore, 'getCandidatesAt'> & Snapshots<BankSearchStore>;

// The answer's shape has its own module so that Services can name it without importing Recall.
export { type RecallResponse, type RecallResult, STAGES, type Stage };

export const MAX_QUERY_TOKENS = 500;
/** `max_tokens` of a Recall that gives none. */
export const DEFAULT_MAX_TOKENS = 2048;

export interface RecallRequest {
  query: string;
  types?: FactType[];
  max_tokens?: number;
  budget?: Budget;
  include_org?: boolean;
  space?: string;
  tags?: string[];
  tags_match?: TagsMatch;
  query_timestamp?: Date;
  temporal_window?: { start: Date; end: Date };
  min_scores?: Partial<Record<Stage, number>>;
}

/**
 * Each channel's weight in reciprocal rank fusion. Lexical evidence dominates on chat memory;
 * an equal-weight fusion with word-vector similarity lowers recall (docs/recall.md).
 */
export const CHANNEL_WEIGHTS = { keyword: 1, semantic: 0.5, temporal: 0.6, graph: 0.6 } as const;

export type Channel = keyof typeof CHANNEL_WEIGHTS;

/** The ids each retrieval channel of the searched bank returned, best first (empty when it was off). */
export type ChannelIds = Record<Channel, string[]>;

export interface RecallOptions {
  /**
   * Receives the ids each channel of the bank returned before fusion. The answer is then
   * computed afresh, never taken from the answer cache (which keeps no channel lists).
   */
  onChannels?: (ids: ChannelIds) => void;
  /**
   * The caller charged this Recall's units already (an evaluation charges all its cases before
   * the first runs, so that a spent budget refuses it whole rather than half-way).
   */
  charged?: boolean;
  /**
   * Receives what gives this Recall's charge back, for a caller whose own work can still be
   * refused after the Recall (a Reflect's model call over the model budget).
   */
  onCharged?: (refund: CostRefund) => void;
  /**
   * A bank-scoped key's banks: the org bank blended by `include_org` must be within them too
   * (else 404, like any bank the key cannot reach).
   */
  banks?: BankScope;
}

interface Scored {
  memory: Memory;
  scores: Record<Stage, number>;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * One bank: the enabled channels in parallel, fused by weighted reciprocal rank; the best
 * `rerank` candidates are read, scored by every stage, and ordered by the reranker (or by the
 * fused score when reranking is off).
 *
 * Every channel of one bank reads one state of it: a document replaced meanwhile shows its old
 * or its new memories, never a mix or nothing. The channels end their snapshot, and the
 * candidates are read at the version it saw (from the bank's copy in the process, or in one
 * statement while the bank is still at it: every write moves it, so equal versions are the same
 * data); else all of it again in one snapshot, the candidates its last read. They are scored once
 * it has ended, so that it does not hold the embedded engine meanwhile.
 */
async function searchBank(
  s: Deps<BankReads, 'embedder'>,
  bank: Bank,
  req: RecallRequest,
  q: AnalyzedQuery,
  onChannels?: RecallOptions['onChannels'],
): Promise<Scored[]> {
  const ids = (read: ChannelsRead) => read.fused.map((f) => f.id);
  // A snapshot sent at once, so that the engine never waits for this process between statements:
  // the channels end it. Then the candidates, in one statement, at the bank's version then.
  const quick = await s.store.readSnapshot((store) => channelsIn({ ...s, store }, bank, req, q, true));
  if (quick?.version) {
    const candidates = await s.store.getCandidatesAt(
      bank.project_id,
      bank.id,
      ids(quick),
      q.vector,
      quick.version,
    );
    if (candidates) {
      onChannels?.(quick.channelIds);
      return scoreCandidates(q, { ...quick, candidates });
    }
  }
  // Else (the bank not as last seen, written between the two, a data key, a short walk) in one
  // snapshot that holds the engine between its statements.
  const read = await s.store.readSnapshot(async (store) => {
    const channels = (await channelsIn({ ...s, store }, bank, req, q, false))!;
    // The snapshot's last read: it ends with it.
    const candidates = await store.getCandidates(bank.project_id, bank.id, ids(channels), q.vector, {
      endsSnapshot: true,
    });
    return { ...channels, candidates };
  });
  onChannels?.(read.channelIds);
  return scoreCandidates(q, read);
}

/** What a bank's channels found for one Recall, fused. */
interface ChannelsRead {
  hits: Awaited<ReturnType<SearchStore['searchChannels']>>;
  channelIds: ChannelIds;
  window: { start: Date; end: Date } | null;
  graphOn: boolean;
  semanticOn: boolean;
  /** The bank's `enable_reranking`. */
  reranking: boolean;
  fused: { id: string; score: number }[];
  /** The bank's version they were read at (`lastSearchChannels` only). */
  version?: string;
}

/** ... and the candidates read for them. */
interface BankRead extends ChannelsRead {
  candidates: (Memory & { similarity: number | null })[];
}

/**
 * The window of an event-anchored query in this bank: the event is the best keyword match of its
 * words, and its time is when it happened (a date its text names) or else when it was said.
 */
async function eventWindow(s: Deps<BankSearchStore>, bank: Bank, q: AnalyzedQuery, filter: MemoryFilter) {
  if (!q.anchor) return null;
  const [hit] = await s.store.keywordSearch(bank.project_id, bank.id, q.anchor.terms, filter, 1);
  const [event] = hit ? await s.store.getMemories(bank.project_id, bank.id, [hit.id]) : [];
  const at = event?.occurred_start ?? event?.mentioned_at;
  return at ? anchoredWindow(q.anchor, new Date(at)) : null;
}

/**
 * The bank's channels, fused. `last`: as the snapshot's last statements (`lastSearchChannels`),
 * null when they cannot be.
 */
async function channelsIn(
  s: Deps<BankSearchStore, 'embedder'>,
  bank: Bank,
  req: RecallRequest,
  q: AnalyzedQuery,
  last: boolean,
): Promise<ChannelsRead | null> {
  const cfg = effectiveConfig(bank.config);
  const budget = BUDGETS[req.budget ?? cfg.recall_default_budget];
  const channels = budget.channels as readonly string[];
  const filter: MemoryFilter = {
    types: req.types,
    tags: req.tags,
    tagsMatch: req.tags_match,
    mentionedBefore: asOf(req.query_timestamp),
    // Invalidated memories are kept for curation, never recalled.
    state: 'valid',
  };
  const p = bank.project_id;
  const temporalOn = cfg.enable_temporal_retrieval && channels.includes('temporal');
  const window = temporalOn ? (q.window ?? (await eventWindow(s, bank, q, filter))) : null;
  const graphOn = cfg.enable_graph_retrieval && channels.includes('graph') && budget.graphDepth >= 0;
  // Vectors of another embedder say nothing about this query's: no semantic channel until re-embedded.
  const semanticOn = !staleVectors(s, bank);
  // Every channel in one statement: a round trip costs more than most of the channels' work.
  const query = {
    vector: semanticOn ? q.vector : null,
    terms: q.terms,
    window,
    graph: graphOn ? { probes: q.entityProbes, depth: budget.graphDepth } : null,
    expectedSize: bank.memory_count,
  };
  const ending = last ? await s.store.lastSearchChannels(p, bank.id, query, filter, budget.pool) : null;
  if (last && !ending) return null;
  const hits = ending ?? (await s.store.searchChannels(p, bank.id, query, filter, budget.pool));
  const lists: RankedList[] = [
    { channel: 'keyword', weight: CHANNEL_WEIGHTS.keyword, ids: hits.keyword.map((h) => h.id) },
    { channel: 'semantic', weight: CHANNEL_WEIGHTS.semantic, ids: hits.semantic.map((h) => h.id) },
    { channel: 'temporal', weight: CHANNEL_WEIGHTS.temporal, ids: hits.temporal.map((h) => h.id) },
    { channel: 'graph', weight: CHANNEL_WEIGHTS.graph, ids: hits.graph.map((h) => h.id) },
  ];
  const channelIds = Object.fromEntries(lists.map((l) => [l.channel, l.ids])) as ChannelIds;
  const fused = fuse(lists).slice(0, budget.rerank);
  const version = ending?.version;
  return { hits, channelIds, window, graphOn, semanticOn, reranking: cfg.enable_reranking, fused, version };
}

/** The candidates a bank's snapshot read, scored by every stage and ordered by the reranker (or by the fused score). */
function scoreCandidates(q: AnalyzedQuery, read: BankRead): Scored[] {
  const { hits, window, graphOn, semanticOn, reranking, fused } = read;
  const sims = new Map<string, number>();
  const byId = new Map<string, Memory>();
  // The semantic channel's score where it found the memory (the same cosine; a candidate read
  // from the bank's copy in the process has it but for the last bits), else the candidate's.
  const semantic = scoreById(hits.semantic);
  // Kept as read, with their `similarity` (left out of the answer by `resultOf`, for the 50
  // results rather than here for every candidate).
  for (const m of read.candidates) {
    byId.set(m.id, m);
    if (semanticOn && m.similarity !== null) sims.set(m.id, semantic.get(m.id) ?? m.similarity);
  }
  const kw = scoreById(hits.keyword);
  const gr = scoreById(hits.graph);
  const kept: { c: Candidate; fused: number; inWindow: number }[] = [];
  for (const f of fused) {
    const memory = byId.get(f.id);
    if (!memory) continue;
    const c: Candidate = {
      memory,
      semantic: sims.get(f.id) ?? 0,
      keyword: kw.get(f.id) ?? 0,
      graph: gr.get(f.id) ?? 0,
      // The reranker reads a relative window loosely; the score shown (and `min_scores`) stays
      // "inside the window or not".
      temporal: temporalScore(memory, window, !q.windowAbsolute),
    };
    kept.push({ c, fused: f.score, inWindow: temporalScore(memory, window) });
  }
  const reranked = reranking
    ? rerank(
        q,
        kept.map((k) => k.c),
        { graph: graphOn && hits.graph.length > 0, temporal: window !== null },
      )
    : null;
  const scored = kept.map(({ c, fused: fusedScore, inWindow }, i) => {
    const reranker = reranked ? reranked[i]! : 0;
    const scores: Record<Stage, number> = {
      semantic: round(c.semantic),
      keyword: round(c.keyword),
      graph: round(c.graph),
      temporal: round(inWindow),
      reranker: round(reranker),
      final: round(reranked ? reranker : fusedScore),
    };
    return { memory: c.memory, scores };
  });
  // Stable sort: equal scores keep the fused order.
  return scored.sort((a, b) => b.scores.final - a.scores.final);
}

/** A channel's scores by id (the last of an id seen, as `new Map` of its pairs keeps). */
function scoreById(hits: readonly { id: string; score: number }[]): Map<string, number> {
  const scores = new Map<string, number>();
  for (const h of hits) scores.set(h.id, h.score);
  return scores;
}

/** A result: the memory's fields (a candidate's `similarity` is in its scores) and its scores. */
function resultOf(r: Scored): RecallResult {
  const { similarity: _, ...result } = r.memory as Memory & { similarity?: number | null };
  (result as RecallResult).scores = r.scores;
  return result as RecallResult;
}

function passes(scores: Record<Stage, number>, min: RecallRequest['min_scores']): boolean {
  if (!min) return true;
  return Object.entries(min).every(
    ([stage, floor]) => floor === undefined || scores[stage as Stage] >= floor,
  );
}

/**
 * Recall: semantic, keyword, temporal and graph channels per bank, fused by weighted
 * reciprocal rank and reranked, filtered by `min_scores`, blended with the org bank when asked,
 * cut to `max_tokens`.
 */
export async function recall(
  s: Deps<RecallStore, 'embedder' | 'limitDefaults' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  req: RecallRequest,
  opts: RecallOptions = {},
): Promise<RecallResponse> {
  if (tokensExceed(req.query, MAX_QUERY_TOKENS)) {
    throw new AppError('query_too_long', `query is longer than ${MAX_QUERY_TOKENS} tokens`, {
      details: [{ path: 'query', message: `at most ${MAX_QUERY_TOKENS} tokens` }],
    });
  }
  if (req.temporal_window && req.temporal_window.start > req.temporal_window.end) {
    throw invalid('temporal_window', 'start must not be after end');
  }
  const bank = await requireBank(s, projectId, bankId);
  if (req.include_org) {
    if (!req.space) throw invalid('space', 'include_org needs space');
    if (bank.space_id !== req.space)
      throw invalid('space', `bank '${bankId}' is not in space '${req.space}'`);
    requireInScope(opts.banks ?? null, orgBankId(req.space));
  }
  // Charged before any search (a 429 leaves nothing done), cached answer or not: the charge
  // must not depend on what other requests left in this process's cache.
  const level = req.budget ?? effectiveConfig(bank.config).recall_default_budget;
  const units = recallUnits(req.query, level, req.include_org ? 2 : 1, req.max_tokens ?? DEFAULT_MAX_TOKENS);
  if (!opts.charged) {
    const refund = await chargeRefundable(s, projectId, { recall_units: units });
    opts.onCharged?.(refund);
  }
  const org = req.space && req.include_org ? await s.store.getBank(projectId, orgBankId(req.space)) : null;
  for (const b of [bank, org]) if (b && staleVectors(s, b)) await scheduleReembed(s, projectId, b.id);
  const cache = opts.onChannels ? undefined : s.recallCache;
  const key = cache ? recallCacheKey(projectId, org ? [bank, org] : [bank], s.embedder.id, req) : null;
  const cached = key ? cache?.get(key, s.now().getTime()) : undefined;
  if (cached) return cached;
  const response = await search(s, bank, org, req, opts.onChannels);
  if (key) cache?.set(key, freeze(response), s.now().getTime());
  return response;
}

/** Cached answers are shared by every request that hits them: nobody may change one. */
function freeze(response: RecallResponse): RecallResponse {
  for (const r of response.results) Object.freeze(r);
  Object.freeze(response.results);
  return Object.freeze(response);
}

async function search(
  s: Deps<SearchStore & BankReads, 'embedder' | 'now'>,
  bank: Bank,
  org: Bank | null,
  req: RecallRequest,
  onChannels?: RecallOptions['onChannels'],
): Promise<RecallResponse> {
  const q = await analyzeQuery(s, req.query, req.query_timestamp ?? s.now(), req.temporal_window);
  await s.store.maintainStatistics();
  // Floors apply per bank before blending, so a dropped person memory cannot shadow an org one.
  const person = (await searchBank(s, bank, req, q, onChannels)).filter((r) =>
    passes(r.scores, req.min_scores),
  );
  let ranked = person;
  if (org) {
    const orgHits = (await searchBank(s, org, req, q)).filter((r) => passes(r.scores, req.min_scores));
    ranked = await resolveOrgConflicts(s, person, orgHits);
  }
  const maxTokens = req.max_tokens ?? DEFAULT_MAX_TOKENS;
  const limit = BUDGETS[req.budget ?? effectiveConfig(bank.config).recall_default_budget].results;
  const cut = cutToBudget(ranked.slice(0, limit).map(resultOf), maxTokens);
  return {
    results: cut.items,
    usage: {
      tokens_used: cut.tokensUsed,
      max_tokens: maxTokens,
      truncated: cut.truncated,
      org_blended: req.include_org === true,
    },
  };
}
