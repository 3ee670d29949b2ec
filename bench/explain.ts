/**
 * `--explain` of the recall-quality benchmarks: for every gold turn a Recall left outside its
 * top 10, where it ranked, where each channel ranked it (searched again over the whole bank, so
 * a rank beyond the channel's pool shows too) with its score there, and what outranked it.
 */
import { analyzeQuery, asOf } from '../src/core/recall/query.js';
import type { Services } from '../src/core/services.js';
import type { Memory } from '../src/core/types.js';
import { anchoredWindow } from '../src/text/event-anchor.js';

/** Larger than any benchmark bank: every channel ranks all it finds. */
const EVERYTHING = 5000;
/** Results shown above a missed turn. */
const SHOWN = 5;

interface Result {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
  scores?: Record<string, number>;
}

export interface Miss {
  bank: string;
  title: string;
  query: string;
  reference?: Date;
  /** Keys of the gold turns (a turn may be stored as several chunks). */
  gold: Set<string>;
  keyOf: (m: { metadata: Record<string, unknown> }) => string | null;
  /** Recall's results, best first. */
  results: Result[];
  /** The BM25 baseline's ranking of keys. */
  bm25: string[];
  /** Counts each missed turn under its class (see `missClass`), keyed `<group>: <class>`. */
  tally?: { group: string; counts: Map<string, number> };
}

/**
 * The class of a missed gold turn: how far down Recall put it, and whether the keyword channel
 * found it at all. "ranked 11-50" is reachable by better fusion or reranking; "below 50, keyword
 * below 100" shares (almost) no word with the question and needs expansion by meaning.
 */
export function missClass(rank: number, keywordRank: number): string {
  const where = rank < 0 || rank >= 50 ? 'below 50' : rank >= 20 ? 'ranked 21-50' : 'ranked 11-20';
  const kw = keywordRank < 0 ? 'keyword none' : keywordRank < 100 ? 'keyword top 100' : 'keyword below 100';
  return `${where}, ${kw}`;
}

/** The tally of `explainMisses`, as printable lines, by group then class. */
export function formatTally(counts: Map<string, number>): string {
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `  ${k}: ${n}`)
    .join('\n');
}

const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

const fmt = (scores: Record<string, number> | undefined) =>
  scores
    ? ['final', 'keyword', 'semantic', 'temporal', 'graph']
        .map((k) => `${k[0]}=${(scores[k] ?? 0).toFixed(2)}`)
        .join(' ')
    : '';

/** The explanation of one question's missed gold turns, as printable lines. */
export async function explainMisses(s: Services, miss: Miss): Promise<string> {
  const reference = miss.reference ?? s.now();
  const bank = await s.store.getBank('default', miss.bank);
  if (!bank) return `${miss.title}: no bank`;
  const p = bank.project_id;
  const q = await analyzeQuery(s, miss.query, reference, undefined);
  const filter = { mentionedBefore: asOf(miss.reference) };
  let window = q.window;
  if (!window && q.anchor) {
    const [hit] = await s.store.keywordSearch(p, bank.id, q.anchor.terms, filter, 1);
    const [event] = hit ? await s.store.getMemories(p, bank.id, [hit.id]) : [];
    const at = event?.occurred_start ?? event?.mentioned_at;
    if (at) window = anchoredWindow(q.anchor, new Date(at));
  }
  const channels = {
    keyword: await s.store.keywordSearch(p, bank.id, q.terms, filter, EVERYTHING),
    semantic: await s.store.semanticSearch(p, bank.id, q.vector, filter, EVERYTHING),
    temporal: window ? await s.store.temporalSearch(p, bank.id, window, filter, EVERYTHING) : [],
    graph: await s.store.graphSearch(p, bank.id, q.entityProbes, filter, EVERYTHING, 1),
  };
  const ids = [...new Set(Object.values(channels).flatMap((hits) => hits.map((h) => h.id)))];
  const byId = new Map<string, Memory>();
  for (let i = 0; i < ids.length; i += 500)
    for (const m of await s.store.getMemories(p, bank.id, ids.slice(i, i + 500))) byId.set(m.id, m);
  const keyOfId = (id: string) => {
    const m = byId.get(id);
    return m ? miss.keyOf(m) : null;
  };
  const resultKeys = [...new Set(miss.results.flatMap((r) => miss.keyOf(r) ?? []))];

  const lines = [`\n### ${miss.title}`];
  lines.push(
    `  terms [${q.terms.join(' ')}]` +
      (window
        ? `; window ${window.start.toISOString().slice(0, 10)}..${window.end.toISOString().slice(0, 10)}`
        : '') +
      (q.anchor ? `; anchor [${q.anchor.terms.join(' ')}]` : '') +
      (q.asksWhen ? '; asks when' : ''),
  );
  for (const key of miss.gold) {
    const rank = resultKeys.indexOf(key);
    if (rank >= 0 && rank < 10) continue;
    const result = miss.results.find((r) => miss.keyOf(r) === key);
    const per = Object.entries(channels).map(([name, hits]) => {
      const i = hits.findIndex((h) => keyOfId(h.id) === key);
      return i < 0 ? `${name} -` : `${name} #${i + 1} (${hits[i]!.score.toFixed(3)})`;
    });
    if (miss.tally) {
      const kwRank = channels.keyword.findIndex((h) => keyOfId(h.id) === key);
      const k = `${miss.tally.group}: ${missClass(rank, kwRank)}`;
      miss.tally.counts.set(k, (miss.tally.counts.get(k) ?? 0) + 1);
    }
    const b = miss.bm25.indexOf(key);
    const text =
      result?.text ??
      [...byId.values()].find((m) => miss.keyOf(m) === key)?.text ??
      '(not found by any channel)';
    lines.push(
      `  MISSED ${key}: rank ${rank < 0 ? `>${resultKeys.length}` : rank + 1}; BM25 #${b < 0 ? '-' : b + 1}; ${per.join(', ')}` +
        (result ? `; ${fmt(result.scores)}` : ''),
    );
    lines.push(`    "${oneLine(text, 220)}"`);
  }
  lines.push('  top results:');
  for (const r of miss.results.slice(0, SHOWN)) {
    const key = miss.keyOf(r);
    lines.push(
      `    ${key}${key && miss.gold.has(key) ? ' (gold)' : ''} ${fmt(r.scores)} "${oneLine(r.text, 140)}"`,
    );
  }
  return lines.join('\n');
}
