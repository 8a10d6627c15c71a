import { defineConfig } from "tsup";

export default defineConfig({
  // One ES build of the library, the MSW handlers and the `acs-mock` bin, sharing chunks.
  // dist/index.cjs and dist/msw.cjs (the CommonJS entries) are written after the build by
  // tools/src/build/cjs-entries.ts.
  entry: ["src/index.ts", "src/msw.ts", "src/cli.ts"],
  format: ["esm"],
  dts: { entry: ["src/index.ts", "src/msw.ts"] },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
