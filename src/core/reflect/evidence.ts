import { judge } from '../consolidate/judge.js';
import type { Budget } from '../recall/budget.js';
import { type RecallOptions, type RecallResult, type RecallStore, recall } from '../recall/recall.js';
import type { Deps } from '../services.js';
import type { MemoryStore, ObservationStore } from '../../store/store.js';
import type { FactType, Memory, ObservationDetail, TagsMatch } from '../types.js';

/** Reflect's evidence: a Recall, then the memories and observations it cites. */
export type EvidenceStore = RecallStore & MemoryStore & ObservationStore;

/** A memory Reflect draws on, with how many stored copies of it were folded into it. */
export interface MemoryEvidence {
  memory: RecallResult;
  /** 1 plus the near-identical memories dropped in its favour. */
  copies: number;
}

/** A consolidated observation Reflect draws on, with its proof and the memories against it. */
export interface ObservationEvidence {
  memory: RecallResult;
  detail: ObservationDetail;
  contradicting: Memory[];
}

export interface Evidence {
  observations: ObservationEvidence[];
  memories: MemoryEvidence[];
  /** Pairs of memory ids (among `memories`) that state conflicting things. */
  conflicts: [string, string][];
}

export interface EvidenceRequest {
  query: string;
  budget?: Budget;
  tags?: string[];
  tags_match?: TagsMatch;
  fact_types?: FactType[];
}

/** Tokens of evidence gathered per budget level (Recall's `max_tokens`). */
export const EVIDENCE_TOKENS: Record<Budget, number> = { low: 1000, mid: 2500, high: 5000 };

/** Conflicting statements shown per observation. */
const CONFLICTS_SHOWN = 3;
/** Memories compared pairwise for conflicts. */
const CONFLICT_SCAN = 12;

const normal = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * What Reflect answers from: one Recall (honouring budget, tags, tags_match and fact types),
 * split into consolidated observations and plain memories. Memories an included observation
 * already stands for are folded into it, exact restatements into one another, and conflicting
 * pairs among the best memories are noted.
 */
export async function gatherEvidence(
  s: Deps<EvidenceStore, 'embedder' | 'limitDefaults' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  req: EvidenceRequest,
  defaultBudget: Budget,
  opts: Pick<RecallOptions, 'onCharged'> = {},
): Promise<Evidence> {
  const found = await recall(
    s,
    projectId,
    bankId,
    {
      query: req.query,
      budget: req.budget,
      tags: req.tags,
      tags_match: req.tags_match,
      types: req.fact_types,
      max_tokens: EVIDENCE_TOKENS[req.budget ?? defaultBudget],
    },
    opts,
  );
  const candidates = found.results.filter((r) => r.type === 'observation').map((r) => r.id);
  const details = await s.store.observationDetails(projectId, bankId, candidates);
  const against = [...details.values()].flatMap((d) => d.contradicting_memory_ids.slice(0, CONFLICTS_SHOWN));
  const contradicting = new Map(
    (await s.store.getMemories(projectId, bankId, against)).map((m) => [m.id, m]),
  );

  const observations: ObservationEvidence[] = [];
  const covered = new Set<string>();
  for (const r of found.results) {
    const detail = details.get(r.id);
    if (!detail) continue;
    observations.push({
      memory: r,
      detail,
      contradicting: detail.contradicting_memory_ids.flatMap((id) => contradicting.get(id) ?? []),
    });
    for (const id of [...detail.source_memory_ids, ...detail.contradicting_memory_ids]) covered.add(id);
  }

  const memories: MemoryEvidence[] = [];
  const byText = new Map<string, MemoryEvidence>();
  for (const r of found.results) {
    if (details.has(r.id) || covered.has(r.id)) continue;
    const key = normal(r.text);
    const same = byText.get(key);
    if (same) {
      same.copies++;
      continue;
    }
    const e = { memory: r, copies: 1 };
    byText.set(key, e);
    memories.push(e);
  }

  const conflicts: [string, string][] = [];
  const scan = memories.slice(0, CONFLICT_SCAN).map((e) => e.memory);
  for (let i = 0; i < scan.length; i++) {
    for (let j = i + 1; j < scan.length; j++) {
      const a = scan[i]!;
      const b = scan[j]!;
      if (judge(a.text, b.text, { next: a.entities, earlier: b.entities }) === 'contradicts')
        conflicts.push([a.id, b.id]);
    }
  }
  return { observations, memories, conflicts };
}
