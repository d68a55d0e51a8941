import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { LexicalCache, LexicalCachePart, Logger } from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/node-files";

/**
 * The ranker's saved analyses (core's LexicalCache) as files under `<globalDir>/.cache/`, beside
 * the YAML store's parse cache: `lexical-concepts.json` and `lexical-documents.json`, each
 * `{"fingerprint": …, "value": …}`, and the last built index, `lexical-index.bin`: its fingerprint
 * on the first line (padded with spaces so the bytes after it start at a multiple of 8), then
 * core's encoding of the index. The fingerprint is core's analyser fingerprint plus the
 * program's version, so an upgrade starts afresh. Files are replaced atomically without a lock:
 * two processes saving at once lose nothing but a little work. Every failure is only logged
 * (debug): the cache is an optimisation, never a reason for a command to fail.
 */

export interface LexicalCacheOptions {
  globalDir: string;
  logger: Logger;
  /** Added to the fingerprint (the program's version). */
  salt?: string;
}

export function lexicalCachePath(globalDir: string, part: LexicalCachePart | "index"): string {
  return join(globalDir, ".cache", part === "index" ? "lexical-index.bin" : `lexical-${part}.json`);
}

/** The first line of the index file: the fingerprint, padded so the line ends at a multiple of 8 bytes. */
function indexHeader(fingerprint: string): Buffer {
  const line = Buffer.from(fingerprint, "utf8");
  const padded = Buffer.alloc(Math.ceil((line.length + 1) / 8) * 8, 0x20);
  line.copy(padded);
  padded[padded.length - 1] = 0x0a;
  return padded;
}

export function createLexicalCache(options: LexicalCacheOptions): LexicalCache {
  const { globalDir, logger } = options;
  const salted = (fingerprint: string) => (options.salt === undefined ? fingerprint : `${fingerprint}@${options.salt}`);
  return {
    async read(part, fingerprint) {
      const path = lexicalCachePath(globalDir, part);
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") logger.debug(`Could not read ${path}: ${(error as Error).message}`);
        return null;
      }
      try {
        const saved = JSON.parse(text) as { fingerprint?: unknown; value?: unknown } | null;
        return saved !== null && typeof saved === "object" && saved.fingerprint === salted(fingerprint) ? (saved.value ?? null) : null;
      } catch (error) {
        logger.debug(`Ignoring ${path}: ${(error as Error).message}`);
        return null;
      }
    },
    async write(part, fingerprint, value) {
      const path = lexicalCachePath(globalDir, part);
      try {
        await atomicWriteFile(path, JSON.stringify({ fingerprint: salted(fingerprint), value }));
      } catch (error) {
        logger.debug(`Could not save ${path}: ${(error as Error).message}`);
      }
    },
    async readIndex(fingerprint) {
      const path = lexicalCachePath(globalDir, "index");
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") logger.debug(`Could not read ${path}: ${(error as Error).message}`);
        return null;
      }
      const header = indexHeader(salted(fingerprint));
      // Another fingerprint: the index of other rule texts (or of another version), not an error.
      return bytes.length >= header.length && bytes.subarray(0, header.length).equals(header) ? bytes.subarray(header.length) : null;
    },
    async writeIndex(fingerprint, bytes) {
      const path = lexicalCachePath(globalDir, "index");
      try {
        await atomicWriteFile(path, Buffer.concat([indexHeader(salted(fingerprint)), bytes]));
      } catch (error) {
        logger.debug(`Could not save ${path}: ${(error as Error).message}`);
      }
    },
  };
}
