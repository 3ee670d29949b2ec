import { createRoute } from '@hono/zod-openapi';
import { readFileSync } from 'node:fs';
import {
  HealthResponse,
  LivenessResponse,
  ReadinessResponse,
  VersionResponse,
} from '../../contract/health.js';
import { router } from './router.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Features this server offers, for clients that adapt (Hindsight's flags plus mnemo's own). */
export const FEATURES = {
  observations: true,
  mcp: true,
  worker: true,
  bank_config_api: true,
  bank_llm_health: false,
  file_upload_api: false,
  document_export_api: false,
  document_import_api: false,
  audit_log: true,
  llm_trace: true,
  store_document_text: false,
  spaces: true,
  org_blending: true,
  api_keys: true,
  managed_encryption: true,
  async_operations: true,
};

const json = <T>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** Liveness, readiness and version: no key needed. */
export const healthRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/health',
      tags: ['Monitoring'],
      summary: 'Health check',
      description: 'The process answers. Reads nothing; `/health/ready` checks the database.',
      responses: { 200: json(HealthResponse, 'OK') },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/health/ready',
      tags: ['Monitoring'],
      summary: 'Readiness probe',
      description: '200 when the database answers, 503 when it does not.',
      responses: {
        200: json(ReadinessResponse, 'Ready'),
        503: json(ReadinessResponse, 'The database does not answer'),
      },
    }),
    async (c) => {
      const store = c.get('services').store;
      try {
        await store.ping();
        return c.json({ status: 'ready' as const, engine: store.engine }, 200);
      } catch {
        return c.json({ status: 'unavailable' as const, engine: store.engine }, 503);
      }
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/health/live',
      tags: ['Monitoring'],
      summary: 'Liveness probe',
      description: 'The process serves requests. No database read: a slow database never fails it.',
      responses: { 200: json(LivenessResponse, 'Alive') },
    }),
    (c) =>
      c.json(
        { status: 'alive' as const, version: pkg.version, uptime_seconds: Math.round(process.uptime()) },
        200,
      ),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/version',
      tags: ['Monitoring'],
      summary: 'API version and feature flags',
      responses: { 200: json(VersionResponse, 'OK') },
    }),
    (c) => c.json({ api_version: 'v1', version: pkg.version, features: FEATURES }, 200),
  );
