// Minimal UI build: copies src/ui/static/* to dist/ui/. The page's owner replaces this with the real build.
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(root, "src/ui/static");
const to = join(root, "dist/ui");
mkdirSync(to, { recursive: true });
if (existsSync(from)) cpSync(from, to, { recursive: true });
