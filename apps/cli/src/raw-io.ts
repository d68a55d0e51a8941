// Built-ins through process.getBuiltinModule: the `cm` loader (bin.ts, an ES module) uses this file.
const { writeSync } = process.getBuiltinModule("node:fs");

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `buffer` to `fd` synchronously: partial writes are continued and a full
 * non-blocking pipe (EAGAIN) is waited for. Returns false when the reader has gone (EPIPE).
 */
export function writeAllToFd(fd: number, buffer: Uint8Array): boolean {
  let offset = 0;
  let spins = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset, buffer.length - offset);
      spins = 0;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "EAGAIN" || code === "EWOULDBLOCK") {
        // Non-blocking pipe is full: wait a little for the reader, then retry.
        Atomics.wait(sleepCell, 0, 0, Math.min(50, 1 + spins++));
        continue;
      }
      if (code === "EPIPE") return false;
      throw error;
    }
  }
  return true;
}

/** This process's whole stdin ("" from a terminal), or its size once it passes `maxBytes`. */
export async function readAllStdin(maxBytes: number): Promise<{ text: string } | { overBytes: number }> {
  if (process.stdin.isTTY) return { text: "" };
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    total += buffer.length;
    if (total > maxBytes) return { overBytes: total };
    chunks.push(buffer);
  }
  return { text: Buffer.concat(chunks).toString("utf8") };
}
