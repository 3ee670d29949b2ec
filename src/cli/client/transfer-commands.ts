import { type Command, InvalidArgumentError } from 'commander';
import { action, type ConnectionOptions, connect, withConnection } from './connect.js';
import { exportBank } from './export.js';
import { importFile } from './import.js';
import { err, out, setExitCode } from '../io.js';

const batchSize = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new InvalidArgumentError('must be an integer from 1 to 1000');
  return n;
};
const toStderr = (message: string) => {
  err(message);
};

/** `mnemo export` and `mnemo import`: a whole bank as JSONL. */
export function registerTransferCommands(program: Command): void {
  withConnection(
    program
      .command('export')
      .description('write a whole bank (config, entities, memories, documents) as JSONL')
      .requiredOption('--bank <bank>', 'the bank to export')
      .option('-o, --output <file>', 'write to a file (resumable) instead of stdout'),
  ).action(
    action(async (opts: ConnectionOptions & { bank: string; output?: string }) => {
      const counts = await exportBank(connect(opts), opts.bank, { output: opts.output, log: toStderr });
      if (opts.json && opts.output)
        out(JSON.stringify({ bank: opts.bank, output: opts.output, ...counts }, null, 2));
    }),
  );

  withConnection(
    program
      .command('import')
      .description('store a JSONL file (an export, or Retain items) in a bank; resumes after an interruption')
      .argument('<file>', 'the JSONL file')
      .option('--bank <bank>', "the target bank (default: the export's bank)")
      .option('--batch-size <n>', 'items per Retain call', batchSize, 100)
      .option(
        '--progress-file <file>',
        'where acknowledged batches are recorded (default <file>.progress.json)',
      )
      .option('--restart', 'ignore an earlier progress file and import from the start')
      .option('--no-config', "do not apply the export's bank config"),
  ).action(
    action(
      async (
        file: string,
        opts: ConnectionOptions & {
          bank?: string;
          batchSize: number;
          progressFile?: string;
          restart?: boolean;
          config: boolean;
        },
      ) => {
        const res = await importFile(connect(opts), {
          file,
          bank: opts.bank,
          batchSize: opts.batchSize,
          progressFile: opts.progressFile,
          restart: opts.restart,
          config: opts.config,
          log: toStderr,
        });
        if (opts.json) out(JSON.stringify(res, null, 2));
        if (res.status === 'interrupted') setExitCode(130);
      },
    ),
  );
}
