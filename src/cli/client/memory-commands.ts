import { InvalidArgumentError, type Command } from 'commander';
import type {
  DeletedMemory,
  FactType,
  Memory,
  RetainItem,
  TagsMatch,
} from '../../../packages/client/src/index.js';
import { FACT_TYPES } from '../../contract/vocabulary.js';
import { action, type ConnectionOptions, connect, withConnection } from './connect.js';
import { cliIo } from '../io.js';
import { emit, list, shortDate, table } from './format.js';

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};
const collect = (v: string, prev: string[] = []) => [...prev, v];

function parseMetadata(v: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new InvalidArgumentError('must be a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError('must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** `Pepper:ANIMAL` -> `{text: 'Pepper', type: 'ANIMAL'}`; without a type, OTHER. */
function parseEntity(v: string) {
  const at = v.lastIndexOf(':');
  return at > 0 ? { text: v.slice(0, at), type: v.slice(at + 1) || 'OTHER' } : { text: v, type: 'OTHER' };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of cliIo().stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8').trim();
}

const memoryColumns = [
  { header: 'id', value: (m: Memory) => m.id },
  { header: 'type', value: (m: Memory) => m.type },
  { header: 'mentioned', value: (m: Memory) => shortDate(m.mentioned_at) },
  { header: 'tags', value: (m: Memory) => m.tags },
  { header: 'text', value: (m: Memory) => m.text, flex: true },
];

interface RetainOpts extends ConnectionOptions {
  context?: string;
  type?: FactType;
  tags?: string;
  timestamp?: string;
  documentId?: string;
  metadata?: Record<string, unknown>;
  entity?: string[];
  space?: string;
  async?: boolean;
  wait?: boolean;
}

/** `mnemo retain`, `recall`, `reflect` and `memories list|delete`. */
export function registerMemoryCommands(program: Command): void {
  withConnection(
    program
      .command('retain')
      .description('store a memory (the text from the arguments, or from stdin)')
      .argument('<bank>', 'bank id')
      .argument('[text...]', 'the memory; read from stdin when absent')
      .option('--context <text>', 'where it came from')
      .option('--type <type>', `${FACT_TYPES.join(' | ')} (guessed when absent)`)
      .option('--tags <list>', 'comma-separated tags')
      .option('--timestamp <iso>', 'when it was said (anchors "yesterday")')
      .option('--document-id <id>', 'group under a document')
      .option('--metadata <json>', 'a JSON object', parseMetadata)
      .option('--entity <name:TYPE>', 'an entity (repeatable)', collect)
      .option('--space <space>', 'attach a new bank to this space')
      .option('--async', 'queue it as an operation')
      .option('--wait', 'with --async, wait for the operation to finish'),
  ).action(
    action(async (bank: string, words: string[], opts: RetainOpts) => {
      const content = words.length ? words.join(' ') : cliIo().stdin.isTTY ? '' : await readStdin();
      if (!content) throw new Error('nothing to retain: give the text as arguments or on stdin');
      const item: RetainItem = {
        content,
        context: opts.context,
        fact_type: opts.type,
        tags: list(opts.tags),
        timestamp: opts.timestamp,
        metadata: opts.metadata,
        entities: opts.entity?.map(parseEntity),
      };
      const client = connect(opts);
      const body = { items: [item], document_id: opts.documentId, space: opts.space };
      if (opts.async) {
        const queued = await client.memories.retain(bank, { ...body, async: true });
        const op = opts.wait ? await client.operations.wait(bank, queued.operation_id) : null;
        emit(opts.json, op ?? queued, () =>
          op
            ? `operation ${op.id} ${op.status}: ${op.memories_created} memories`
            : `queued operation ${queued.operation_id}`,
        );
        return;
      }
      const res = await client.memories.retain(bank, body);
      emit(
        opts.json,
        res,
        () =>
          `stored ${res.memories_created} ${res.memories_created === 1 ? 'memory' : 'memories'} in ${bank}: ${res.memory_ids.join(', ')}`,
      );
    }),
  );

  withConnection(
    program
      .command('recall')
      .description('find what a bank remembers about a query')
      .argument('<bank>', 'bank id')
      .argument('<query...>', 'the question')
      .option('--max-tokens <n>', 'token budget of the results', int)
      .option('--budget <level>', 'low | mid | high')
      .option('--types <list>', 'comma-separated fact types')
      .option('--tags <list>', 'comma-separated tags')
      .option('--tags-match <mode>', 'any | all | any_strict | all_strict | exact')
      .option('--space <space>', 'the space, for --include-org')
      .option('--include-org', "blend in the space's org bank"),
  ).action(
    action(async (bank: string, words: string[], opts: ConnectionOptions & Record<string, any>) => {
      const res = await connect(opts).memories.recall(bank, {
        query: words.join(' '),
        max_tokens: opts.maxTokens,
        budget: opts.budget,
        types: list(opts.types) as FactType[] | undefined,
        tags: list(opts.tags),
        tags_match: opts.tagsMatch as TagsMatch | undefined,
        space: opts.space,
        include_org: opts.includeOrg,
      });
      emit(opts.json, res, () => {
        const rows = res.results.map((r, i) => ({ ...r, rank: i + 1 }));
        const t = table(rows, [
          { header: '#', value: (r) => r.rank },
          { header: 'score', value: (r) => r.scores.final.toFixed(3) },
          { header: 'type', value: (r) => r.type },
          { header: 'mentioned', value: (r) => shortDate(r.mentioned_at) },
          { header: 'text', value: (r) => r.text, flex: true },
        ]);
        const u = res.usage;
        return `${t}\n${res.results.length} results, ${u.tokens_used}/${u.max_tokens} tokens${u.truncated ? ' (truncated)' : ''}`;
      });
    }),
  );

  withConnection(
    program
      .command('reflect')
      .description('a written answer over everything a bank knows')
      .argument('<bank>', 'bank id')
      .argument('<query...>', 'the question')
      .option('--context <text>', 'extra context for the answer')
      .option('--budget <level>', 'low | mid | high')
      .option('--tags <list>', 'comma-separated tags'),
  ).action(
    action(async (bank: string, words: string[], opts: ConnectionOptions & Record<string, any>) => {
      const res = await connect(opts).reflect(bank, {
        query: words.join(' '),
        context: opts.context,
        budget: opts.budget,
        tags: list(opts.tags),
      });
      emit(
        opts.json,
        res,
        () =>
          `${res.response}\n\n(${res.mode}; based on ${res.based_on.memories.length} memories, ${res.usage.tokens_used} tokens)`,
      );
    }),
  );

  const memories = program.command('memories').description("list or delete a bank's memories");
  withConnection(
    memories
      .command('list')
      .description('newest first')
      .argument('<bank>', 'bank id')
      .option('--limit <n>', 'how many (default 50)', int)
      .option('--all', 'every memory, page by page')
      .option('--cursor <cursor>', 'continue a previous listing')
      .option('--type <type>', 'one fact type')
      .option('--tags <list>', 'comma-separated tags')
      .option('--tags-match <mode>', 'any | all | any_strict | all_strict | exact')
      .option('--document-id <id>', 'memories of one document')
      .option('--q <text>', 'text search'),
  ).action(
    action(async (bank: string, opts: ConnectionOptions & Record<string, any>) => {
      const filters = {
        type: opts.type as FactType | undefined,
        tags: list(opts.tags),
        tags_match: opts.tagsMatch as TagsMatch | undefined,
        document_id: opts.documentId,
        q: opts.q,
      };
      const client = connect(opts);
      if (opts.all) {
        const items = await client.memories.list(bank, { ...filters, limit: 500 }).toArray();
        emit(
          opts.json,
          { items, next_cursor: null },
          () => `${table(items, memoryColumns)}\n${items.length} memories`,
        );
        return;
      }
      const page = await client.memories.list(bank, {
        ...filters,
        limit: opts.limit ?? 50,
        cursor: opts.cursor,
      });
      emit(opts.json, page, () => {
        const more = page.next_cursor ? `\nmore: --cursor ${page.next_cursor}` : '';
        return `${table(page.items, memoryColumns)}\n${page.items.length} memories${more}`;
      });
    }),
  );
  withConnection(
    memories
      .command('delete')
      .description('delete memories by id')
      .argument('<bank>', 'bank id')
      .argument('<id...>', 'memory ids'),
  ).action(
    action(async (bank: string, ids: string[], opts: ConnectionOptions) => {
      const client = connect(opts);
      const out: DeletedMemory[] = [];
      for (const id of ids) out.push(await client.memories.delete(bank, id));
      emit(opts.json, out.length === 1 ? out[0] : out, () => out.map((d) => `deleted ${d.id}`).join('\n'));
    }),
  );
}
