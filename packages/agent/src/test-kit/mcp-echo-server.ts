/** The test MCP server over stdio (built to `dist/mcp-echo-server.js`). */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createEchoServer } from "./mcp-echo.js";

await createEchoServer().connect(new StdioServerTransport());
