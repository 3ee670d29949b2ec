import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { MiddlewareHandler } from 'hono';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Embedder } from '../embed/embedder.js';
import type { LanguageModel } from '../llm/model.js';
import type { Store } from '../store/store.js';
import type { AppEnv } from './env.js';

/** Seconds: from a cache hit to a slow model answer. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The Prometheus metrics of one app (its own registry, so several apps in a process stay apart). */
export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  requestSeconds: Histogram<'method' | 'route' | 'status'>;
  embedSeconds: Histogram<'embedder' | 'outcome'>;
  modelSeconds: Histogram<'provider' | 'model' | 'outcome'>;
}

/**
 * Request counts and latencies per route pattern, embedder and model latency, the operation
 * queue depth and database pool use (read when scraped), and the process defaults.
 */
export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  const m: Metrics = {
    registry,
    requests: new Counter({
      name: 'mnemo_http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: 'mnemo_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    embedSeconds: new Histogram({
      name: 'mnemo_embed_duration_seconds',
      help: 'Embedder latency per call (a call embeds a batch)',
      labelNames: ['embedder', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    modelSeconds: new Histogram({
      name: 'mnemo_llm_duration_seconds',
      help: 'Language model latency per completion',
      labelNames: ['provider', 'model', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'mnemo_operations_queue_depth',
    help: 'Operations waiting to run or running (pending and processing), across all processes',
    registers: [registry],
    async collect() {
      // An unreachable database leaves the gauge out of this scrape (readiness reports it).
      this.reset();
      try {
        this.set(await store.countPendingOperations());
      } catch {}
    },
  });
  new Gauge({
    name: 'mnemo_db_pool_connections',
    help: 'PostgreSQL pool connections of this process by state (total, idle, waiting requests)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const p = store.poolStats();
      if (!p) return;
      this.set({ state: 'total' }, p.total);
      this.set({ state: 'idle' }, p.idle);
      this.set({ state: 'in_use' }, p.total - p.idle);
      this.set({ state: 'waiting' }, p.waiting);
    },
  });
  new Gauge({
    name: 'mnemo_keyword_memory',
    help:
      "Banks' postings and memories copied into this process for Recall: banks and bytes held, and " +
      'since the start keyword searches answered from a copy (hits) or in SQL (misses), Recalls whose ' +
      'candidates a copy gave (candidates), loads, loads skipped (bank over the bound), abandoned ' +
      '(bank written meanwhile) and failed; absent when off',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const k = store.keywordMemoryStats();
      if (!k) return;
      for (const [kind, v] of Object.entries(k)) this.set({ kind }, v);
    },
  });
  new Gauge({
    name: 'mnemo_embedded_engine_bytes',
    help:
      'Embedded engine memory inside this process: its WebAssembly memory (heap), the page cache ' +
      'configured (cache) and the part holding data (cache_used); absent on PostgreSQL',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const e = await store.engineMemory();
        if (!e) return;
        this.set({ kind: 'heap' }, e.heapBytes);
        this.set({ kind: 'cache' }, e.cacheBytes);
        this.set({ kind: 'cache_used' }, e.cacheUsedBytes);
      } catch {}
    },
  });
  return m;
}

/** Counts and times every request under its route pattern (`/v1/me/banks/:bank/memories`), never its raw path. */
export function measureRequests(m: Metrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // A 404 that only middleware (a `*` pattern) matched hit no route at all.
      const path = c.req.routePath;
      const route = !path || (path.endsWith('*') && c.res.status === 404) ? 'unmatched' : path;
      const labels = { method: c.req.method, route, status: String(c.res.status) };
      m.requests.inc(labels);
      m.requestSeconds.observe(labels, (performance.now() - started) / 1000);
    }
  };
}

async function timed<T>(
  h: Histogram<string>,
  labels: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let outcome = 'error';
  try {
    const out = await fn();
    outcome = 'ok';
    return out;
  } finally {
    h.observe({ ...labels, outcome }, (performance.now() - started) / 1000);
  }
}

/** The embedder with each call's latency observed. */
export function timedEmbedder(inner: Embedder, m: Metrics): Embedder {
  return {
    get id() {
      return inner.id;
    },
    get dimensions() {
      return inner.dimensions;
    },
    embed: (texts, signal) => timed(m.embedSeconds, { embedder: inner.id }, () => inner.embed(texts, signal)),
  };
}

/** The language model with each completion's latency observed. */
export function timedModel(inner: LanguageModel, m: Metrics): LanguageModel {
  return {
    provider: inner.provider,
    model: inner.model,
    complete: (req) =>
      timed(m.modelSeconds, { provider: inner.provider, model: inner.model }, () => inner.complete(req)),
  };
}

/** The process's own metrics (CPU, memory, event loop, GC): collected once per process, shared by its apps. */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    liveHeap(processRegistry);
  }
  return processRegistry;
}

/**
 * The JavaScript heap in use right after the latest full garbage collection: the data that is
 * alive. The heap's size and the RSS also hold garbage not yet collected, and V8 lets that grow
 * far under load on a machine with memory to spare; a leak shows as this value climbing.
 */
function liveHeap(registry: Registry): void {
  let live: number | undefined;
  new PerformanceObserver((list) => {
    const full = list
      .getEntries()
      .some(
        (e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
      );
    if (full) live = getHeapStatistics().used_heap_size;
  }).observe({ entryTypes: ['gc'] });
  new Gauge({
    name: 'mnemo_heap_live_bytes',
    help: 'JavaScript heap in use right after the latest full garbage collection (absent before the first)',
    registers: [registry],
    collect() {
      this.reset();
      if (live !== undefined) this.set(live);
    },
  });
}

/** `GET /metrics` in the Prometheus text format; no key needed (decisions.md). */
export function metricsRoutes(m: Metrics) {
  const process = processMetrics();
  return new OpenAPIHono<AppEnv>().openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['Monitoring'],
      summary: 'Prometheus metrics',
      description: 'Request, Recall, model and worker metrics in the Prometheus text format.',
      responses: {
        200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
      },
    }),
    async (c) => {
      const body = (await process.metrics()) + (await m.registry.metrics());
      return c.text(body, 200, { 'Content-Type': m.registry.contentType });
    },
  );
}
