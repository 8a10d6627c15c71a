import { defineConfig } from "tsup";

export default defineConfig({
  // The test kit's MCP server is an entry of its own: tests and hosts start it as a process.
  entry: { index: "src/index.ts", "test-kit/index": "src/test-kit/index.ts", "test-kit/mcp-echo-server": "src/test-kit/mcp-echo-server.ts" },
  format: ["esm"],
  dts: { entry: { index: "src/index.ts", "test-kit/index": "src/test-kit/index.ts" } },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
