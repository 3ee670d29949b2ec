import { createRoute } from '@hono/zod-openapi';
import {
  deleteEvaluation,
  getEvaluation,
  listEvaluations,
  runEvaluation,
} from '../../core/evaluate/evaluations.js';
import { authOf, guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import {
  DeletedEvaluation,
  EvaluationPage,
  EvaluationParams,
  EvaluationQuery,
  EvaluationRecord,
  RunEvaluationBody,
} from '../../contract/evaluations.js';
import { inBank, router, send, servicesOf } from './router.js';

const TAG = ['Evaluations'];

/** Recall evaluations of a bank: known queries with the memories they should find, scored. */
export const evaluationRoutes = router()
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/evaluations',
      tags: TAG,
      summary: 'Run a recall evaluation',
      description:
        'Runs each case through Recall, one after another, and keeps the run: recall@k and MRR overall and per channel, and each case’s rank. `from` reruns a past run’s cases. The cases’ Recalls are charged all at once before the first runs; one evaluation of a bank runs at a time (another is a 429 `evaluations_per_bank`, refused before it is charged).',
      middleware: [guard('evaluations.run')] as const,
      request: { params: BankParam, ...jsonBody(RunEvaluationBody) },
      responses: ok(EvaluationRecord, 'Created', 201),
    }),
    async (c) => {
      const { bank } = c.req.valid('param');
      const run = await runEvaluation(
        servicesOf(c),
        authOf(c).projectId,
        bank,
        c.req.valid('json'),
        c.req.raw.signal,
      );
      return send(c, run, 201);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/evaluations',
      tags: TAG,
      summary: 'List recall evaluations',
      description: 'Newest first, without their cases, paged by `cursor`.',
      middleware: [guard('evaluations.list')] as const,
      request: { params: BankParam, query: EvaluationQuery },
      responses: ok(EvaluationPage),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const page = await listEvaluations(...inBank(c), {
        limit: q.limit ?? 50,
        cursor: q.cursor,
      });
      return send(c, page);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/evaluations/{id}',
      tags: TAG,
      summary: 'Get a recall evaluation',
      middleware: [guard('evaluations.get')] as const,
      request: { params: EvaluationParams },
      responses: ok(EvaluationRecord),
    }),
    async (c) => send(c, await getEvaluation(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/evaluations/{id}',
      tags: TAG,
      summary: 'Delete a recall evaluation',
      middleware: [guard('evaluations.delete')] as const,
      request: { params: EvaluationParams },
      responses: ok(DeletedEvaluation),
    }),
    async (c) => send(c, await deleteEvaluation(...inBank(c), c.req.valid('param').id)),
  );
