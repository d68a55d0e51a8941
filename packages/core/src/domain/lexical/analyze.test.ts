import { describe, expect, it } from "vitest";
import { analyze, analyzeShort, isNoiseWord, isParticle } from "./analyze.js";

const surfaces = (text: string) => analyze(text).surfaces;
const joined = (text: string) => analyze(text).joinedSurfaces;

describe("analyze: identifiers", () => {
  it("splits camelCase, snake_case, kebab-case and dotted names and keeps the joined form", () => {
    expect(surfaces("useEffect")).toEqual(["use", "effect"]);
    expect(joined("useEffect")).toEqual(["useeffect"]);
    expect(surfaces("user_id max_connections")).toEqual(["user", "id", "max", "connections"]);
    expect(joined("user_id max_connections")).toEqual(["userid", "maxconnections"]);
    expect(surfaces("cookie-signing secret")).toEqual(["cookie", "signing", "secret"]);
    expect(surfaces("node.js")).toEqual(["node", "js"]);
    expect(joined("node.js")).toEqual(["nodejs"]);
    expect(surfaces("ERR_MODULE_NOT_FOUND")).toEqual(["err", "module", "found"]);
    expect(joined("ERR_MODULE_NOT_FOUND")).toEqual(["errmodulenotfound"]);
  });

  it("splits acronyms before a word but not before a plural or a suffix", () => {
    expect(surfaces("HTTPServer")).toEqual(["http", "server"]);
    expect(surfaces("XMLHttpRequest")).toEqual(["xml", "http", "request"]);
    expect(surfaces("IDs")).toEqual(["ids"]);
    expect(surfaces("UUIDv7")).toEqual(["uuidv7"]);
  });

  it("keeps c++, c# and n+1 whole as joined forms", () => {
    expect(joined("C++ and C# and N+1 queries")).toEqual(["c++", "c#", "n+1"]);
  });

  it("keeps only the joined form of prefixed words", () => {
    expect(surfaces("re-sent")).toEqual(["sent"]);
    expect(joined("re-sent")).toEqual(["resent"]);
    expect(surfaces("pre-commit")).toEqual(["commit"]);
  });

  it("lower-cases and stems", () => {
    const a = analyze("Signed Connections");
    expect(a.terms).toEqual(["sign", "connect"]);
    expect(a.surfaces).toEqual(["signed", "connections"]);
  });
});

describe("analyze: stop words, particles, phrasal verbs", () => {
  it("drops function words and agent filler", () => {
    expect(surfaces("Please could you fix the bug in this thing right now?")).toEqual(["fix", "bug"]);
  });

  it("keeps particles in the stream for phrases but marks them as non-terms", () => {
    const a = analyze("roll back and log out");
    expect(a.surfaces).toEqual(["roll", "back", "log", "out"]);
    expect(a.terms.filter((t) => !isParticle(t))).toEqual(["roll", "log"]);
  });

  it("reads 'sign in' and 'log in' as login, not as signing or logging", () => {
    expect(surfaces("I sign in, then log in again; she signed-in")).toEqual(["login", "login", "again", "login"]);
    expect(surfaces("the error is logged in the console")).toEqual(["error", "logged", "console"]);
    expect(surfaces("can't sign on")).toEqual(["cannot", "login"]);
  });
});

describe("analyze: noise in agent tasks", () => {
  it("drops timestamps, dates, hex ids, UUIDs and long or tiny numbers", () => {
    const text =
      "2025-11-20 09:12:03.114 UTC pod ingest-api-7c9f6d8b5-x2lqk at 0x5e1c6c0 commit a91c2e0 id 550e8400-e29b-41d4-a716-446655440000 took 21604312 ms, 12 retries";
    expect(surfaces(text)).toEqual(["utc", "pod", "ingest", "api", "x2lqk", "commit", "id", "took", "ms", "retries"]);
  });

  it("keeps three- and four-digit numbers (statuses, exit codes, ports)", () => {
    expect(surfaces("401 then 413, exit 137 on port 5432")).toEqual(["401", "413", "exit", "137", "port", "5432"]);
  });

  it("splits paths into their informative segments and drops line:column positions", () => {
    expect(surfaces("at /home/dev/acme/node_modules/pg/lib/client.js:132:17")).toEqual(["dev", "acme", "pg", "client", "js"]);
    expect(surfaces("POST https://app.acme.io/api/link-preview")).toEqual(["post", "app", "acme", "io", "api", "link", "preview"]);
  });

  it("isNoiseWord", () => {
    for (const w of ["12", "21604312", "0x5e1c6c0", "a91c2e0", "7c9f6d8b5"]) expect(isNoiseWord(w), w).toBe(true);
    for (const w of ["401", "5432", "k8s", "utf8", "oauth2", "es2022", "x2lqk", "deadbeef"]) expect(isNoiseWord(w), w).toBe(false);
  });

  it("returns nothing for empty or punctuation-only text", () => {
    expect(analyze("")).toEqual({ terms: [], surfaces: [], joined: [], joinedSurfaces: [] });
    expect(analyze(" -- !! ").terms).toEqual([]);
  });
});

describe("analyzeShort", () => {
  it("returns the same analysis as analyze, cached", () => {
    expect(analyzeShort("flaky-tests")).toEqual(analyze("flaky-tests"));
    expect(analyzeShort("flaky-tests")).toBe(analyzeShort("flaky-tests"));
  });
});
