import { z } from 'zod';
import { named } from './names.js';

/** `GET /health`: the process answers (Hindsight's alias of readiness; mnemo reads nothing). */
export const HealthResponse = z.object({ status: z.literal('ok') }).register(named, { name: 'Health' });

/** `GET /health/ready`: the database answers (503 with `unavailable` when it does not). */
export const ReadinessResponse = z
  .object({ status: z.enum(['ready', 'unavailable']), engine: z.string() })
  .register(named, { name: 'Readiness' });

/** `GET /health/live`: the process serves requests; no database read, so a slow one never restarts it. */
export const LivenessResponse = z
  .object({ status: z.literal('alive'), version: z.string(), uptime_seconds: z.number() })
  .register(named, { name: 'Liveness' });

/** `GET /version`: what this server is and which capabilities it has (Hindsight's flags and mnemo's). */
export const VersionResponse = z
  .object({ api_version: z.string(), version: z.string(), features: z.record(z.string(), z.boolean()) })
  .register(named, { name: 'Version' });
