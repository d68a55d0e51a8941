// Prints the plain closing line CI reads ("N passed, M failed") from vitest's JSON report.
import { existsSync, readFileSync } from "node:fs";

const file = process.argv[2] ?? ".vitest-report.json";
if (!existsSync(file)) {
  console.log("vitest: 0 passed, 1 failed");
  console.error(`vitest-summary: ${file} was not written (vitest crashed before reporting)`);
  process.exit(1);
}
const r = JSON.parse(readFileSync(file, "utf8"));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
// A suite that fails to load counts as a failure even when it holds no test.
const failedSuites = (r.testResults ?? []).filter((s) => s.status === "failed" && (s.assertionResults ?? []).length === 0).length;
const failed = r.numFailedTests + failedSuites;
console.log(`${r.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(r.success && failed === 0 && r.numPassedTests > 0 ? 0 : 1);
