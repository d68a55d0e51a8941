import { jsonDifference, jsonPreview, parseSectionKey, redactCounting, type JsonDifference, type Bullet, type Config, type Layer, type Playbook, type SecretTally, type SectionDifference, type SectionSummary, type StoreTransfer } from "@cass-memory/core";
import { PlaybookStreamUnsupported, type PlaybookStream } from "@cass-memory/store-yaml";

/**
 * `cm storage migrate` of a playbook section bullet by bullet (issue 18): a playbook of 100,000
 * rules is copied and verified without ever holding all of its bullets. The source must be a
 * store that can stream its playbook file (the YAML store), the target one that writes and reads
 * the playbook in rows (the SQLite store); otherwise — and whenever the source file turns out not
 * to be streamable — the caller moves the section whole, as every other section.
 *
 * Copy: the source's skeleton and each bullet are redacted as they pass (the same redaction the
 * whole-section path applies) and written in one write transaction of the staged database, so an
 * interruption leaves nothing of the section. Verify: a second pass over the source is compared
 * with the staged rows, the playbook record first, then each bullet in order.
 */

interface SourceStreams {
  openPlaybookStream(layer: Layer): PlaybookStream | null | undefined;
}

interface TargetStreams {
  writePlaybookStream(key: string, layer: Layer, head: Playbook, bullets: Iterable<Bullet>): Promise<number>;
  readPlaybookHead(layer: Layer): Promise<Playbook | null>;
  readPlaybookBullets(layer: Layer, pageSize?: number): AsyncGenerator<Bullet, void, undefined>;
}

export interface PlaybookStreaming {
  source: SourceStreams;
  target: TargetStreams;
  config: Pick<Config, "sanitization">;
  /** Secrets redacted per streamed section (counted once per section, like the whole-section path). */
  tallies: Map<string, SecretTally>;
  /** Sections copied or verified bullet by bullet. */
  streamed: Set<string>;
}

/** The streaming pair when both stores support it, else null. */
export function playbookStreaming(source: StoreTransfer, target: StoreTransfer, config: Pick<Config, "sanitization">): PlaybookStreaming | null {
  const s = source as Partial<SourceStreams>;
  const t = target as Partial<TargetStreams>;
  if (typeof s.openPlaybookStream !== "function") return null;
  if (typeof t.writePlaybookStream !== "function" || typeof t.readPlaybookHead !== "function" || typeof t.readPlaybookBullets !== "function") return null;
  return { source: s as SourceStreams, target: t as TargetStreams, config, tallies: new Map(), streamed: new Set() };
}

/** The layer of a playbook section key, or null for any other section. */
export function playbookKeyLayer(key: string): Layer | null {
  try {
    const address = parseSectionKey(key);
    return address.kind === "playbook" ? address.layer : null;
  } catch {
    return null;
  }
}

function isUnsupported(error: unknown): boolean {
  return error instanceof PlaybookStreamUnsupported || (error as { name?: unknown } | null)?.name === "PlaybookStreamUnsupported";
}

function openStream(streaming: PlaybookStreaming, layer: Layer): PlaybookStream | null {
  try {
    return streaming.source.openPlaybookStream(layer) ?? null;
  } catch (error) {
    if (isUnsupported(error)) return null;
    throw error;
  }
}

/** The number of bullets of a streamable playbook section (dry run), or null: read it whole. */
export function countStreamedPlaybook(streaming: PlaybookStreaming | null, key: string): SectionSummary | null {
  const layer = playbookKeyLayer(key);
  if (streaming === null || layer === null) return null;
  const stream = openStream(streaming, layer);
  return stream === null ? null : { key, kind: "playbook", records: stream.count, skipped: 0 };
}

/**
 * Copies the playbook section `key` bullet by bullet; null when it must be moved whole (no
 * playbook file, or a file the stream reader leaves to the whole-file reader — nothing is kept
 * of a partial copy then: the write transaction is rolled back).
 */
export async function copyStreamedPlaybook(streaming: PlaybookStreaming | null, key: string): Promise<SectionSummary | null> {
  const layer = playbookKeyLayer(key);
  if (streaming === null || layer === null) return null;
  const stream = openStream(streaming, layer);
  if (stream === null) return null;
  const tally: SecretTally = {};
  const head = redactCounting(streaming.config, stream.head, tally);
  const config = streaming.config;
  function* redacted(): Generator<Bullet, void, undefined> {
    for (const bullet of stream!.bullets()) yield redactCounting(config, bullet, tally);
  }
  let records: number;
  try {
    records = await streaming.target.writePlaybookStream(key, layer, head, redacted());
  } catch (error) {
    if (isUnsupported(error)) return null;
    throw error;
  }
  streaming.tallies.set(key, tally);
  streaming.streamed.add(key);
  return { key, kind: "playbook", records, skipped: 0 };
}

/** The JSON form of a value (what the whole-section verification compares). */
function jsonForm(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Compares the source's playbook section `key` with the staged one, bullet by bullet: `equal`,
 * the first difference, or null when the section must be compared whole (not streamable).
 */
export async function verifyStreamedPlaybook(
  streaming: PlaybookStreaming | null,
  key: string,
): Promise<{ difference: SectionDifference | null } | null> {
  const layer = playbookKeyLayer(key);
  if (streaming === null || layer === null) return null;
  const stream = openStream(streaming, layer);
  if (stream === null) return null;
  const tally: SecretTally = {};
  const config = streaming.config;
  const targetHead = await streaming.target.readPlaybookHead(layer);
  let found: JsonDifference | null = null;
  const sourceHead = { key, kind: "playbook", layer, playbook: redactCounting(config, stream.head, tally) };
  if (targetHead === null) found = { path: "playbook", source: jsonPreview(jsonForm(stream.head)), target: "null" };
  else found = jsonDifference(jsonForm(sourceHead), jsonForm({ key, kind: "playbook", layer, playbook: targetHead }));
  let sourceRecords = 0;
  let targetRecords = 0;
  const rows = streaming.target.readPlaybookBullets(layer);
  try {
    for (const bullet of stream.bullets()) {
      const clean = redactCounting(config, bullet, tally);
      const next = await rows.next();
      const index = sourceRecords;
      sourceRecords += 1;
      if (next.done === true) {
        found ??= { path: `playbook.bullets[${index}]`, source: jsonPreview(jsonForm(clean)), target: jsonPreview(undefined) };
        continue;
      }
      targetRecords += 1;
      found ??= jsonDifference(jsonForm(clean), jsonForm(next.value), `playbook.bullets[${index}]`);
    }
    for (let next = await rows.next(); next.done !== true; next = await rows.next()) {
      found ??= { path: `playbook.bullets[${targetRecords}]`, source: jsonPreview(undefined), target: jsonPreview(jsonForm(next.value)) };
      targetRecords += 1;
    }
  } catch (error) {
    if (isUnsupported(error)) return null;
    throw error;
  } finally {
    await rows.return(undefined);
  }
  streaming.tallies.set(key, tally);
  streaming.streamed.add(key);
  if (found === null) return { difference: null };
  return {
    difference: {
      key,
      kind: "playbook",
      path: found.path === "" ? "(section)" : found.path,
      source: found.source,
      target: found.target,
      sourceRecords,
      targetRecords,
    },
  };
}
