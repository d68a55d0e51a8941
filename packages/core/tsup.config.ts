import { packageBuild } from "../../tooling/config/tsup-package.js";

// The whole engine (`.`), plus subpath entry points for its parts, so that a consumer importing one
// part (e.g. a scoring function) does not load the others or zod (docs/adr/0013-packaging.md).
export default packageBuild([
  "src/index.ts",
  "src/schemas.ts",
  "src/scoring.ts",
  "src/ranking.ts",
  "src/curator.ts",
  "src/operations.ts",
  "src/testing.ts",
]);
