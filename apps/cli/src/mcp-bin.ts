/**
 * `cm-mcp` as installed with the `cass-memory` package, so that the command `cm setup` writes into
 * clients' configurations exists wherever `cm` does: the same MCP server as `cm serve` — stdio by
 * default, `--http [--host h] [--port n]` for Streamable HTTP.
 */
const args = process.argv.slice(2);
const http = args.includes("--http");
process.argv = [process.argv[0]!, process.argv[1]!, "serve", ...(http ? [] : ["--stdio"]), ...args.filter((a) => a !== "--http")];
await import("./bin.js");
