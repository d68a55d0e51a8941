import { describe, expect, it } from "vitest";
import { encodeFrame, encodeOutput, frameReader, JSON_FRAME, parseFrame } from "../src/daemon/frames.js";

type Seen = { kind: number; payload: string } | "OVERFLOW";

function reader(maxBytes: number): { read: (chunk: Buffer) => void; seen: Seen[] } {
  const seen: Seen[] = [];
  const read = frameReader((kind, payload) => seen.push({ kind, payload: payload.toString("utf8") }), maxBytes, () => seen.push("OVERFLOW"));
  return { read, seen };
}

describe("daemon frames", () => {
  const text = "héllo — 日本語 🙂\nsecond line with \"quotes\" and \\ backslashes";
  const stream = Buffer.concat([encodeFrame({ t: "accept" }), encodeOutput(1, text), encodeOutput(2, ""), encodeFrame({ t: "exit", code: 3 })]);
  const expected: Seen[] = [
    { kind: JSON_FRAME, payload: '{"t":"accept"}' },
    { kind: 1, payload: text },
    { kind: 2, payload: "" },
    { kind: JSON_FRAME, payload: '{"t":"exit","code":3}' },
  ];

  it("delivers each frame once and intact, whatever the chunking, multi-byte characters included", () => {
    for (const size of [1, 2, 3, 5, 7, 64, stream.length]) {
      const { read, seen } = reader(1024);
      for (let i = 0; i < stream.length; i += size) read(stream.subarray(i, i + size));
      expect(seen, `chunks of ${size}`).toEqual(expected);
    }
  });

  it("stops at a frame over the limit as soon as its header arrives", () => {
    const { read, seen } = reader(16);
    read(Buffer.concat([encodeFrame({ t: "go" }), encodeOutput(1, "x".repeat(17)).subarray(0, 6)]));
    read(Buffer.from("more bytes"));
    read(encodeFrame({ t: "go" }));
    expect(seen).toEqual([{ kind: JSON_FRAME, payload: '{"t":"go"}' }, "OVERFLOW"]);
  });

  it("rejects payloads that are not control frames", () => {
    expect(parseFrame("not json")).toBeNull();
    expect(parseFrame("[1,2]")).toBeNull();
    expect(parseFrame('{"t":1}')).toBeNull();
    expect(parseFrame(Buffer.from('{"t":"ping"}'))).toEqual({ t: "ping" });
  });
});
