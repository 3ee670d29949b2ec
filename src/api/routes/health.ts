import { Hono } from 'hono';
import { readFileSync } from 'node:fs';
import type { AppEnv } from '../env.js';

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
  llm_trace: false,
  store_document_text: false,
  spaces: true,
  org_blending: true,
  api_keys: true,
  managed_encryption: true,
  async_operations: true,
};

/** Liveness, readiness and version: no key needed. */
export const healthRoutes = new Hono<AppEnv>()
  .get('/health', (c) => c.json({ status: 'ok' }))
  .get('/health/ready', async (c) => {
    try {
      await c.get('services').store.ping();
      return c.json({ status: 'ready', engine: c.get('services').store.engine });
    } catch {
      return c.json({ status: 'unavailable', engine: c.get('services').store.engine }, 503);
    }
  })
  .get('/version', (c) => c.json({ api_version: 'v1', version: pkg.version, features: FEATURES }));
