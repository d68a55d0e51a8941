import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { SERVER_NAME, type ServerContext } from "./context.js";
import { registerResources } from "./resources.js";
import { registerOperationTools } from "./tools.js";

export const SERVER_INSTRUCTIONS = [
  "cass-memory is procedural memory for coding agents: a playbook of rules learned from past sessions.",
  "Before starting a task, call cm_context with the task; follow its relevantBullets and avoid its antiPatterns.",
  "When a rule helped or hurt, call cm_feedback; at the end, report the outcome with cm_outcome and the rule ids you used.",
  "Use memory_remember for a lesson worth keeping, memory_search to look things up, memory_history for a rule's changes.",
].join(" ");

/**
 * An MCP server exposing the tools and resources over `ctx`. Cheap to create (schemas are built
 * once per process): the HTTP transport makes one per request, stdio one per process.
 */
let validator: AjvJsonSchemaValidator | undefined;

export function createCmMcpServer(ctx: ServerContext): McpServer {
  // One JSON-schema validator per process: building an Ajv instance is most of a server's cost.
  validator ??= new AjvJsonSchemaValidator();
  const server = new McpServer(
    { name: SERVER_NAME, version: ctx.version },
    { capabilities: { tools: {}, resources: {} }, instructions: SERVER_INSTRUCTIONS, jsonSchemaValidator: validator },
  );
  registerOperationTools(server, ctx);
  registerResources(server, ctx);
  return server;
}
