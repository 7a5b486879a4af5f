// Public API of the MCP server (`tartan/mcp`): `createMcpServer` builds the Model Context Protocol
// server (tools and resources) over opened `Resources`; `serveMcpStdio` and `startMcpHttp` run it over
// stdio or streamable HTTP (loopback unless a token is given), as `tartan mcp` does; `ToolFiles` is the
// check every path a tool reads goes through.
export { createMcpServer, type McpServerOptions } from "./server.js";
export { ToolFiles } from "./paths.js";
export { serveMcpStdio, type McpStdioOptions } from "./stdio.js";
export { startMcpHttp, mcpHttpApp, type McpHttpOptions, type RunningMcpHttp } from "./http.js";
