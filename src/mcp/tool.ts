import { nfc } from '../api/nfc.js';
import { randomUUID } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { toAppError } from '../api/errors.js';
import { AppError, invalid } from '../core/errors.js';
import { type BankScope, requireInScope } from '../core/bank-scope.js';
import type { Services } from '../core/services.js';
import type { Actor, Scope } from '../core/types.js';
import {
  ACTIONS,
  type Action,
  type ActionSpec,
  bankFiltered,
  scopesAdmit,
  scopesNeeded,
} from '../contract/actions.js';

/** Who the tools act for, and how: one per MCP server instance (per HTTP request, or per stdio process). */
export interface ToolContext {
  services: Services;
  projectId: string;
  actor: Actor;
  /** `all` for the operator (and the embedded stdio server); the key's scopes otherwise. */
  scopes: ReadonlySet<Scope> | 'all';
  /** The banks a scoped key may reach (core/bank-scope.ts); null or absent = every bank. */
  banks?: BankScope;
  /** The bank used when a call names none (`mnemo mcp --bank`, `/mcp?bank=`). */
  defaultBank?: string;
  /** The HTTP request carrying the call; stdio calls get a fresh id each. */
  requestId?: string;
  log?: Logger;
}

type Shape = Record<string, z.ZodType>;

/** A result as core returns it: the schema's shape, with Dates where JSON will carry ISO strings. */
type Wire<T> = T extends string
  ? string | Date
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** Actions a key can be given (not operator-only): the ones a tool may perform. */
export type ToolAction = { [A in Action]: (typeof ACTIONS)[A]['scope'] extends Scope ? A : never }[Action];

/**
 * One tool: its schemas, its action, what it does through core and how it reads as text. The
 * scope it needs and whether it only reads (not audited, `readOnlyHint`) come from the action's
 * entry in the contract's catalogue.
 */
export interface ToolSpec<I extends Shape, O extends z.ZodObject, B extends boolean> {
  name: string;
  title: string;
  description: string;
  /** Stable audit action, the same name the HTTP route records. */
  action: ToolAction;
  /** Hints beyond `readOnlyHint` (which the catalogue gives). */
  annotations: Omit<ToolAnnotations, 'readOnlyHint'>;
  /** Whether the tool works on one bank: a `bank` argument is added (optional with a default bank). */
  bank: B;
  input: I;
  output: O;
  run(
    ctx: ToolContext,
    args: z.output<z.ZodObject<I>>,
    bank: B extends true ? string : undefined,
  ): Promise<Wire<z.input<O>>>;
  /** The text a model reads; the structured content carries the same data as JSON. */
  render(out: z.output<O>): string;
}

/** A tool of any shape, as the tool lists hold them. */
export type AnyTool = ToolSpec<any, any, any>;

/** Keeps each tool's argument and result types checked while the list holds tools of every shape. */
export const defineTool = <I extends Shape, O extends z.ZodObject, B extends boolean>(
  spec: ToolSpec<I, O, B>,
): AnyTool => spec;

export const hasScope = (scopes: ToolContext['scopes'], scope: Scope) =>
  scopes === 'all' || scopes.has(scope);

/** What a tool needs and does, from the catalogue. */
const actionOf = (spec: AnyTool): ActionSpec => ACTIONS[spec.action as ToolAction];

function bankArgument(defaultBank: string | undefined) {
  const base = z.string().min(1).max(256);
  return defaultBank === undefined
    ? base.describe('Bank id: whose memory (e.g. a user id or e-mail address)')
    : base.optional().describe(`Bank id: whose memory. Defaults to '${defaultBank}'`);
}

/** Dates become ISO strings: structured content is plain JSON. */
const toJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

function errorText(e: AppError): string {
  const lines = [`${e.code}: ${e.message}`];
  for (const d of e.details ?? []) if (d.message !== e.message) lines.push(`- ${d.path}: ${d.message}`);
  if (e.extra?.required_scope) lines.push(`required scope: ${String(e.extra.required_scope)}`);
  return lines.join('\n');
}

