import { GUARDED_MOUNTS } from '../../src/api/routes/index.js';
import { ACTIONS, type Action, type ActionSpec } from '../../src/contract/actions.js';
import { SCOPES } from '../../src/contract/vocabulary.js';
import { ADMIN_TOOLS, TOOLS } from '../../src/mcp/server.js';
import { code, table } from './regions.js';

/** The bases every bank route is served under; routes under both are shown as `…/path`. */
const BANK_BASES = ['/v1/me', '/v1/default'];

/** `METHOD path` of each route, per action, read from the guards the mounted routers carry. */
export function routesByAction(): Map<Action, string[]> {
  // route (method + path below the base) -> the bases it is served under, per action
  const found = new Map<Action, Map<string, Set<string>>>();
  for (const [base, router] of GUARDED_MOUNTS) {
    for (const r of router.routes) {
      const action = (r.handler as { action?: Action }).action;
      if (!action) continue;
      const path = r.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}').replace(/\/\*$/, '') || '/';
      const key = `${r.method === 'ALL' ? '' : `${r.method} `}${path}`;
      const routes = found.get(action) ?? new Map<string, Set<string>>();
      found.set(action, routes);
      routes.set(key, (routes.get(key) ?? new Set()).add(base));
    }
  }
  const out = new Map<Action, string[]>();
  for (const [action, routes] of found) {
    const shown: string[] = [];
    for (const [key, bases] of routes) {
      const [method, path] = key.includes(' ') ? key.split(' ') : ['', key];
      const everyBase = BANK_BASES.every((b) => bases.has(b)) && bases.size === BANK_BASES.length;
      const prefixes = everyBase ? ['…'] : [...bases];
      for (const p of prefixes) {
        const full = path === '/' ? p : `${p}${path}`;
        shown.push(method ? `${method} ${full}` : full);
      }
    }
    out.set(action, shown);
  }
  return out;
}

/** Every action with the scope it needs, its routes and its MCP tool (docs/api.md). */
export function scopeTable(): string {
  const routes = routesByAction();
  const tools = new Map<string, string[]>();
  for (const t of [...TOOLS, ...ADMIN_TOOLS]) tools.set(t.action, [...(tools.get(t.action) ?? []), t.name]);
  const order = [...SCOPES, 'operator'];
  const actions = (Object.keys(ACTIONS) as Action[]).sort(
    (a, b) => order.indexOf(ACTIONS[a].scope) - order.indexOf(ACTIONS[b].scope),
  );
  const rows = actions.map((a) => {
    const spec: ActionSpec = ACTIONS[a];
    return [
      spec.scope === 'operator'
        ? 'operator token'
        : code(spec.scope) + (spec.orScope ? ` or ${code(spec.orScope)}` : ''),
      code(a),
      (routes.get(a) ?? []).map(code).join(', ') || '—',
      (tools.get(a) ?? []).map(code).join(', ') || '—',
      spec.read ? 'yes' : '',
    ];
  });
  return table(['scope', 'action (audit trail)', 'HTTP', 'MCP tool', 'reads only'], rows);
}
