import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // The README's examples import the package by name; inside the package that is src/ (and the
    // build's request validators, which only exist in dist/).
    alias: [
      { find: /^@acs-toolkit\/server$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
      { find: /^@acs-toolkit\/server\/(api|core|store)$/, replacement: fileURLToPath(new URL("./src/$1/index.ts", import.meta.url)) },
      { find: /^@acs-toolkit\/server\/request-validators$/, replacement: fileURLToPath(new URL("./dist/request-validators.js", import.meta.url)) },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
