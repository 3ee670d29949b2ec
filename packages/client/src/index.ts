/**
 * `@mnemo/client`: the TypeScript client of the mnemo memory service. No runtime dependencies
 * beyond the global `fetch`.
 */
export { type ClientOptions, DEFAULT_BASE_URL, Mnemo } from './client.js';
export * from './errors.js';
export type { RequestOptions } from './http.js';
export { type Page, PagedList } from './pagination.js';
export type { DocumentPage } from './resources/documents.js';
export type * from './types.js';
