import { z } from 'zod';
import { named } from './names.js';
import { BANK_CONFIG_SCHEMA } from './bank-config.js';
import { Tags } from './common.js';
import { DirectiveName, DirectivePriority, DirectiveText } from './directives.js';

/** Directives a manifest may carry: as many as a bank may hold. */
export const TEMPLATE_MAX_DIRECTIVES = 100;
/** Mental models a manifest may carry. */
export const TEMPLATE_MAX_MENTAL_MODELS = 100;

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

/** A mental model of a manifest (Hindsight's shape); mnemo does not import them yet. */
export const BankTemplateMentalModel = z
  .object({
    id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[a-z0-9-]+$/, 'lowercase letters, digits and hyphens'),
    name: z.string().min(1).max(256),
    source_query: z.string().min(1).max(4000),
    tags: Tags.optional(),
    max_tokens: z.number().int().min(256).max(8192).optional(),
    trigger: z.record(z.string(), z.unknown()).optional(),
  })
  .register(named, { name: 'BankTemplateMentalModel' });

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
        description:
          'accepted in the format; an import carrying any is refused until mnemo has mental models',
      }),
  })
  .superRefine((m, ctx) => {
    const seen = new Set<string>();
    (m.directives ?? []).forEach((d, i) => {
      if (seen.has(d.name))
        ctx.addIssue({
          code: 'custom',
          path: ['directives', i, 'name'],
          message: `directive name '${d.name}' appears twice`,
        });
      seen.add(d.name);
    });
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
    mental_models_created: z.array(z.string()),
    mental_models_updated: z.array(z.string()),
    directives_created: z.array(z.string()).meta({ description: 'names' }),
    directives_updated: z.array(z.string()).meta({ description: 'names' }),
    operation_ids: z.array(z.string()),
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
