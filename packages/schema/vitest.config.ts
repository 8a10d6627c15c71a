import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The package's own name resolves to its sources, so tests (and the README example) import it
    // exactly as a user would without needing a build first. The subpath comes first: aliases match by prefix.
    alias: [
      { find: /^@acs-toolkit\/schema\/documents$/, replacement: src("documents.ts") },
      { find: /^@acs-toolkit\/schema$/, replacement: src("index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
    },
  },
});
