import { copyFileSync } from "node:fs";
import { defineConfig } from "tsup";

/**
 * The compiled validators (generated/, about 1.2 MB of AJV standalone code) are shipped once, as
 * generated and without a source map: both entries import them as files of their own beside the
 * entries, instead of each entry carrying a copy.
 */
const GENERATED = ["validators-fast.js", "validators-full.js"];

export default defineConfig({
  // The library (Node and browsers: nothing Node-only may be imported from src/ outside src/cli/)
  // and `acs-validate` (its shebang comes from src/cli/main.ts) in one ES build, so that the code they
  // share is one chunk. dist/index.cjs (the CommonJS entry) is written after the build by
  // tools/src/build/cjs-entries.ts.
  entry: { index: "src/index.ts", cli: "src/cli/main.ts" },
  format: ["esm"],
  // Declarations are skipped by `pnpm start` / `pnpm mock` (ACS_BUILD_DECLARATIONS=0): a run never reads them.
  dts: process.env.ACS_BUILD_DECLARATIONS === "0" ? false : { entry: { index: "src/index.ts" } },
  clean: true,
  splitting: true,
  sourcemap: true,
  target: "es2022",
  platform: "neutral",
  // The command's Node built-ins; the library imports none (test/packaging.test.ts checks).
  external: [/^node:/],
  // What it uses of the schema (the search semantics and timestamp parser of
  // `@acs-toolkit/schema/search`, the DEFAULT_EVENT_SOURCE table) is bundled, tree-shaken, so that
  // the library still imports nothing at run time.
  noExternal: ["@acs-toolkit/schema"],
  esbuildPlugins: [
    {
      name: "generated-validators-beside",
      setup(build) {
        build.onResolve({ filter: /\/generated\/validators-(fast|full)\.js$/ }, (args) => ({
          path: `./${args.path.split("/").pop()}`,
          external: true,
        }));
      },
    },
  ],
  onSuccess: async () => {
    for (const file of GENERATED) copyFileSync(`generated/${file}`, `dist/${file}`);
  },
});
