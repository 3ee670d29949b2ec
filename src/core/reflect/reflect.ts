import { countTokens } from '../../text/tokens.js';
import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { type CostRefund, meteredModel, requireModelBudget } from '../budgets.js';
import { LlmLedger } from '../llm-ledger.js';
import { applicableDirectives } from '../directives.js';
import { AppError } from '../errors.js';
import type { Budget } from '../recall/budget.js';
import type { RecallResult } from '../recall/recall.js';
import type { Deps } from '../services.js';
import type { DirectiveStore, LlmRequestStore } from '../../store/store.js';
import type { Directive, FactType, TagsMatch } from '../types.js';
import { dispositionOf } from './disposition.js';
import { type Evidence, gatherEvidence, type EvidenceStore, type ObservationEvidence } from './evidence.js';
import { extractiveAnswer } from './extractive.js';
import { reflectPrompt } from './prompt.js';
import { compileResponseSchema, completeStructured, llmFailure } from './structured.js';

/** Reflect's concerns: its evidence, the bank's directives and the ledger of its model calls. */
export type ReflectStore = EvidenceStore & DirectiveStore & LlmRequestStore;

export interface ReflectRequest {
  query: string;
  context?: string;
  budget?: Budget;
  tags?: string[];
  tags_match?: TagsMatch;
  fact_types?: FactType[];
  response_schema?: Record<string, unknown>;
  /** Longest answer asked of the model, in tokens (default ANSWER_TOKENS); not on the wire. */
  answer_tokens?: number;
}

export interface ReflectResponse {
  response: string;
  /** Hindsight's name for the answer, kept beside the spec's `response`. */
  text: string;
  mode: 'extractive' | 'llm';
  usage: { tokens_used: number; input_tokens?: number; output_tokens?: number };
  based_on: {
    memories: {
      id: string;
      text: string;
      type: string;
      context: string | null;
      mentioned_at: Date | null;
      occurred_start: Date | null;
    }[];
    observations: {
      id: string;
      text: string;
      proof_count: number;
      source_memory_ids: string[];
      contradicted: boolean;
      contradicting_memory_ids: string[];
    }[];
    directives: { id: string; name: string; text: string; priority: number }[];
  };
  structured_output?: unknown;
}

/** Longest written answer asked of the model, in tokens. */
const ANSWER_TOKENS = 1500;

const memoryRef = (m: RecallResult) => ({
  id: m.id,
  text: m.text,
  type: m.type,
  context: m.context,
  mentioned_at: m.mentioned_at,
  occurred_start: m.occurred_start,
});

const observationRef = (o: ObservationEvidence) => ({
  id: o.memory.id,
  text: o.memory.text,
  proof_count: o.detail.proof_count,
  source_memory_ids: o.detail.source_memory_ids,
  contradicted: o.detail.contradicting_memory_ids.length > 0,
  contradicting_memory_ids: o.detail.contradicting_memory_ids,
});

function basedOn(
  e: Pick<Evidence, 'observations' | 'memories'>,
  directives: Directive[],
): ReflectResponse['based_on'] {
  return {
    memories: e.memories.map((m) => memoryRef(m.memory)),
    observations: e.observations.map(observationRef),
    directives: directives.map((d) => ({ id: d.id, name: d.name, text: d.text, priority: d.priority })),
  };
}

/**
 * Reflect: a written answer from the bank's memories and observations. With a language model,
 * a prompt built from the bank's identity, its directives (hard rules) and its disposition (as
 * behaviour per level), optionally answered as JSON validated against `response_schema`.
 * Without one, an extractive answer. Reflect writes nothing but the bank's token meter, and
 * that only after a successful answer: a failing model leaves everything as it was.
 */
export async function reflect(
  s: Deps<ReflectStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  req: ReflectRequest,
): Promise<ReflectResponse> {
  if (req.response_schema && !s.llm) {
    throw new AppError('llm_required', 'response_schema needs a language model (set MNEMO_LLM_PROVIDER)');
  }
  const validate = req.response_schema ? compileResponseSchema(req.response_schema) : null;
  const bank = await requireBank(s, projectId, bankId);
  const disposition = dispositionOf(bank);
  const budget = req.budget ?? effectiveConfig(bank.config).recall_default_budget;
  // The model's budgets are asked before the Recall is charged: a Reflect they would refuse at its
  // first model call costs no recall units.
  if (s.llm) await requireModelBudget(s, projectId);
  let refundRecall: CostRefund | undefined;
  const [evidence, directives] = await Promise.all([
    gatherEvidence(s, projectId, bankId, req, budget, { onCharged: (r) => (refundRecall = r) }),
    applicableDirectives(s, projectId, bankId, req.tags, req.tags_match),
  ]);

  if (!s.llm) {
    const answer = extractiveAnswer(evidence, disposition, budget);
    return {
      response: answer.text,
      text: answer.text,
      mode: 'extractive',
      usage: { tokens_used: countTokens(req.query) + countTokens(answer.text) },
      based_on: basedOn(answer, directives),
    };
  }

  const prompt = reflectPrompt({
    bank,
    disposition,
    directives,
    evidence,
    query: req.query,
    context: req.context,
    now: s.now(),
    structured: validate !== null,
  });
  const request = {
    system: prompt.system,
    messages: [{ role: 'user' as const, content: prompt.user }],
    maxTokens: req.answer_tokens ?? ANSWER_TOKENS,
    temperature: 0.2,
  };
  // Each model call is charged against the project's budgets first (429 before the call), and
  // recorded for the bank (llm-requests).
  const ledger = new LlmLedger(s, projectId, bankId, 'reflect');
  const llm = meteredModel(
    ledger.services(s, validate ? 'structured_answer' : 'answer'),
    projectId,
    'request',
  )!;
  let text: string;
  let usage: { inputTokens: number; outputTokens: number };
  let structured: unknown;
  try {
    if (validate && req.response_schema) {
      const answer = await completeStructured(llm, request, req.response_schema, validate);
      structured = answer.value;
      text = JSON.stringify(answer.value);
      usage = answer.usage;
    } else {
      const answer = await llm.complete(request);
      text = answer.text.trim();
      usage = answer.usage;
      if (!text) throw new AppError('llm_error', 'the language model returned an empty answer');
    }
  } catch (err) {
    // A model budget that refuses the call (its prompt is larger than what is left) refuses the
    // Reflect: the Recall it was charged for is given back.
    if (err instanceof AppError && err.code === 'rate_limited') await refundRecall?.();
    llmFailure(err);
  } finally {
    // The calls made, answered or failed, with the tokens they spent: one write.
    await ledger.settle();
  }
  return {
    response: text,
    text,
    mode: 'llm',
    usage: {
      tokens_used: usage.inputTokens + usage.outputTokens,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
    },
    based_on: basedOn(evidence, directives),
    ...(validate ? { structured_output: structured } : {}),
  };
}
