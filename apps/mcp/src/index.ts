// Public API of @cass-memory/mcp: the MCP server over core operations, for `cm-mcp` and `cm serve`.
export { createCmMcpServer, SERVER_INSTRUCTIONS } from "./server.js";
export { createServerContext, MCP_ACTOR, SERVER_NAME } from "./context.js";
export { packageVersion } from "./version.js";
export type { ServerContext, ServerContextOptions } from "./context.js";
export { runStdioServer } from "./stdio.js";
export type { StdioServerHandle, StdioServerOptions } from "./stdio.js";
export {
  BAD_REQUEST_BODY,
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  hostnameOf,
  parseHostHeader,
  rebindingProblem,
  isLoopbackHost,
  LEGACY_PROTOCOL_VERSION,
  MAX_BODY_BYTES,
  normalizeLegacyMessage,
  PAYLOAD_TOO_LARGE_BODY,
  requestHasToken,
  resolveHttpOptions,
  startHttpServer,
  tokenDigest,
  UNAUTHORIZED_BODY,
} from "./http.js";
export type { HttpMount, HttpMountInfo, HttpServerHandle, HttpServerOptions } from "./http.js";
export {
  advertisedInputSchema,
  callOperationTool,
  CONTEXT_DEFAULT_MAX_TOKENS,
  CONTEXT_FULL_DEFAULT_MAX_TOKENS,
  errorPayload,
  MCP_MAX_RESPONSE_BYTES,
  operationInput,
  REFLECT_DEFAULT_MAX_SESSIONS,
  registerOperationTools,
  TOOL_SPECS,
  toolName,
  toolNames,
} from "./tools.js";
export type { ToolSpec } from "./tools.js";
export { cappedText, RESOURCE_RECENT_LIMIT, RESOURCE_SPECS, registerResources, resourceUris } from "./resources.js";
export type { ResourceSpec } from "./resources.js";
export {
  ADMISSION_QUEUE_FULL_MESSAGE,
  ADMISSION_TIMEOUT_MESSAGE,
  createAdmissionController,
  resolveAdmissionLimits,
} from "./admission.js";
export type { AdmissionController, AdmissionLimits, AdmissionMetrics } from "./admission.js";
export { SHUTDOWN_GRACE_MS, exitOnSignals } from "./signals.js";
