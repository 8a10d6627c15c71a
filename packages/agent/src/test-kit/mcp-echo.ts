/**
 * A small MCP server on the official SDK, for tests: `echo` (returns its text, with the value of
 * the environment variable named by `env_var` when given: secrets reach stdio servers as
 * environment), `add` (two numbers) and `fail` (a tool error). It serves over stdio (the
 * `mcp-echo-server` entry, see {@link mcpEchoStdioServer}) or streamable HTTP ({@link startMcpHttpServer}).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** The test MCP server with its three tools. */
export function createEchoServer(): McpServer {
  const server = new McpServer({ name: "acs-test-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes its text.", inputSchema: { text: z.string(), env_var: z.string().optional() }, annotations: { readOnlyHint: true } },
    async ({ text, env_var }) => ({ content: [{ type: "text", text: env_var ? `${text} ${process.env[env_var] ?? ""}` : text }] }),
  );
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.registerTool("fail", { description: "Always fails." }, async () => ({ content: [{ type: "text", text: "it failed" }], isError: true }));
  return server;
}

/**
 * The `mcp_config` stdio entry that starts the built test server (`dist/mcp-echo-server.js`;
 * run `pnpm build` first) with the running Node.
 */
export function mcpEchoStdioServer(name = "echo", env: Record<string, string> = {}): { name: string; command: string; args: string[]; env: Record<string, string> } {
  const here = import.meta.url;
  const entry = here.endsWith(".ts") ? new URL("../../dist/mcp-echo-server.js", here) : new URL("./mcp-echo-server.js", here);
  return { name, command: process.execPath, args: [fileURLToPath(entry)], env };
}

/** The test server over streamable HTTP on a loopback port; `url` is its MCP endpoint. */
export async function startMcpHttpServer(options: { apiKey?: string } = {}): Promise<{ url: string; authorizations: string[]; close(): Promise<void> }> {
  const authorizations: string[] = [];
  const http: Server = createServer(async (request, response) => {
    authorizations.push(request.headers.authorization ?? "");
    if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      response.writeHead(401).end();
      return;
    }
    // Stateless: a server and transport per request, as the SDK documents for simple servers.
    const server = createEchoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
