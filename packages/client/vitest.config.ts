import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The README examples import the package by name; inside the package (in Node) that is the
    // Node entry's source. Subpaths first: aliases match by prefix.
    alias: [
      { find: /^@acs-toolkit\/client\/browser$/, replacement: src("index.ts") },
      { find: /^@acs-toolkit\/client\/node$/, replacement: src("node.ts") },
      { find: /^@acs-toolkit\/client$/, replacement: src("node.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
    },
  },
});
