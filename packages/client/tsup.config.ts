import { defineConfig } from "tsup";

// `pnpm build` empties dist/ first (both configs run at once, so neither cleans).
export default defineConfig([
  {
    // The package entries: index (browsers, bundlers; imports nothing Node-only) and node (adds
    // file paths to uploadFiles). Dependencies stay external.
    entry: { index: "src/index.ts", node: "src/node.ts" },
    format: ["esm", "cjs"],
    dts: true,
    clean: false,
    sourcemap: true,
    target: "es2022",
    platform: "neutral",
    external: [/^node:/],
    // Keep `node:fs` as written, so that a Node-only import is plain to see (and to test for).
    removeNodeProtocol: false,
  },
  {
    // A standalone ES module for a page without a bundler: openapi-fetch inlined, the validator a
    // separate chunk that only `validate` loads.
    entry: { "acs-client": "src/index.ts" },
    outDir: "dist/browser",
    format: ["esm"],
    dts: false,
    clean: false,
    sourcemap: true,
    minify: true,
    splitting: true,
    target: "es2022",
    platform: "browser",
    noExternal: [/.*/],
    esbuildOptions(options) {
      options.chunkNames = "lazy-[hash]";
    },
  },
]);
