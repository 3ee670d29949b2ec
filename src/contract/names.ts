import { z } from 'zod';

/**
 * The names of the contract's shared schemas: their components in `/openapi.json` (the server
 * turns them into `$ref`s). Not zod's global `id`: that would also turn every JSON Schema made
 * from the contract (MCP tool schemas) into `$ref`s, and it throws when a module is loaded twice.
 */
export const SCHEMA_NAMES = new Map<z.core.$ZodType, string>();

class NameRegistry extends z.core.$ZodRegistry<{ name: string }> {
  override add<S extends z.core.$ZodType>(schema: S, ...meta: [{ name: string }]): this {
    SCHEMA_NAMES.set(schema, meta[0].name);
    return super.add(schema, ...meta);
  }
}

/** `schema.register(named, { name: 'Memory' })` names a schema (and returns it unchanged). */
export const named = new NameRegistry();
