import { packageBuild } from "../../tooling/config/tsup-package.js";

export default packageBuild();
