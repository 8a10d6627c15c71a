/**
 * MCP tools from `mcp_config`, through the official `@modelcontextprotocol/sdk` client: stdio
 * servers (started in the conversation's sandbox, like the terminal), SSE servers and streamable
 * HTTP servers (with the entry's `api_key` as a bearer token). Each tool a server lists becomes an
 * MCPToolDefinition; a call is an MCPToolAction (`data` = the arguments) answered by an
 * MCPToolObservation, as OpenHands records them.
 *
 * A server that cannot be reached does not stop the conversation: its tools are left out and the
 * reason is reported in `problems` (no secret in it).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Content, MCPConfig, MCPToolAction, MCPToolDefinition, MCPToolDescription, MCPToolObservation, ToolAnnotations } from "@acs-toolkit/schema";
import { SANDBOX_PATH, type Sandbox } from "../sandbox/sandbox.js";
import { text, type AgentTool, type ToolContext } from "./tool.js";

interface McpOptions {
  /** The sandbox stdio servers start in; undefined: stdio servers are not started. */
  sandbox: Sandbox | undefined;
  workspaceDir: string;
  /** The stdio servers' `/tmp` on disk (see `SandboxRequest.tmpDir`). */
  tmpDir?: string;
  /** Time allowed to connect to a server and list its tools, in milliseconds (default 30,000). */
  connectTimeoutMs?: number;
  /** Time allowed for one tool call when the server entry gives none, in milliseconds (default 300,000). */
  callTimeoutMs?: number;
  /** Names already taken (the built-in tools): an MCP tool of the same name is left out. */
  reservedNames?: readonly string[];
}

export interface McpTools {
  tools: AgentTool[];
  /** Why a server or a tool was left out, one sentence each. */
  problems: string[];
  close(): Promise<void>;
}

type ListedTool = Awaited<ReturnType<Client["listTools"]>>["tools"][number];

interface Server {
  label: string;
  connect(): Transport;
  callTimeoutMs?: number;
  /** Frees what the sandbox set up for the process (its control groups) once it is gone. */
  release?(): void;
}

