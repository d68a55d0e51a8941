import { createRequire } from "node:module";

let ownVersion: string | undefined;

/** This package's version from its package.json (`0.0.0-dev` when it cannot be read, e.g. when bundled). */
export function packageVersion(): string {
  if (ownVersion !== undefined) return ownVersion;
  try {
    const require = createRequire(import.meta.url);
    const pkg = require("../package.json") as { version?: unknown };
    ownVersion = typeof pkg.version === "string" ? pkg.version : "0.0.0-dev";
  } catch {
    ownVersion = "0.0.0-dev";
  }
  return ownVersion;
}
