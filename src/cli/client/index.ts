import type { Command } from 'commander';
import { registerBankCommands } from './bank-commands.js';
import { registerEvalCommands } from './eval-commands.js';
import { registerMemoryCommands } from './memory-commands.js';
import { registerTransferCommands } from './transfer-commands.js';

/**
 * The client commands, which talk to a running server through @mnemo/client: retain, recall,
 * reflect, memories, banks, spaces, import, export, eval.
 */
export function registerClientCommands(program: Command): void {
  registerMemoryCommands(program);
  registerBankCommands(program);
  registerTransferCommands(program);
  registerEvalCommands(program);
}
