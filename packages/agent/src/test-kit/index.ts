/**
 * @packageDocumentation
 * Test kit of `@acs-toolkit/agent`: real parts to drive the agent in tests. A scripted
 * OpenAI-compatible LLM server, an in-memory host, a small MCP server, and the trajectory check
 * every recorded run passes.
 */
export { ScriptedLlmServer, type RecordedRequest, type ScriptedReply, type ScriptedToolCall, type ScriptedUsage } from "./scripted-llm.js";
export { MemoryHost, gate, userText, type MemoryHostOptions } from "./memory-host.js";
export { checkTrajectory, type TrajectoryReport } from "./trajectory.js";
export { createEchoServer, mcpEchoStdioServer, startMcpHttpServer } from "./mcp-echo.js";
