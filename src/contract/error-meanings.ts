import type { ErrorCode } from './vocabulary.js';

/**
 * When the API answers with each error code, for people: `npm run docs` writes the error table
 * of docs/api.md from this and `ERROR_STATUS`. A new code does not compile until it has a line.
 */
export const ERROR_MEANINGS: { readonly [C in ErrorCode]: string } = {
  validation_error:
    'bad JSON, missing or wrong-typed fields, unknown config keys, out-of-range values, bad ids, a value the database cannot store; `details` lists each problem by path',
  query_too_long: 'a Recall query over 500 tokens (o200k_base)',
  master_key_missing: 'a bank config `encryption: managed` on a server without `MNEMO_MASTER_KEY`',
  unauthenticated:
    'missing, malformed, unknown, revoked or expired credentials; a key of a project other than `default` on `/v1/default`',
  forbidden:
    'the key lacks the scope, or the endpoint needs the operator token; the body carries `required_scope`',
  host_not_allowed:
    'a `Host` this server does not serve: not loopback, the `--host` address nor in `MNEMO_ALLOWED_HOSTS` (DNS rebinding); the body carries `host`',
  origin_not_allowed: 'a cross-site `Origin` not in `MNEMO_CORS_ORIGINS`; the body carries `origin`',
  not_found:
    'unknown route, bank, space, memory, document, directive, mental model or operation — and anything of another project',
  gone: 'a path Hindsight retired: the synchronous `GET .../document-transfer`; the message names the asynchronous export to use',
  conflict:
    'the id exists; a bank already in another space; the directive or mental-model limit; an operation that can no longer be cancelled; a row deleted or a bank re-encrypted meanwhile by another request (retry); a request with the same `Idempotency-Key` still in progress (`Retry-After: 1`)',
  idempotency_mismatch:
    'an `Idempotency-Key` reused with a different request (method, path with query string, body)',
  already_done:
    'a retried request whose answer held a secret (a key mint): `id` names what was made; the secret is never shown again. Or one whose answer named what was deleted since: `receipt_id` names the deletion’s receipt',
  payload_too_large:
    'a request body over 10 MB; a document-transfer archive past its caps (ZIP size, inflated size, documents, facts)',
  unsupported_media_type:
    'a request body that is not `application/json` (`multipart/form-data` for a document-transfer import)',
  llm_required: 'Reflect with `response_schema` on a server without a language model',
  rate_limited:
    "a project or key limit or a project's cost budget; `limit` names it (`Retry-After`, `RateLimit-*` headers)",
  internal: 'anything unexpected; never carries a stack, the server logs it with the request id',
  llm_error:
    'the language model failed (fact extraction, Reflect), or its answer did not match `response_schema` after one repair',
  unavailable:
    'the database is unreachable or has no free connection; the data directory is locked by another process; an encrypted bank on a server without its master key',
};
