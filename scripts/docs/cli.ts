import { type Argument, Command, type Option } from 'commander';
import { withConnection } from '../../src/cli/client/connect.js';
import { processIo } from '../../src/cli/io.js';
import { createProgram } from '../../src/cli/main.js';
import { addConfigOptions } from '../../src/cli/options.js';
import { code, table } from './regions.js';

/** The long flags a helper adds, read from a blank command it was applied to. */
const flagsOf = (add: (c: Command) => Command) => add(new Command('x')).options.map((o) => o.long ?? o.flags);

const usage = (a: Argument) => {
  const name = `${a.name()}${a.variadic ? '...' : ''}`;
  return a.required ? `<${name}>` : `[${name}]`;
};

/** Help text as Markdown: `<file>` is not an HTML tag. */
const text = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

function meaning(o: Option): string {
  const shown = o.defaultValue === undefined || o.negate ? '' : ` (default: ${code(String(o.defaultValue))})`;
  return `${text(o.description)}${shown}`;
}

/** Every command of `mnemo` with its arguments and flags (docs/cli.md), walked from the program itself. */
export function cliReference(): string {
  const connection = flagsOf(withConnection);
  const settings = flagsOf(addConfigOptions);
  const parts: string[] = [];
  const walk = (cmd: Command, prefix: string) => {
    for (const sub of cmd.commands) {
      const name = `${prefix} ${sub.name()}`;
      if (sub.commands.length) {
        walk(sub, name);
        continue;
      }
      const longs = new Set(sub.options.map((o) => o.long ?? o.flags));
      const hasAll = (flags: string[]) => flags.every((f) => longs.has(f));
      const common = [...(hasAll(connection) ? connection : []), ...(hasAll(settings) ? settings : [])];
      const args = sub.registeredArguments;
      const rows = [
        ...args.map((a) => [code(usage(a)), text(a.description)]),
        ...sub.options
          .filter((o) => !common.includes(o.long ?? o.flags))
          .map((o) => [code(o.flags), meaning(o)]),
      ];
      parts.push(`### \`${[name, ...args.map(usage)].join(' ')}\``, '', `${text(sub.description())}.`);
      if (rows.length) parts.push('', table(['argument or flag', 'meaning'], rows));
      const also: string[] = [];
      if (hasAll(connection)) also.push(`the connection flags (${connection.map(code).join(', ')})`);
      if (hasAll(settings)) also.push('every setting flag of [configuration.md](configuration.md)');
      if (also.length) parts.push('', `Also ${also.join(' and ')}.`);
      parts.push('');
    }
  };
  walk(createProgram(processIo()), 'mnemo');
  return parts.join('\n');
}
