import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/documents.ts", "src/examples.ts", "src/search.ts"],
  // ESM and CommonJS: the code is small (the documents are JSON files), and CommonJS test runners
  // (Jest with jsdom) load the kinds and guards through `require`.
  format: ["esm", "cjs"],
  // Declarations are skipped by `pnpm start` / `pnpm mock` (ACS_BUILD_DECLARATIONS=0): a run never reads them.
  dts: process.env.ACS_BUILD_DECLARATIONS !== "0",
  clean: true,
  // No source maps: the code is generated (kinds, guards) or a few small functions.
  sourcemap: false,
  target: "es2022",
  // Keep `with { type: "json" }` on the documents' imports (Node needs it; es2022 predates the syntax).
  esbuildOptions(options) {
    options.supported = { ...options.supported, "import-attributes": true };
  },
  esbuildPlugins: [
    {
      // The bundled documents are shipped once, as the JSON files of src/generated/ (also the
      // package's `*.json` subpaths): the entries import them (ESM with `type: "json"`, CommonJS with
      // `require`) instead of carrying a copy each.
      name: "generated-documents-as-files",
      setup(build) {
        build.onResolve({ filter: /\/generated\/[\w.-]+\.json$/ }, (args) => ({
          path: `../src/generated/${args.path.split("/").pop()}`,
          external: true,
        }));
      },
    },
  ],
});
