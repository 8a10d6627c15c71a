import { defineConfig } from "tsup";

export default defineConfig({
  // One ES build of the library, the MSW handlers (Node and browser) and the `acs-mock` bin, sharing
  // chunks (a chunk holds only modules its entries reach, so msw-browser's reach no Node code).
  // dist/index.cjs, dist/msw.cjs and dist/msw-browser.cjs (the CommonJS entries) are written after
  // the build by tools/src/build/cjs-entries.ts.
  entry: ["src/index.ts", "src/msw.ts", "src/msw-browser.ts", "src/cli.ts"],
  format: ["esm"],
  // Declarations are skipped by `pnpm start` / `pnpm mock` (ACS_BUILD_DECLARATIONS=0): a run never reads them.
  dts: process.env.ACS_BUILD_DECLARATIONS === "0" ? false : { entry: ["src/index.ts", "src/msw.ts", "src/msw-browser.ts"] },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
