import { z } from 'zod';
import { BANK_CONFIG_SCHEMA } from '../../src/contract/bank-config.js';
import { code, table } from './regions.js';

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
}

/** What a key accepts, in words, from its JSON Schema. */
function values(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(values).join(' or ');
  if (s.enum) return s.enum.map((v) => code(String(v))).join(', ');
  if (s.type === 'integer')
    return `integer ${s.minimum?.toLocaleString('en') ?? ''}–${s.maximum?.toLocaleString('en') ?? ''}`;
  if (s.type === 'string')
    return s.maxLength ? `text up to ${s.maxLength.toLocaleString('en')} characters` : 'text';
  if (s.type === 'boolean') return '`true`, `false`';
  if (s.type === 'null') return '`null`';
  return s.type ?? 'any';
}

/** Every bank config key with the values it takes and its default (docs/api.md). */
export function bankConfigTable(): string {
  const schema = z.toJSONSchema(BANK_CONFIG_SCHEMA, { io: 'output' }) as {
    properties: Record<string, JsonSchema>;
  };
  const rows = Object.entries(schema.properties).map(([key, s]) => [
    code(key),
    values(s),
    code(JSON.stringify(s.default)),
  ]);
  return table(['key', 'values', 'default'], rows);
}
