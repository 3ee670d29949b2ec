/**
 * ZIP archives in memory (fflate, pure JS): the document-transfer format's container. Core reads
 * and writes archives through these two functions only.
 */
import { unzipSync, zipSync } from 'fflate';

/** An entry as the ZIP declares it, before it is inflated. */
export interface ZipEntryInfo {
  name: string;
  /** Size once inflated, as declared: inflation writes into a buffer of this size, never more. */
  originalSize: number;
}

/** A ZIP of these entries (deflated). */
export const zipFiles = (files: Record<string, Uint8Array>): Uint8Array => zipSync(files, { level: 6 });

/** The entries `keep` accepts (judged on their declared sizes), inflated; a malformed ZIP throws. */
export const unzipFiles = (
  zip: Uint8Array,
  keep: (entry: ZipEntryInfo) => boolean,
): Record<string, Uint8Array> =>
  unzipSync(zip, { filter: (f) => keep({ name: f.name, originalSize: f.originalSize }) });
