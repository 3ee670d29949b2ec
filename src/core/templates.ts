import { randomUUID } from 'node:crypto';
import { TEMPLATE_CONFIG_KEYS, type BankTemplateManifest } from '../contract/templates.js';
import type {
  TemplateChange,
  MentalModelStore,
  BankStore,
  DirectiveStore,
  OperationStore,
  TemplateStore,
} from '../store/store.js';
import { effectiveConfig } from './bank-config.js';
import { bankForWrite, checkConfigUpdates, requireBank } from './banks.js';
import { MAX_DIRECTIVES } from './directives.js';
import { AppError } from './errors.js';
import { checkId } from './ids.js';
import { newMentalModel, triggerOf } from './mental-models.js';
import { queueRefreshes } from './mental-model-schedule.js';
import type { Deps } from './services.js';
import { MAX_MENTAL_MODELS } from '../contract/mental-models.js';
import type { MentalModelRecord, NewMentalModel } from '../store/store.js';

/** A bank's mental models, all of them (a bank holds at most `MAX_MENTAL_MODELS`). */
const allMentalModels = async (s: Deps<MentalModelStore>, projectId: string, bankId: string) =>
  (await s.store.listMentalModels(projectId, bankId, { limit: MAX_MENTAL_MODELS, offset: 0 })).items;

/**
 * The manifest of a bank: its settings (every template key, as in effect), mission, directives
 * and mental models (their definitions, not their content).
 */
export async function exportTemplate(
  s: Deps<BankStore & DirectiveStore & MentalModelStore>,
  projectId: string,
  bankId: string,
) {
  const bank = await requireBank(s, projectId, bankId);
  const cfg = effectiveConfig(bank.config) as Record<string, unknown>;
  const directives = await s.store.listDirectives(projectId, bankId);
  const models = await allMentalModels(s, projectId, bankId);
  return {
    version: '1' as const,
    bank: {
      ...Object.fromEntries(TEMPLATE_CONFIG_KEYS.map((k) => [k, cfg[k] ?? null])),
      mission: bank.mission,
    },
    directives: directives.map((d) => ({
      name: d.name,
      content: d.text,
      priority: d.priority,
      is_active: d.active,
      tags: d.tags,
    })),
    mental_models: models.map((m) => ({
      id: m.id,
      name: m.name,
      source_query: m.source_query,
      tags: m.tags,
      max_tokens: m.max_tokens,
      trigger: triggerOf(undefined, m.trigger),
    })),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The model's definition differs from the one kept: the import updates it (and refreshes it). */
const redefined = (old: MentalModelRecord, m: NewMentalModel) =>
  old.name !== m.name ||
  old.source_query !== m.source_query ||
  old.max_tokens !== m.max_tokens ||
  !same([...old.tags].sort(), [...m.tags].sort()) ||
  !same(triggerOf(undefined, old.trigger), m.trigger);

/**
 * Applies a manifest to the bank (created when missing): its settings as the bank's overrides
 * (`null`: the default), its mission, its directives matched by name and its mental models
 * matched by id (updated, else created). Everything is checked first and written in one
 * transaction: all or nothing. Models created or redefined get one refresh operation, as a
 * created model does. With `dryRun` it answers the same report and changes nothing.
 */
export async function importTemplate(
  s: Deps<BankStore & DirectiveStore & MentalModelStore & OperationStore & TemplateStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  manifest: BankTemplateManifest,
  opts: { dryRun: boolean; masterKeySet: boolean },
) {
  checkId('bank id', bankId, 'bank');
  const { mission, ...settings } = manifest.bank ?? {};
  const updates = checkConfigUpdates(settings, opts);
  const existing = await s.store.getBank(projectId, bankId);
  const before = effectiveConfig(existing?.config ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...(existing?.config ?? {}) };
  for (const [k, v] of Object.entries(updates)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  const after = effectiveConfig(merged) as Record<string, unknown>;
  const changed = Object.keys(updates).filter((k) => !same(before[k], after[k]));
  const missionChanged = mission !== undefined && !same(existing?.mission, mission);
  if (missionChanged) changed.push('mission');

  const current = existing ? await s.store.listDirectives(projectId, bankId) : [];
  const byName = new Map<string, (typeof current)[number]>();
  for (const d of current) if (!byName.has(d.name)) byName.set(d.name, d);
  const change: TemplateChange = {
    config: updates,
    ...(mission !== undefined && { mission }),
    createDirectives: [],
    updateDirectives: [],
    createMentalModels: [],
    updateMentalModels: [],
  };
  const updated: string[] = [];
  for (const d of manifest.directives ?? []) {
    const fields = {
      name: d.name,
      text: d.content,
      priority: d.priority ?? 0,
      tags: [...new Set(d.tags ?? [])],
      active: d.is_active ?? true,
    };
    const old = byName.get(d.name);
    if (!old) change.createDirectives.push({ id: randomUUID(), ...fields });
    else if (
      old.text !== fields.text ||
      old.priority !== fields.priority ||
      old.active !== fields.active ||
      !same([...old.tags].sort(), [...fields.tags].sort())
    ) {
      change.updateDirectives.push({ id: old.id, ...fields });
      updated.push(d.name);
    }
  }
  if (current.length + change.createDirectives.length > MAX_DIRECTIVES) throw tooMany(bankId);

  // Each model is checked (blank name, query past Recall's bound) before anything is written.
  const models = (manifest.mental_models ?? []).map((m) => newMentalModel(m));
  const kept = new Map(
    (existing && models.length ? await allMentalModels(s, projectId, bankId) : []).map((m) => [m.id, m]),
  );
  for (const m of models) {
    const old = kept.get(m.id);
    if (!old) change.createMentalModels.push(m);
    else if (redefined(old, m)) change.updateMentalModels.push(m);
  }
  if (kept.size + change.createMentalModels.length > MAX_MENTAL_MODELS) throw tooManyModels(bankId);
  const report = {
    bank_id: bankId,
    config_applied: changed.length > 0,
    config_changed: changed,
    bank_created: existing === null,
    mental_models_created: change.createMentalModels.map((m) => m.id),
    mental_models_updated: change.updateMentalModels.map((m) => m.id),
    directives_created: change.createDirectives.map((d) => d.name),
    directives_updated: updated,
    operation_ids: [] as string[],
    dry_run: opts.dryRun,
  };
  if (opts.dryRun) return report;
  await bankForWrite(s, projectId, bankId);
  const result = await s.store.applyBankTemplate(
    projectId,
    bankId,
    change,
    MAX_DIRECTIVES,
    MAX_MENTAL_MODELS,
  );
  if (result === 'full' || result === 'gone') {
    // Written meanwhile (a directive or model created, or one deleted, or the bank) between the
    // read and the write: the import is refused whole.
    throw new AppError('conflict', `bank '${bankId}' changed during the import; nothing was applied: retry`);
  }
  if (change.createMentalModels.length || change.updateMentalModels.length)
    report.operation_ids.push((await queueRefreshes(s, projectId, bankId)).operation_id);
  return report;
}

const tooMany = (bankId: string) =>
  new AppError(
    'conflict',
    `the import would leave bank '${bankId}' with more than ${MAX_DIRECTIVES} directives`,
  );

const tooManyModels = (bankId: string) =>
  new AppError(
    'conflict',
    `the import would leave bank '${bankId}' with more than ${MAX_MENTAL_MODELS} mental models`,
  );
