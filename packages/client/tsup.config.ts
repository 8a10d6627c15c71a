import { defineConfig } from "tsup";

// `pnpm build` empties dist/ first (both configs run at once, so neither cleans).
export default defineConfig([
  {
    // The package entries: index (browsers, bundlers; imports nothing Node-only) and node (adds
    // file paths to uploadFiles). Dependencies stay external; so does @acs-toolkit/validator, an
    // optional peer dependency loaded by a dynamic import only with `validate`.
    entry: { index: "src/index.ts", node: "src/node.ts" },
    // ESM and CommonJS (a real CommonJS build: Jest with jsdom requires the browser entry).
    format: ["esm", "cjs"],
    // The validator's few types the client's declarations use are copied in, so that they need
    // nothing that is not installed: the validator is an optional peer.
    dts: { resolve: ["@acs-toolkit/validator"] },
    clean: false,
    sourcemap: true,
    target: "es2022",
    platform: "neutral",
    external: [/^node:/],
    // Keep `node:fs` as written, so that a Node-only import is plain to see (and to test for).
    removeNodeProtocol: false,
  },
  {
    // A standalone ES module for a page without a bundler, openapi-fetch inlined and minified. With
    // `validate` it imports "@acs-toolkit/validator" by name: the page maps that name to the
    // validator's dist/index.js with an import map (see the README).
    entry: { "acs-client": "src/index.ts" },
    outDir: "dist/browser",
    format: ["esm"],
    dts: false,
    clean: false,
    sourcemap: true,
    minify: true,
    target: "es2022",
    platform: "browser",
    noExternal: [/^(?!@acs-toolkit\/validator$).*/],
    external: ["@acs-toolkit/validator"],
  },
]);
