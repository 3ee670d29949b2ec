import type { Command } from 'commander';
import type { BankConfigUpdates, BankProfile } from '../../../packages/client/src/index.js';
import { action, type ConnectionOptions, connect, withConnection } from './connect.js';
import { emit, record, shortDate, table } from './format.js';

/** `key=value` -> a config update; values are JSON when they parse (`true`, `4`, `null`), else strings. */
export function parseSetting(pair: string): [string, unknown] {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw new Error(`'${pair}' is not key=value`);
  const raw = pair.slice(eq + 1);
  try {
    return [pair.slice(0, eq), JSON.parse(raw)];
  } catch {
    return [pair.slice(0, eq), raw];
  }
}

const profileView = (b: BankProfile) => ({
  id: b.id,
  name: b.name,
  mission: b.mission,
  space: b.space_id,
  org_bank: b.is_org_bank,
  memories: b.memory_count,
  entities: b.entity_count,
  documents: b.document_count,
  disposition: `skepticism ${b.disposition.skepticism}, literalism ${b.disposition.literalism}, empathy ${b.disposition.empathy}`,
  created: b.created_at,
  updated: b.updated_at,
});

const bankColumns = [
  { header: 'id', value: (b: BankProfile) => b.id },
  { header: 'memories', value: (b: BankProfile) => b.memory_count },
  { header: 'entities', value: (b: BankProfile) => b.entity_count },
  { header: 'org', value: (b: BankProfile) => (b.is_org_bank ? 'yes' : '') },
  { header: 'updated', value: (b: BankProfile) => shortDate(b.updated_at) },
];

/** `mnemo banks list|show|delete|config|entities` and `mnemo spaces ...`. */
export function registerBankCommands(program: Command): void {
  const banks = program.command('banks').description('bank profiles, configuration, entities, deletion');
  withConnection(
    banks
      .command('list')
      .description("the project's banks, ordered by id")
      .option('--space <space>', 'only the banks of this space'),
  ).action(
    action(async (opts: ConnectionOptions & { space?: string }) => {
      const items = await connect(opts).banks.list({ space: opts.space, limit: 500 }).toArray();
      emit(opts.json, { items }, () => table(items, bankColumns));
    }),
  );
  withConnection(banks.command('show').description("a bank's profile").argument('<bank>', 'bank id')).action(
    action(async (bank: string, opts: ConnectionOptions) => {
      const p = await connect(opts).banks.get(bank);
      emit(opts.json, p, () => record(profileView(p)));
    }),
  );
  withConnection(
    banks.command('delete').description('delete a bank and its memories').argument('<bank>', 'bank id'),
  ).action(
    action(async (bank: string, opts: ConnectionOptions) => {
      const res = await connect(opts).banks.delete(bank);
      emit(opts.json, res, () => `deleted bank ${res.bank_id} (${res.memories_deleted} memories)`);
    }),
  );
  withConnection(
    banks
      .command('config')
      .description("show a bank's configuration, or change it with --set key=value (null resets)")
      .argument('<bank>', 'bank id')
      .option('--set <key=value...>', 'keys to change'),
  ).action(
    action(async (bank: string, opts: ConnectionOptions & { set?: string[] }) => {
      const client = connect(opts);
      const view = opts.set
        ? await client.banks.config.update(
            bank,
            Object.fromEntries(opts.set.map(parseSetting)) as BankConfigUpdates,
          )
        : await client.banks.config.get(bank);
      emit(opts.json, view, () =>
        table(Object.entries(view.config), [
          { header: 'key', value: ([k]) => k },
          { header: 'value', value: ([, v]) => JSON.stringify(v) },
          { header: 'set here', value: ([k]) => (k in view.overrides ? 'yes' : '') },
        ]),
      );
    }),
  );
  withConnection(
    banks
      .command('entities')
      .description("a bank's entities, most mentioned first")
      .argument('<bank>', 'bank id'),
  ).action(
    action(async (bank: string, opts: ConnectionOptions) => {
      const items = await connect(opts).entities.list(bank, { limit: 500 }).toArray();
      emit(opts.json, { items }, () =>
        table(items, [
          { header: 'name', value: (e) => e.name },
          { header: 'type', value: (e) => e.type },
          { header: 'mentions', value: (e) => e.mention_count },
          { header: 'last seen', value: (e) => shortDate(e.last_seen) },
          { header: 'aliases', value: (e) => e.aliases, flex: true },
        ]),
      );
    }),
  );

  const spaces = program.command('spaces').description('spaces (organisations) and their banks; needs admin');
  withConnection(spaces.command('list').description('every space')).action(
    action(async (opts: ConnectionOptions) => {
      const items = await connect(opts).spaces.list();
      emit(opts.json, { items }, () =>
        table(items, [
          { header: 'id', value: (s) => s.id },
          { header: 'name', value: (s) => s.name },
          { header: 'banks', value: (s) => s.bank_count },
          { header: 'created', value: (s) => shortDate(s.created_at) },
        ]),
      );
    }),
  );
  withConnection(
    spaces
      .command('create')
      .description('create a space')
      .argument('<space>', 'space id')
      .option('--name <name>', 'display name'),
  ).action(
    action(async (space: string, opts: ConnectionOptions & { name?: string }) => {
      const s = await connect(opts).spaces.create({ id: space, name: opts.name ?? space }, { maxRetries: 0 });
      emit(opts.json, s, () => `created space ${s.id}`);
    }),
  );
  withConnection(
    spaces.command('banks').description('the banks in a space').argument('<space>', 'space id'),
  ).action(
    action(async (space: string, opts: ConnectionOptions) => {
      const items = await connect(opts).spaces.banks(space);
      emit(opts.json, { items }, () => table(items, bankColumns));
    }),
  );
  withConnection(
    spaces
      .command('attach')
      .description('put a bank in a space (creates the bank)')
      .argument('<space>', 'space id')
      .argument('<bank>', 'bank id'),
  ).action(
    action(async (space: string, bank: string, opts: ConnectionOptions) => {
      const a = await connect(opts).spaces.attach(space, bank);
      emit(opts.json, a, () => `attached ${a.bank_id} to ${a.space_id}`);
    }),
  );
  withConnection(
    spaces
      .command('remove')
      .description('take a bank out of a space')
      .argument('<space>', 'space id')
      .argument('<bank>', 'bank id'),
  ).action(
    action(async (space: string, bank: string, opts: ConnectionOptions) => {
      const a = await connect(opts).spaces.remove(space, bank);
      emit(opts.json, a, () => `removed ${a.bank_id} from ${a.space_id}`);
    }),
  );
  withConnection(
    spaces.command('delete').description('delete a space (its banks stay)').argument('<space>', 'space id'),
  ).action(
    action(async (space: string, opts: ConnectionOptions) => {
      const d = await connect(opts).spaces.delete(space);
      emit(opts.json, d, () => `deleted space ${d.id} (${d.banks_unassigned} banks unassigned)`);
    }),
  );
}
