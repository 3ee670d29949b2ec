import type { MentalModelRecord, MentalModelStore } from '../../store/store.js';
import { type BankCodec, type Field, storePlain } from './codec.js';

/** What the mental-model layer needs of the encrypting store around it. */
export interface SealingContext {
  /** The codec new rows of the bank are sealed with, or null when its config wants plain rows. */
  writeCodec(projectId: string, bankId: string): Promise<BankCodec | null>;
  /** Opens a stored value of the bank (plain or sealed). */
  opener(projectId: string, bankId: string): { value(v: string, field: Field): Promise<string> };
  /** After a write made outside the bank lock: a flipped setting gets the row converted. */
  recheck(projectId: string, bankId: string, codec: BankCodec | null): Promise<void>;
}

const FIELD = 'mental_model';

const form = (codec: BankCodec | null, v: string) => (codec ? codec.seal(v, FIELD) : storePlain(v));

/** A new model's text (its name and source query) in the form the bank's codec asks for. */
export function mentalModelForm<M extends { name: string; source_query: string }>(
  codec: BankCodec | null,
  m: M,
): M {
  return { ...m, name: form(codec, m.name), source_query: form(codec, m.source_query) };
}

/**
 * The mental-model methods of the encrypting store: a model's name, source query, content and
 * Reflect answer, and its history's contents, reach the database sealed in an encrypted bank
 * (plain, escaped, in any other) and come back opened. Tags, ids and trigger settings stay plain,
 * as a directive's tags do.
 */
export function sealedMentalModels(inner: MentalModelStore, x: SealingContext): Partial<MentalModelStore> {
  const maybe = (codec: BankCodec | null, v: string | null | undefined) =>
    v === undefined || v === null ? v : form(codec, v);

  async function open(projectId: string, bankId: string, m: MentalModelRecord): Promise<MentalModelRecord> {
    const o = x.opener(projectId, bankId);
    const value = (v: string | null) => (v === null ? null : o.value(v, FIELD));
    return {
      ...m,
      name: await o.value(m.name, FIELD),
      source_query: await o.value(m.source_query, FIELD),
      content: await value(m.content),
      reflect_response: await value(m.reflect_response),
    };
  }
  const openOrNull = (projectId: string, bankId: string, m: MentalModelRecord | null) =>
    m && open(projectId, bankId, m);

  return {
    async listMentalModels(projectId, bankId, page) {
      const r = await inner.listMentalModels(projectId, bankId, page);
      return { ...r, items: await Promise.all(r.items.map((m) => open(projectId, bankId, m))) };
    },

    async getMentalModel(projectId, bankId, id) {
      return openOrNull(projectId, bankId, await inner.getMentalModel(projectId, bankId, id));
    },

    async nextMentalModelRefresh(projectId, bankId) {
      return openOrNull(projectId, bankId, await inner.nextMentalModelRefresh(projectId, bankId));
    },

    async insertMentalModel(projectId, bankId, m, max) {
      const codec = await x.writeCodec(projectId, bankId);
      const written = await inner.insertMentalModel(projectId, bankId, mentalModelForm(codec, m), max);
      if (written === null || typeof written === 'string') return written;
      await x.recheck(projectId, bankId, codec);
      return open(projectId, bankId, written);
    },

    async updateMentalModel(projectId, bankId, id, patch) {
      const codec = await x.writeCodec(projectId, bankId);
      const written = await inner.updateMentalModel(projectId, bankId, id, {
        ...patch,
        name: maybe(codec, patch.name) ?? undefined,
        source_query: maybe(codec, patch.source_query) ?? undefined,
      });
      await x.recheck(projectId, bankId, codec);
      return openOrNull(projectId, bankId, written);
    },

    async saveMentalModelContent(projectId, bankId, id, c, keep) {
      const codec = await x.writeCodec(projectId, bankId);
      const written = await inner.saveMentalModelContent(
        projectId,
        bankId,
        id,
        {
          ...c,
          content: maybe(codec, c.content) ?? null,
          reflect_response: maybe(codec, c.reflect_response) ?? null,
        },
        keep,
      );
      await x.recheck(projectId, bankId, codec);
      return openOrNull(projectId, bankId, written);
    },

    async mentalModelHistory(projectId, bankId, id, limit) {
      const o = x.opener(projectId, bankId);
      const value = (v: string | null) => (v === null ? null : o.value(v, FIELD));
      const entries = await inner.mentalModelHistory(projectId, bankId, id, limit);
      return Promise.all(
        entries.map(async (e) => ({
          ...e,
          previous_content: await value(e.previous_content),
          content: await value(e.content),
        })),
      );
    },
  };
}
