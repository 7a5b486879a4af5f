// The MCP server over stdio (what agent hosts start as a subprocess): JSON-RPC on stdin/stdout, so
// nothing else may write to stdout; resolves when the client closes the connection.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Resources } from "../server/resources.js";
import { createMcpServer } from "./server.js";

/** Serves `resources` over stdin/stdout until the client disconnects (stdin ends). */
export async function serveMcpStdio(resources: Resources): Promise<void> {
  const server = createMcpServer(resources);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
