import { createRoute, z } from '@hono/zod-openapi';
import { exportTemplate, importTemplate } from '../../core/templates.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import {
  BankTemplateImportResponse,
  BankTemplateManifest,
  bankTemplateJsonSchema,
  TemplateImportQuery,
} from '../../contract/templates.js';
import { jsonBody, ok } from './openapi.js';
import { inBank, router, send } from './router.js';

const TAG = ['Bank templates'];

/** A bank's settings, mission, directives and mental models as a manifest: export, and import (or its dry run). */
export const templateRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/export',
      tags: TAG,
      summary: 'Export a bank template',
      description:
        'The bank’s settings (every template key, as in effect), mission, directives and mental model definitions as a manifest that `import` applies to another bank. Never its memories, mental model content, encryption or keys.',
      middleware: [guard('banks.template.export')] as const,
      request: { params: BankParam },
      responses: ok(BankTemplateManifest),
    }),
    async (c) => send(c, await exportTemplate(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/import',
      tags: TAG,
      summary: 'Import a bank template',
      description:
        'Applies a manifest, creating the bank when missing: settings become the bank’s overrides (`null`: the default), directives are matched by name and mental models by id (updated, else created; one refresh operation refreshes the models created or updated). All or nothing. `dry_run=true` answers what would change and changes nothing.',
      middleware: [guard('banks.template.import')] as const,
      request: { params: BankParam, query: TemplateImportQuery, ...jsonBody(BankTemplateManifest) },
      responses: ok(BankTemplateImportResponse),
    }),
    async (c) => {
      const config = c.get('config');
      return send(
        c,
        await importTemplate(...inBank(c), c.req.valid('json'), {
          dryRun: c.req.valid('query').dry_run === 'true',
          masterKeySet: Boolean(config.masterKey),
        }),
      );
    },
  );

/** The manifest's JSON Schema: public, like `/version` (it describes a format, reads nothing). */
export const templateSchemaRoutes = router().openapi(
  createRoute({
    method: 'get',
    path: '/v1/bank-template-schema',
    tags: TAG,
    summary: 'Bank template JSON Schema',
    description:
      'The JSON Schema (2020-12) of the manifest `export` answers and `import` takes. No key needed.',
    responses: {
      200: {
        description: 'OK',
        content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  }),
  (c) => c.json(bankTemplateJsonSchema(), 200),
);
