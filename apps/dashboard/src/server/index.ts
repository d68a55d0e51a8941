// Public API of @cass-memory/dashboard: the /dashboard request handler for `cm dashboard` and `cm serve`.
export { DASHBOARD_PREFIX } from "./constants.js";
