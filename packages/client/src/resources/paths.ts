/** `<prefix>/banks/<url-encoded bank><rest>`: bank ids are free-form (`alice@example.com`, `team/a`). */
export const bankPath = (prefix: string, bank: string, rest = '') =>
  `${prefix}/banks/${encodeURIComponent(bank)}${rest}`;

export const seg = (id: string) => encodeURIComponent(id);
