import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The README examples import the package by name; inside the package that is src/.
    alias: [
      { find: /^@acs-toolkit\/mock\/msw$/, replacement: src("msw.ts") },
      { find: /^@acs-toolkit\/mock\/msw-browser$/, replacement: src("msw-browser.ts") },
      { find: /^@acs-toolkit\/mock$/, replacement: src("index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
