import { defineConfig } from "tsup";

export default defineConfig({
  // The worker threads' entries are files of their own, next to the bundle (workers/pool.ts).
  entry: { index: "src/index.ts", cli: "src/cli.ts", "read-worker": "src/workers/read-worker.ts", "import-worker": "src/workers/import-worker.ts" },
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
