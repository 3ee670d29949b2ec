import { randomUUID } from 'node:crypto';
import { TEMPLATE_CONFIG_KEYS, type BankTemplateManifest } from '../contract/templates.js';
import type { TemplateChange } from '../store/store.js';
import { effectiveConfig } from './bank-config.js';
import { bankForWrite, checkConfigUpdates, requireBank } from './banks.js';
import { MAX_DIRECTIVES } from './directives.js';
import { AppError } from './errors.js';
import { checkId } from './ids.js';
import type { Services } from './services.js';

/** The manifest of a bank: its settings (every template key, as in effect), mission and directives. */
export async function exportTemplate(s: Services, projectId: string, bankId: string) {
  const bank = await requireBank(s, projectId, bankId);
  const cfg = effectiveConfig(bank.config) as Record<string, unknown>;
  const directives = await s.store.listDirectives(projectId, bankId);
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
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Applies a manifest to the bank (created when missing): its settings as the bank's overrides
 * (`null`: the default), its mission, and its directives matched by name (updated, else
 * created). Everything is checked first and written in one transaction: all or nothing. With
 * `dryRun` it answers the same report and changes nothing.
 */
export async function importTemplate(
  s: Services,
  projectId: string,
  bankId: string,
  manifest: BankTemplateManifest,
  opts: { dryRun: boolean; masterKeySet: boolean },
) {
  checkId('bank id', bankId, 'bank');
  if (manifest.mental_models?.length) {
    throw new AppError('validation_error', 'this server does not import mental models yet', {
      details: [
        { path: 'mental_models', message: 'mental models are not supported yet: remove the section' },
      ],
    });
  }
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
  const report = {
    bank_id: bankId,
    config_applied: changed.length > 0,
    config_changed: changed,
    bank_created: existing === null,
    mental_models_created: [],
    mental_models_updated: [],
    directives_created: change.createDirectives.map((d) => d.name),
    directives_updated: updated,
    operation_ids: [],
    dry_run: opts.dryRun,
  };
  if (opts.dryRun) return report;
  await bankForWrite(s, projectId, bankId);
  const result = await s.store.applyBankTemplate(projectId, bankId, change, MAX_DIRECTIVES);
  if (result === 'full') throw tooMany(bankId);
  if (result === 'gone') {
    // Deleted (the bank, or a directive matched by name) between the read and the write.
    throw new AppError('conflict', `bank '${bankId}' changed during the import; nothing was applied: retry`);
  }
  return report;
}

const tooMany = (bankId: string) =>
  new AppError(
    'conflict',
    `the import would leave bank '${bankId}' with more than ${MAX_DIRECTIVES} directives`,
  );
