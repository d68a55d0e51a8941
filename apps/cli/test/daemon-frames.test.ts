import { describe, expect, it } from "vitest";
import { encodeFrame, lineReader, parseFrame } from "../src/daemon/frames.js";

describe("daemon frames", () => {
  it("delivers each line once, whatever the chunking, multi-byte characters included", () => {
    const frames = [{ t: "out", fd: 1, text: "héllo — 日本語 🙂\nsecond line" }, { t: "exit", code: 3 }];
    const bytes = Buffer.from(frames.map((f) => encodeFrame(f as never)).join(""), "utf8");
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const lines: string[] = [];
      const read = lineReader((line) => lines.push(line), 1024, () => lines.push("OVERFLOW"));
      for (let i = 0; i < bytes.length; i += size) read(bytes.subarray(i, i + size));
      expect(lines.map((line) => parseFrame(line))).toEqual(frames);
    }
  });

  it("stops at a line over the limit, even before its newline arrives", () => {
    const events: string[] = [];
    const read = lineReader((line) => events.push(line), 8, () => events.push("OVERFLOW"));
    read(Buffer.from("short\n0123456789"));
    read(Buffer.from("more\nlate\n"));
    expect(events).toEqual(["short", "OVERFLOW"]);
  });

  it("rejects lines that are not frames", () => {
    expect(parseFrame("not json")).toBeNull();
    expect(parseFrame("[1,2]")).toBeNull();
    expect(parseFrame('{"t":1}')).toBeNull();
    expect(parseFrame('{"t":"ping"}')).toEqual({ t: "ping" });
  });
});
