// The MCP server over stdio (what agent hosts start as a subprocess): JSON-RPC on stdin/stdout, so
// nothing else may write to stdout; resolves when the client closes the connection (stdin ends). Bad
// lines (not JSON, not JSON-RPC, too long) are answered with JSON-RPC errors and the server reads on
// (./stdio-transport.ts).

import type { Resources } from "../server/resources.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import { LineTransport } from "./stdio-transport.js";

/** Options of {@link serveMcpStdio}. */
export interface McpStdioOptions extends McpServerOptions {
  /** Longest request line, in bytes (default 4 MiB); a longer one is answered with a JSON-RPC error and skipped. */
  maxLineBytes?: number;
}

/** Serves `resources` over stdin/stdout until the client disconnects (stdin ends). */
export async function serveMcpStdio(resources: Resources, o: McpStdioOptions = {}): Promise<void> {
  const server = createMcpServer(resources, o);
  const transport = new LineTransport(process.stdin, process.stdout, o.maxLineBytes);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