interface AuditFacts {
  bank: string | undefined;
  space: unknown;
  status: number;
  requestId: string;
}

async function audit(ctx: ToolContext, spec: AnyTool, f: AuditFacts) {
  try {
    await ctx.services.store.appendAudit({
      projectId: ctx.projectId,
      actorType: ctx.actor.type,
      keyId: ctx.actor.keyId ?? null,
      action: spec.action,
      bankId: f.bank ?? null,
      spaceId: typeof f.space === 'string' ? f.space : null,
      status: f.status,
      requestId: f.requestId,
      transport: 'mcp',
    });
  } catch (err) {
    ctx.log?.error({ err, requestId: f.requestId }, 'audit write failed');
  }
}

/** Runs one call: scope check, bank resolution, core, audit; every failure becomes a tool error a model can read. */
export async function callTool(
  ctx: ToolContext,
  spec: AnyTool,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const requestId = ctx.requestId ?? randomUUID();
  const started = performance.now();
  const { bank: named, ...rest } = args;
  // Ids are compared in NFC (api/nfc.ts): the same bank however the client composed its name.
  const chosen = spec.bank ? ((named as string | undefined) ?? ctx.defaultBank) : undefined;
  const bank = typeof chosen === 'string' ? nfc(chosen) : chosen;
  let status = 200;
  try {
    const action = actionOf(spec);
    if (!scopesAdmit(action, ctx.scopes)) {
      const message = `this key lacks the ${scopesNeeded(action)} scope, which the ${spec.name} tool needs`;
      throw new AppError('forbidden', message, { extra: { required_scope: action.scope } });
    }
    if (spec.bank && bank === undefined) throw invalid('bank', 'bank is required: no default bank is set');
    // The same bank check as every route's guard (api/auth.ts): a bank outside a scoped key's
    // banks is not found, and a tool addressed to no bank must filter by the scope itself.
    const scoped = ctx.banks ?? null;
    if (scoped !== null) {
      if (typeof bank === 'string') requireInScope(scoped, bank);
      else if (!bankFiltered(spec.action)) {
        throw new AppError(
          'forbidden',
          'this key is limited to some banks; this tool spans the whole project',
        );
      }
    }
    // Parsing drops fields beyond the declared schema, which clients check strictly.
    const parsed = spec.output.safeParse(toJson(await spec.run(ctx, rest, bank)));
    if (!parsed.success)
      throw new Error(`${spec.name} result does not match its schema: ${parsed.error.message}`);
    const out = parsed.data;
    return { structuredContent: out, content: [{ type: 'text', text: spec.render(out) }] };
  } catch (err) {
    const e = toAppError(err);
    status = e.status;
    if (e.code === 'internal') ctx.log?.error({ err, requestId, tool: spec.name }, 'tool failed');
    return { isError: true, content: [{ type: 'text', text: errorText(e) }] };
  } finally {
    if (!ACTIONS[spec.action as ToolAction].read || status === 401 || status === 403) {
      await audit(ctx, spec, { bank, space: rest.space, status, requestId });
    }
    ctx.log?.info(
      {
        requestId,
        tool: spec.name,
        status,
        project: ctx.projectId,
        bank,
        ms: Math.round(performance.now() - started),
      },
      'mcp tool call',
    );
  }
}

/** Adds a tool to a server, with the `bank` argument shaped by the context's default bank. */
export function registerTool(server: McpServer, ctx: ToolContext, spec: AnyTool): void {
  const inputSchema: Shape = spec.bank ? { bank: bankArgument(ctx.defaultBank), ...spec.input } : spec.input;
  server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: `${spec.description}\nNeeds the ${scopesNeeded(actionOf(spec))} scope.`,
      inputSchema,
      outputSchema: spec.output,
      annotations: {
        title: spec.title,
        readOnlyHint: ACTIONS[spec.action as ToolAction].read,
        ...spec.annotations,
      },
    },
    (args: Record<string, unknown>) => callTool(ctx, spec, args),
  );
}
