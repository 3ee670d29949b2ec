import { z } from 'zod';
import { named } from './names.js';
import { BANK_CONFIG_SCHEMA } from './bank-config.js';
import { Tags } from './common.js';
import { DirectiveName, DirectivePriority, DirectiveText } from './directives.js';
import {
  CreateMentalModelBody,
  MAX_MENTAL_MODELS,
  MentalModelId,
  MentalModelTriggerInput,
} from './mental-models.js';

/** Directives a manifest may carry: as many as a bank may hold. */
export const TEMPLATE_MAX_DIRECTIVES = 100;
/** Mental models a manifest may carry: as many as a bank may hold. */
export const TEMPLATE_MAX_MENTAL_MODELS = MAX_MENTAL_MODELS;

/**
 * The bank settings a template carries: every config key but `encryption` (a bank's encryption
 * is its operator's decision, never a template's), each optional, `null` for the default; and
 * the bank's mission. A key mnemo does not know is a 400 naming it.
 */
const settings = Object.fromEntries(
  Object.entries(BANK_CONFIG_SCHEMA.shape)
    .filter(([k]) => k !== 'encryption')
    // The default is the server's, not the manifest's: an absent key leaves the bank's value.
    .map(([k, v]) => [k, (v as z.ZodDefault<z.ZodType>).unwrap().nullable().optional()]),
) as {
  [K in Exclude<keyof typeof BANK_CONFIG_SCHEMA.shape, 'encryption'>]: z.ZodOptional<
    z.ZodNullable<z.ZodType>
  >;
};

export const TEMPLATE_CONFIG_KEYS = Object.keys(settings);

export const BankTemplateConfig = z
  .strictObject({
    ...settings,
    mission: z
      .string()
      .max(4000)
      .nullable()
      .optional()
      .meta({ description: 'the bank’s mission (identity)' }),
  })
  .register(named, { name: 'BankTemplateConfig' });

export const BankTemplateDirective = z
  .strictObject({
    name: DirectiveName.meta({ description: 'matches an existing directive of the same name on import' }),
    content: DirectiveText,
    priority: DirectivePriority.optional().meta({ description: 'default 0' }),
    is_active: z.boolean().optional().meta({ description: 'default true' }),
    tags: Tags.optional(),
  })
  .register(named, { name: 'BankTemplateDirective' });

/**
 * A mental model of a manifest (Hindsight's shape): its definition, never its content. Matched
 * by id on import: updated when the bank has it, else created (and its first refresh queued).
 */
export const BankTemplateMentalModel = z
  .strictObject({
    id: MentalModelId.meta({ description: 'matches an existing mental model of the same id on import' }),
    name: CreateMentalModelBody.shape.name,
    source_query: CreateMentalModelBody.shape.source_query,
    tags: Tags.optional(),
    max_tokens: CreateMentalModelBody.shape.max_tokens,
    trigger: MentalModelTriggerInput.optional(),
  })
  .register(named, { name: 'BankTemplateMentalModel' });

/** Each key of a section names one entry: a second is an issue at its place. */
function once(ctx: z.RefinementCtx, section: string, field: string, label: string, keys: string[]) {
  const seen = new Set<string>();
  keys.forEach((k, i) => {
    if (seen.has(k))
      ctx.addIssue({ code: 'custom', path: [section, i, field], message: `${label} '${k}' appears twice` });
    seen.add(k);
  });
}

export const BankTemplateManifest = z
  .strictObject({
    version: z.literal('1').meta({ description: "the manifest format's version: '1'" }),
    bank: BankTemplateConfig.optional(),
    directives: z.array(BankTemplateDirective).max(TEMPLATE_MAX_DIRECTIVES).nullable().optional(),
    mental_models: z
      .array(BankTemplateMentalModel)
      .max(TEMPLATE_MAX_MENTAL_MODELS)
      .nullable()
      .optional()
      .meta({
        description: 'definitions only (no content); matched by id on import: updated, else created',
      }),
  })
  .superRefine((m, ctx) => {
    once(
      ctx,
      'directives',
      'name',
      'directive name',
      (m.directives ?? []).map((d) => d.name),
    );
    once(
      ctx,
      'mental_models',
      'id',
      'mental model id',
      (m.mental_models ?? []).map((mm) => mm.id),
    );
  })
  .register(named, { name: 'BankTemplateManifest' });
export type BankTemplateManifest = z.infer<typeof BankTemplateManifest>;

export const TemplateImportQuery = z.object({
  dry_run: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: 'true: answer what would change and change nothing' }),
});

export const BankTemplateImportResponse = z
  .object({
    bank_id: z.string(),
    config_applied: z.boolean().meta({ description: 'the bank’s settings changed (or would, in a dry run)' }),
    config_changed: z.array(z.string()).meta({ description: 'the settings whose value changed (or would)' }),
    bank_created: z.boolean().meta({ description: 'the bank did not exist (a dry run creates nothing)' }),
    mental_models_created: z.array(z.string()).meta({ description: 'ids' }),
    mental_models_updated: z.array(z.string()).meta({ description: 'ids' }),
    directives_created: z.array(z.string()).meta({ description: 'names' }),
    directives_updated: z.array(z.string()).meta({ description: 'names' }),
    operation_ids: z
      .array(z.string())
      .meta({ description: 'the refresh queued for the models created or updated (none in a dry run)' }),
    dry_run: z.boolean(),
  })
  .register(named, { name: 'BankTemplateImportResponse' });

/** The manifest's JSON Schema, as `GET /v1/bank-template-schema` answers it. */
export function bankTemplateJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(BankTemplateManifest, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}
