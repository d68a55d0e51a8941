/** Path under which the dashboard (page and API) is mounted. */
export const DASHBOARD_PREFIX = "/dashboard";
/** Journal actor of changes made through the dashboard. */
export const DASHBOARD_ACTOR = "dashboard";
/** Body limit of an action request. */
export const MAX_ACTION_BODY_BYTES = 64 * 1024;
