import { defineConfig } from "tsup";

export default defineConfig({
  // One ES build of the runtime, its test kit and the test kit's MCP server (an entry of its own:
  // tests and hosts start it as a process). dist/index.cjs and dist/test-kit.cjs (the CommonJS
  // entries) are written after the build by tools/src/build/cjs-entries.ts.
  entry: { index: "src/index.ts", "test-kit": "src/test-kit/index.ts", "mcp-echo-server": "src/test-kit/mcp-echo-server.ts" },
  format: ["esm"],
  // Declarations are skipped by `pnpm start` / `pnpm mock` (ACS_BUILD_DECLARATIONS=0): a run never reads them.
  dts: process.env.ACS_BUILD_DECLARATIONS === "0" ? false : { entry: { index: "src/index.ts", "test-kit": "src/test-kit/index.ts" } },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
