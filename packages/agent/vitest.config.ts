import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The README example imports the package by name; inside the package that is src/.
    alias: [
      { find: /^@acs-toolkit\/agent\/test-kit$/, replacement: src("test-kit/index.ts") },
      { find: /^@acs-toolkit\/agent$/, replacement: src("index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
