import { describe, expect, it } from "vitest";
import type { MCPToolDefinition } from "@acs-toolkit/schema";
import { mcpEchoStdioServer, startMcpHttpServer, userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const start = useHarness();
let h: Harness;

describe("MCP tools", () => {
  it("calls a stdio server (started in the sandbox) through the agent", async () => {
    h = await start({ settings: { mcp_config: { stdio_servers: [mcpEchoStdioServer("echo", { MCP_SECRET: "mcp-env-secret-value" })] } } });
    expect(h.conversation.problems).toEqual([]);
    await h.conversation.prepare();
    const [prompt] = h.host.ofKind("SystemPromptEvent");
    const echo = prompt!.tools.find((tool) => tool.kind === "MCPToolDefinition" && tool.title === "echo") as MCPToolDefinition;
    expect(echo).toMatchObject({
      description: "Echoes its text.",
      action_type: "MCPToolAction",
      observation_type: "MCPToolObservation",
      annotations: { readOnlyHint: true, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      mcp_tool: { name: "echo", description: "Echoes its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
    });
    expect(prompt!.tools.map((tool) => tool.title)).toEqual(["terminal", "file_editor", "task_tracker", "think", "finish", "echo", "add", "fail"]);

    h.llm.play(
      { toolCalls: [{ name: "echo", arguments: { text: "hello", env_var: "MCP_SECRET" } }, { name: "add", arguments: { a: 2, b: 40 } }, { name: "fail", arguments: {} }] },
      { text: "MCP works" },
    );
    await h.conversation.sendMessage(userText("Use MCP"), { run: true });
    await h.conversation.idle();

    const actions = h.host.ofKind("ActionEvent");
    expect(actions[1]!.action).toEqual({ data: { a: 2, b: 40 }, kind: "MCPToolAction" });
    const observations = h.host.ofKind("ObservationEvent").map((event) => event.observation);
    expect(observations).toEqual([
      {
        content: [
          { cache_prompt: false, type: "text", text: "[Tool 'echo' executed.]" },
          { cache_prompt: false, type: "text", text: "hello <secret-hidden>" },
        ],
        is_error: false,
        tool_name: "echo",
        kind: "MCPToolObservation",
      },
      {
        content: [
          { cache_prompt: false, type: "text", text: "[Tool 'add' executed.]" },
          { cache_prompt: false, type: "text", text: "42" },
        ],
        is_error: false,
        tool_name: "add",
        kind: "MCPToolObservation",
      },
      {
        content: [
          { cache_prompt: false, type: "text", text: "[Tool 'fail' executed with an error.]" },
          { cache_prompt: false, type: "text", text: "it failed" },
        ],
        is_error: true,
        tool_name: "fail",
        kind: "MCPToolObservation",
      },
    ]);
    // The LLM sees the MCP tools with their own schemas, `security_risk` (not read-only) and `summary` first.
    const tools = h.llm.requests[0]!.body.tools as Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>;
    const add = tools.find((tool) => tool.function.name === "add")!.function.parameters.properties;
    expect(Object.keys(add)).toEqual(["security_risk", "summary", "a", "b"]);
    expect(add.security_risk).toEqual({ type: "string", description: "The LLM's assessment of the safety risk of this action.", enum: ["UNKNOWN", "LOW", "MEDIUM", "HIGH"] });
    expectValidTrajectory(h.host);
  });

  it("calls a streamable HTTP server with its api_key as bearer token", async () => {
    const server = await startMcpHttpServer({ apiKey: "mcp-http-key-123" });
    try {
      h = await start({ settings: { mcp_config: { shttp_servers: [{ url: server.url, api_key: "mcp-http-key-123", timeout: 30 }] } } });
      h.llm.play({ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }, { text: "3" });
      await h.conversation.sendMessage(userText("Add"), { run: true });
      await h.conversation.idle();
      expect(h.host.ofKind("ObservationEvent")[0]!.observation).toMatchObject({ kind: "MCPToolObservation", content: [{}, { text: "3" }] });
      expect(new Set(server.authorizations)).toEqual(new Set(["Bearer mcp-http-key-123"]));
      expectValidTrajectory(h.host);
    } finally {
      await server.close();
    }
  });

  it("does not start a stdio server without a sandbox (unless host execution is allowed)", async () => {
    h = await start({ settings: { mcp_config: { stdio_servers: [mcpEchoStdioServer()] } }, runtime: { sandbox: "none" } });
    expect(h.conversation.problems).toContain('stdio server "echo" was not started: no sandbox is available and host execution is not allowed.');
    expect(h.conversation.toolNames).not.toContain("echo");
  });

  it("reports a server it cannot reach and goes on without its tools", async () => {
    h = await start({ settings: { mcp_config: { shttp_servers: [{ url: "http://127.0.0.1:9/mcp", api_key: "unreachable-key-999" }] } }, runtime: { mcp: { connectTimeoutMs: 5_000 } } });
    expect(h.conversation.problems.some((problem) => problem.startsWith("MCP HTTP server http://127.0.0.1:9/mcp is unavailable"))).toBe(true);
    expect(h.conversation.toolNames).toEqual(["terminal", "file_editor", "task_tracker", "think", "finish"]);
  });
});
