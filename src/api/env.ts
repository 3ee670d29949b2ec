import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import type { Services } from '../core/services.js';
import type { BankScope } from '../core/bank-scope.js';
import type { Actor, Scope } from '../core/types.js';

/** Who a request acts for: a project, an actor, and what the actor may do. */
export interface Auth {
  projectId: string;
  actor: Actor;
  /** `all` for the operator; the key's scopes otherwise. */
  scopes: ReadonlySet<Scope> | 'all';
  /** The banks a scoped key may reach (core/bank-scope.ts); null = every bank of the project. */
  banks: BankScope;
}

/** Hono environment shared by every route. */
export interface AppEnv {
  Variables: {
    requestId: string;
    services: Services;
    config: Config;
    log: Logger;
    auth?: Auth;
    /** Stable action name for audit, set by the route's guard. */
    action?: string;
    /**
     * Derived from a write's Idempotency-Key (with its caller and request): the same on every
     * retry of the request, different for any other. A sync Retain names its memories by it.
     */
    idempotencySeed?: string;
  };
}
