import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { withMeteredModel } from '../budgets.js';
import { LlmLedger } from '../llm-ledger.js';
import type { Deps } from '../services.js';
import type { BankStore, LimitStore, LlmRequestStore } from '../../store/store.js';
import type { EntityInput, FactType } from '../types.js';
import { extractItem } from './extract.js';

/** The bank settings a dry run may try instead of the bank's own. */
const OVERRIDABLE = [
  'retain_extraction_mode',
  'retain_mission',
  'retain_custom_instructions',
  'retain_chunk_size',
  'retain_auto_entities',
] as const;

export interface DryRunRequest {
  content: string;
  context?: string;
  timestamp?: Date;
  fact_type?: FactType;
  entities?: EntityInput[];
  retain_extraction_mode?: string | null;
  retain_mission?: string | null;
  retain_custom_instructions?: string | null;
  retain_chunk_size?: number | null;
  retain_auto_entities?: boolean | null;
}

/**
 * What Retain would store for one item, without storing anything: the same extraction, under
 * the bank's settings with any of `OVERRIDABLE` replaced for this call. No entity resolution,
 * embedding or write; a model's tokens are metered and counted in the bank's usage like
 * Retain's.
 */
export async function dryRunExtract(
  s: Deps<BankStore & LimitStore & LlmRequestStore, 'limitDefaults' | 'llm' | 'now'>,
  projectId: string,
  bankId: string,
  req: DryRunRequest,
) {
  const bank = await requireBank(s, projectId, bankId);
  const overrides: Record<string, unknown> = {};
  for (const key of OVERRIDABLE) if (req[key] !== undefined && req[key] !== null) overrides[key] = req[key];
  const cfg = effectiveConfig({ ...bank.config, ...overrides });
  const ledger = new LlmLedger(s, projectId, bankId, 'retain');
  const out = await extractItem(
    withMeteredModel(ledger.services(s, 'dry_run_extraction'), projectId, 'request'),
    {
      content: req.content,
      context: req.context,
      fact_type: req.fact_type,
      entities: req.entities,
      mentioned: req.timestamp ?? s.now(),
    },
    cfg,
  ).finally(() => ledger.settle());
  return {
    facts: out.facts.map((f) => ({
      text: f.text,
      fact_type: f.type,
      occurred_start: f.occurred_start,
      occurred_end: f.occurred_end,
      entities: f.entities.map((e) => e.text),
    })),
    extraction: out.extraction,
    usage: {
      input_tokens: out.usage.input,
      output_tokens: out.usage.output,
      total_tokens: out.usage.input + out.usage.output,
    },
  };
}
