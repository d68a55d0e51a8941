import { describe, expect, it } from "vitest";
import { stem } from "./stem.js";

describe("stem", () => {
  it("maps inflections of one word onto one stem", () => {
    const families = [
      ["sign", "signs", "signed", "signing"],
      ["log", "logs", "logged", "logging"],
      ["connect", "connects", "connected", "connecting", "connection", "connections"],
      ["retry", "retries", "retried"],
      ["configure", "configured", "configuration"],
      ["normalize", "normalise", "normalization", "normalisation"],
      ["sanitize", "sanitise", "sanitization"],
      ["rotate", "rotated", "rotating", "rotation"],
      ["deadlock", "deadlocks"],
      ["paginate", "pagination"],
      ["duplicate", "duplicated", "duplicates"],
      ["cache", "cached", "caching"],
    ];
    for (const family of families) {
      const stems = new Set(family.map(stem));
      expect(stems.size, family.join(",")).toBe(1);
    }
  });

  it("keeps words apart that only share a prefix", () => {
    expect(stem("login")).not.toBe(stem("log"));
    expect(stem("token")).not.toBe(stem("toggle"));
    expect(stem("status")).toBe("status"); // -us keeps its s
    expect(stem("class")).toBe("class"); // -ss keeps its s
    expect(stem("process")).toBe("process");
  });

  it("follows Porter's classic examples", () => {
    expect(stem("caresses")).toBe("caress");
    expect(stem("ponies")).toBe("poni");
    expect(stem("hopping")).toBe("hop");
    expect(stem("filing")).toBe("file");
    expect(stem("relational")).toBe("relat");
    expect(stem("generalization")).toBe("gener");
  });

  it("leaves short words, numbers, symbols and non-ASCII alone", () => {
    for (const w of ["go", "js", "api", "ci", "401", "5432", "c++", "n+1", "uuidv7", "über", "naïve"]) expect(stem(w)).toBe(w);
  });
});
