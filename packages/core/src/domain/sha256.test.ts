import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { sha256Bytes, sha256Hex } from "./sha256.js";

describe("sha256Hex", () => {
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
    ["The quick brown fox jumps over the lazy dog", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"],
    ["héllo wörld — 日本語 🚀", "3c159d058e8c31e25111bb11c9ee509f80746dccc86a8a2f377d40aeb9338f2b"],
    ["The quick brown fox jumps over the lazy dog. ".repeat(5), "8a9eeb29b20c994c4ba92ab776d1b7aa62245dae9ca6519c41ee429fba7ed106"],
  ])("hashes %j", (input, expected) => {
    expect(sha256Hex(input)).toBe(expected);
  });

  it.each([
    [55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"],
    [56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"],
    [63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"],
    [64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"],
    [65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"],
    [1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"],
  ])("handles padding at %i bytes", (n, expected) => {
    expect(sha256Hex("a".repeat(n))).toBe(expected);
  });

  it("hashes the UTF-8 bytes (string and byte forms agree)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (s) => {
        const hex = sha256Hex(s);
        expect(hex).toMatch(/^[0-9a-f]{64}$/);
        expect(sha256Bytes(new TextEncoder().encode(s))).toBe(hex);
      }),
    );
  });
});
