import { defineConfig } from "tsup";

export default defineConfig({
  // One ES build of the library and the `acs-conformance` bin, sharing a chunk. dist/index.cjs (the
  // CommonJS entry) is written after the build by tools/src/build/cjs-entries.ts.
  entry: ["src/index.ts", "src/bin.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
