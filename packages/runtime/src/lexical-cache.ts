import { createHash } from "node:crypto";
import { readdir, readFile, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import { type LexicalCache, type LexicalCachePart, type Logger, sha256Hex } from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/node-files";

/**
 * The ranker's saved analyses (core's LexicalCache) as files under `<globalDir>/.cache/`, beside
 * the YAML store's parse cache: `lexical-documents.json` (`{"fingerprint": …, "value": …}`), and
 * the last few built indexes, `lexical-index-<hash of the fingerprint>.bin` (one per set of rule texts: the global layer alone, or merged with one
 * repository's layer): the fingerprint on the first line (padded with spaces so the bytes after it
 * start at a multiple of 8), then core's encoding of the index. The INDEX_FILES most recently used
 * are kept. The fingerprint is core's analyser fingerprint plus the
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

/** How many built indexes are kept (an agent working in a few repositories switches between them). */
export const INDEX_FILES = 4;

export function lexicalCachePath(globalDir: string, part: LexicalCachePart): string {
  return join(globalDir, ".cache", `lexical-${part}.json`);
}

/**
 * SHA-256 of a text in hex. Short texts (a fingerprint, the key of texts a store vouched for) are
 * hashed by core's JavaScript SHA-256, the same digest: loading node:crypto costs a warm `cm context`
 * ≈8 ms, more than hashing a few kilobytes in JavaScript.
 */
function sha256Text(text: string): string {
  return text.length <= 4096 ? sha256Hex(text) : createHash("sha256").update(text, "utf8").digest("hex");
}

/** The file of the index saved under `fingerprint` (already salted). */
export function lexicalIndexPath(globalDir: string, fingerprint: string): string {
  return join(globalDir, ".cache", `lexical-index-${sha256Text(fingerprint).slice(0, 16)}.bin`);
}

/** Files earlier versions wrote here that nothing reads any more (the concept plan now ships in core). */
const RETIRED_FILES = ["lexical-concepts.json"];

/**
 * Removes all but the INDEX_FILES most recently used index files (by modification time), and the
 * retired files.
 */
async function pruneIndexes(dir: string): Promise<void> {
  const all = await readdir(dir);
  await Promise.all(all.filter((name) => RETIRED_FILES.includes(name)).map((name) => unlink(join(dir, name)).catch(() => undefined)));
  const names = all.filter((name) => /^lexical-index-[0-9a-f]{16}\.bin$/.test(name));
  if (names.length <= INDEX_FILES) return;
  const dated = await Promise.all(
    names.map(async (name) => ({ name, time: await stat(join(dir, name)).then((st) => st.mtimeMs, () => 0) })),
  );
  dated.sort((a, b) => b.time - a.time);
  await Promise.all(dated.slice(INDEX_FILES).map(({ name }) => unlink(join(dir, name)).catch(() => undefined)));
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
      const path = lexicalIndexPath(globalDir, salted(fingerprint));
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") logger.debug(`Could not read ${path}: ${(error as Error).message}`);
        return null;
      }
      const header = indexHeader(salted(fingerprint));
      // The name is a hash: the header says whether it is really this fingerprint's index.
      if (bytes.length < header.length || !bytes.subarray(0, header.length).equals(header)) return null;
      // Marks it as recently used, for pruning.
      const now = new Date();
      await utimes(path, now, now).catch(() => undefined);
      return bytes.subarray(header.length);
    },
    digest: sha256Text,
    async writeIndex(fingerprint, bytes) {
      const path = lexicalIndexPath(globalDir, salted(fingerprint));
      try {
        await atomicWriteFile(path, Buffer.concat([indexHeader(salted(fingerprint)), bytes]));
        await pruneIndexes(join(globalDir, ".cache"));
      } catch (error) {
        logger.debug(`Could not save ${path}: ${(error as Error).message}`);
      }
    },
  };
}
