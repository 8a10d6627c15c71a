import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // generate() runs json-schema-to-typescript and openapi-typescript: about a second, more on a busy machine.
    testTimeout: 30_000,
  },
});
