/** Path under which the dashboard (page and API) is mounted. */
export const DASHBOARD_PREFIX = "/dashboard";
