// Public API of @cass-memory/dashboard: the /dashboard request handler (page + JSON API) for
// `cm dashboard` and `cm serve`, and the standalone server of `cm dashboard`.
export { DASHBOARD_ACTOR, DASHBOARD_PREFIX, MAX_ACTION_BODY_BYTES } from "./constants.js";
export { createDashboardHandler, httpStatusOf } from "./handler.js";
export type { DashboardHandler, DashboardHandlerOptions, DashboardRequestInfo, DashboardStoreInfo } from "./handler.js";
export { DEFAULT_DASHBOARD_HOST, newDashboardToken, startDashboardServer } from "./server.js";
export type { DashboardServerHandle, DashboardServerOptions } from "./server.js";
export { dashboardStoreInfo } from "./store-info.js";
export { CONTENT_TYPES, indexUiDir } from "./static.js";
export type { StaticFile } from "./static.js";
