import { randomUUID } from 'node:crypto';
import { requireBank } from './banks.js';
import { AppError, notFound } from './errors.js';
import type { Deps } from './services.js';
import type { BankStore, DirectiveStore } from '../store/store.js';
import type { Directive, TagsMatch } from './types.js';
import { isUuid } from './ids.js';

/** Most directives one bank may hold: every applicable one goes into each Reflect prompt. */
export const MAX_DIRECTIVES = 100;

export interface DirectiveInput {
  text: string;
  name?: string;
  priority?: number;
  tags?: string[];
  active?: boolean;
}

/** A directive as the API shows it: decisions.md's fields plus Hindsight's names for them. */
export function directiveView(d: Directive) {
  return {
    id: d.id,
    bank_id: d.bank_id,
    name: d.name,
    text: d.text,
    content: d.text,
    priority: d.priority,
    tags: d.tags,
    active: d.active,
    is_active: d.active,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

/** A name when none was given: the start of the text, cut at a word. */
function defaultName(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= 60) return flat;
  const cut = flat.slice(0, 60);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 20 ? cut.lastIndexOf(' ') : 60)}…`;
}

const blank = (path: string) =>
  new AppError('validation_error', `${path} must not be blank`, {
    details: [{ path, message: 'must not be blank' }],
  });

export async function listDirectives(s: Deps<BankStore & DirectiveStore>, projectId: string, bankId: string) {
  await requireBank(s, projectId, bankId);
  return { items: (await s.store.listDirectives(projectId, bankId)).map(directiveView) };
}

export async function getDirective(
  s: Deps<BankStore & DirectiveStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const d = isUuid(id) ? await s.store.getDirective(projectId, bankId, id) : null;
  if (!d) throw notFound(`directive '${id}'`);
  return directiveView(d);
}

export async function createDirective(
  s: Deps<BankStore & DirectiveStore>,
  projectId: string,
  bankId: string,
  input: DirectiveInput,
) {
  await requireBank(s, projectId, bankId);
  const text = input.text.trim();
  if (!text) throw blank('text');
  // The limit is checked by the insert itself: a count read first would let concurrent creations
  // pass it together.
  const d = await s.store.insertDirective(
    projectId,
    bankId,
    {
      id: randomUUID(),
      name: input.name?.trim() || defaultName(text),
      text,
      priority: input.priority ?? 0,
      tags: [...new Set(input.tags ?? [])],
      active: input.active ?? true,
    },
    MAX_DIRECTIVES,
  );
  if (!d) {
    throw new AppError(
      'conflict',
      `bank '${bankId}' already holds ${MAX_DIRECTIVES} directives, the most allowed`,
    );
  }
  return directiveView(d);
}

export async function updateDirective(
  s: Deps<BankStore & DirectiveStore>,
  projectId: string,
  bankId: string,
  id: string,
  patch: Partial<DirectiveInput>,
) {
  await requireBank(s, projectId, bankId);
  const text = patch.text?.trim();
  if (text === '') throw blank('text');
  const name = patch.name?.trim();
  if (name === '') throw blank('name');
  const d = isUuid(id)
    ? await s.store.updateDirective(projectId, bankId, id, {
        text,
        name,
        priority: patch.priority,
        tags: patch.tags && [...new Set(patch.tags)],
        active: patch.active,
      })
    : null;
  if (!d) throw notFound(`directive '${id}'`);
  return directiveView(d);
}

export async function deleteDirective(
  s: Deps<BankStore & DirectiveStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  if (!isUuid(id) || !(await s.store.deleteDirective(projectId, bankId, id)))
    throw notFound(`directive '${id}'`);
  return { deleted: true as const, id };
}

/**
 * Whether a directive applies to a request with these tags. Directives are scoped like
 * memories, the directive's tags playing the memory's part: an untagged directive always
 * applies; a tagged one only when the request names tags that match it under `tags_match`
 * (`any`: shares one, `all`: has every requested tag, `exact`: the same set).
 */
export function directiveApplies(d: Directive, tags: string[] | undefined, mode: TagsMatch = 'any'): boolean {
  if (!d.active) return false;
  if (d.tags.length === 0) return true;
  const want = [...new Set(tags ?? [])];
  if (want.length === 0) return false;
  switch (mode) {
    case 'any':
    case 'any_strict':
      return want.some((t) => d.tags.includes(t));
    case 'all':
    case 'all_strict':
      return want.every((t) => d.tags.includes(t));
    case 'exact':
      return want.length === d.tags.length && want.every((t) => d.tags.includes(t));
  }
}

/** The directives that bind a Reflect request, highest priority first. */
export async function applicableDirectives(
  s: Deps<DirectiveStore>,
  projectId: string,
  bankId: string,
  tags: string[] | undefined,
  mode: TagsMatch | undefined,
): Promise<Directive[]> {
  const all = await s.store.listDirectives(projectId, bankId);
  return all.filter((d) => directiveApplies(d, tags, mode));
}
