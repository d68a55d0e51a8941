/**
 * Entry of `dist/cm-serve.cjs`: the MCP server (`@cass-memory/mcp` and the MCP SDK) as a bundle of
 * its own, required only by `cm serve`.
 */
export { exitOnSignals, runStdioServer, startHttpServer } from "@cass-memory/mcp";
