/** The value after `--name` on this process's command line, else `dflt`. */
export function flag(name: string, dflt: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : dflt;
}