/** `fetch` that adds `Authorization: Bearer <key>` to every request of an SSE or HTTP transport. */
function bearerFetch(apiKey: string | null | undefined): typeof fetch | undefined {
  if (!apiKey) return undefined;
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${apiKey}`);
    return fetch(input, { ...init, headers });
  };
}

function serversOf(config: MCPConfig, options: McpOptions, problems: string[]): Server[] {
  const servers: Server[] = [];
  for (const entry of config.stdio_servers ?? []) {
    const label = `stdio server "${entry.name}"`;
    if (!options.sandbox) {
      problems.push(`${label} was not started: no sandbox is available and host execution is not allowed.`);
      continue;
    }
    const wrapped = options.sandbox.wrap({
      argv: [entry.command, ...(entry.args ?? [])],
      workspaceDir: options.workspaceDir,
      tmpDir: options.tmpDir,
      env: { PATH: SANDBOX_PATH, HOME: options.workspaceDir, LANG: "C.UTF-8", ...(entry.env ?? {}) },
    });
    servers.push({
      label,
      connect: () => new StdioClientTransport({ command: wrapped.command, args: wrapped.args, env: wrapped.env, cwd: wrapped.cwd, stderr: "ignore" }),
      release: () => wrapped.cgroup?.release(),
    });
  }
  for (const entry of config.sse_servers ?? []) {
    const customFetch = bearerFetch(entry.api_key);
    servers.push({ label: `SSE server ${entry.url}`, connect: () => new SSEClientTransport(new URL(entry.url), customFetch ? { fetch: customFetch } : {}) });
  }
  for (const entry of config.shttp_servers ?? []) {
    const customFetch = bearerFetch(entry.api_key);
    servers.push({
      label: `HTTP server ${entry.url}`,
      connect: () => new StreamableHTTPClientTransport(new URL(entry.url), customFetch ? { fetch: customFetch } : {}),
      ...(entry.timeout ? { callTimeoutMs: entry.timeout * 1000 } : {}),
    });
  }
  return servers;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} seconds`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Connects to every server of `config` and lists their tools. */
export async function connectMcpTools(config: MCPConfig | null | undefined, options: McpOptions): Promise<McpTools> {
  const problems: string[] = [];
  const clients: Client[] = [];
  const connectedServers: Server[] = [];
  const tools: AgentTool[] = [];
  const taken = new Set(options.reservedNames ?? []);
  const connectMs = options.connectTimeoutMs ?? 30_000;
  const connected = await Promise.all(
    serversOf(config ?? {}, options, problems).map(async (server) => {
      const client = new Client({ name: "acs-toolkit-agent", version: "0.1.0" });
      try {
        await withTimeout(client.connect(server.connect()), connectMs, `connecting to the MCP ${server.label}`);
        const listed: ListedTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await withTimeout(client.listTools(cursor ? { cursor } : {}), connectMs, `listing the tools of the MCP ${server.label}`);
          listed.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
        clients.push(client);
        connectedServers.push(server);
        return { server, client, listed };
      } catch (error) {
        problems.push(`MCP ${server.label} is unavailable: ${error instanceof Error ? error.message : String(error)}`);
        await client.close().catch(() => {});
        server.release?.();
        return undefined;
      }
    }),
  );
  for (const entry of connected) {
    if (!entry) continue;
    for (const tool of entry.listed) {
      if (taken.has(tool.name)) {
        problems.push(`MCP tool "${tool.name}" of the ${entry.server.label} was left out: another tool has that name.`);
        continue;
      }
      taken.add(tool.name);
      tools.push(mcpTool(tool, entry.client, entry.server.callTimeoutMs ?? options.callTimeoutMs ?? 300_000));
    }
  }
  return {
    tools,
    problems,
    close: async () => {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      for (const server of connectedServers) server.release?.();
    },
  };
}

/** OpenHands' annotations for an MCP tool: its non-null hints over OpenHands' defaults. */
function annotationsOf(tool: ListedTool): ToolAnnotations | undefined {
  if (!tool.annotations) return undefined;
  const hints = Object.fromEntries(Object.entries(tool.annotations).filter(([, value]) => value !== null && value !== undefined));
  return { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true, ...hints };
}

/** The MCP tool description as OpenHands dumps it: nulls dropped, `_meta` under the key `meta` (§2 #2). */
function describe(tool: ListedTool): MCPToolDescription {
  const { _meta, ...rest } = tool as ListedTool & { _meta?: Record<string, unknown> };
  const description: MCPToolDescription = { ...rest, inputSchema: tool.inputSchema as Record<string, unknown> };
  if (_meta) description.meta = _meta;
  for (const [key, value] of Object.entries(description)) if (value === null || value === undefined) delete description[key];
  return description;
}

function contentOf(block: Record<string, unknown>): Content {
  if (block.type === "text" && typeof block.text === "string") return text(block.text);
  if (block.type === "image" && typeof block.data === "string") {
    return { cache_prompt: false, type: "image", image_urls: [`data:${String(block.mimeType ?? "image/png")};base64,${block.data}`] };
  }
  const resource = block.resource as { text?: unknown; uri?: unknown } | undefined;
  if (block.type === "resource" && typeof resource?.text === "string") return text(resource.text);
  return text(JSON.stringify(block));
}

function mcpTool(tool: ListedTool, client: Client, timeoutMs: number): AgentTool {
  const annotations = annotationsOf(tool);
  const definition: MCPToolDefinition = {
    description: tool.description ?? "",
    action_type: "MCPToolAction",
    observation_type: "MCPToolObservation",
    ...(annotations ? { annotations } : {}),
    kind: "MCPToolDefinition",
    title: tool.annotations?.title ?? tool.name,
    mcp_tool: describe(tool),
  };
  const observation = (content: Content[], isError: boolean): MCPToolObservation => ({
    content,
    is_error: isError,
    tool_name: tool.name,
    kind: "MCPToolObservation",
  });
  return {
    name: tool.name,
    definition,
    parameters: tool.inputSchema as Record<string, unknown>,
    readOnly: tool.annotations?.readOnlyHint === true,
    toAction: (args): MCPToolAction => ({ data: args, kind: "MCPToolAction" }),
    async execute(action, context: ToolContext) {
      const data = action.kind === "MCPToolAction" ? (action.data ?? {}) : {};
      try {
        const result = await client.callTool({ name: tool.name, arguments: data }, undefined, { signal: context.signal, timeout: timeoutMs });
        const blocks = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
        const content = blocks.length ? blocks.map(contentOf) : result.structuredContent ? [text(JSON.stringify(result.structuredContent))] : [];
        const isError = result.isError === true;
        return observation([text(`[Tool '${tool.name}' executed${isError ? " with an error" : ""}.]`), ...content], isError);
      } catch (error) {
        return observation([text(`Error calling MCP tool ${tool.name}: ${error instanceof Error ? error.message : String(error)}`)], true);
      }
    },
  };
}
