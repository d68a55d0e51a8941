/**
 * Entry of `dist/cm-serve.cjs`: the MCP server (`@cass-memory/mcp` and the MCP SDK) as a bundle of
 * its own, required only by `cm serve` and `cm dashboard`.
 */
export { createServerContext, exitOnSignals, resolveHttpOptions, runStdioServer, startHttpServer } from "@cass-memory/mcp";
// The dashboard (`cm dashboard`, and `/dashboard` of `cm serve`) shares this bundle: it uses the MCP server's host checks.
export { createDashboardHandler, dashboardStoreInfo, startDashboardServer } from "@cass-memory/dashboard";
