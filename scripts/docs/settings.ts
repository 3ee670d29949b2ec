import { Command } from 'commander';
import { addConfigOptions } from '../../src/cli/options.js';
import { envName, SETTINGS, type Setting, type SettingKey } from '../../src/config/settings.js';
import { code, table } from './regions.js';

/** The default as the docs show it: the schema's own, unless the setting says how to show it. */
function shownDefault(s: Setting): string {
  if (s.shownDefault !== undefined) return s.shownDefault;
  const parsed = s.schema.safeParse(undefined);
  const value = parsed.success ? parsed.data : undefined;
  return value === undefined || value === null ? '—' : code(String(value));
}

/** Every setting with its flags, variable, default and meaning (docs/configuration.md). */
export function settingsTable(): string {
  // The flags of a command that takes the settings, as commander has them (`--no-worker` too).
  const options = addConfigOptions(new Command('serve')).options;
  const rows = (Object.keys(SETTINGS) as SettingKey[]).map((key) => {
    const s: Setting = SETTINGS[key];
    const flags = options.filter((o) => o.attributeName() === key).map((o) => code(o.long ?? o.flags));
    const see = s.see ? ` ([${s.see.split('#')[0]}](${s.see}))` : '';
    return [flags.join(', '), code(envName(key)), shownDefault(s), s.doc + see];
  });
  return table(['flag', 'variable', 'default', 'meaning'], rows);
}
