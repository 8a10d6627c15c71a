// One lint configuration for the whole repository (ESLint flat config, typescript-eslint).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: ["**/dist/**", "**/dist-msw/**", "**/node_modules/**", "**/src/generated/**", "packages/validator/generated/**", "**/.turbo/**", "**/coverage/**", "docs/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain JavaScript scripts run on Node.
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly" } },
  },
  {
    // Layering of the server: stores, their threads, validation, JSON decoding and the core are
    // transport-free, so that every host (HTTP, the mock, a test) uses them as they are.
    files: ["packages/server/src/{store,workers,threads,validation,json,core}/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "(^|/)(http|api)/", message: "store/, workers/, threads/, validation/, json/ and core/ must not depend on the API or its HTTP host (api/, http/)." }] }],
    },
  },
  {
    // The API runs in a browser too (the mock's MSW handlers): no host, no Node built-in, no compiler.
    files: ["packages/server/src/api/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: "(^|/)http/", message: "api/ must not depend on its Node host (http/)." },
            { regex: "^node:", message: "api/ runs in a browser too: no Node built-in." },
            { regex: "^(express|ajv)($|/)", message: "api/ runs in a browser too: no Express, no validator compiler (validation/request-checks.ts takes compiled ones)." },
          ],
        },
      ],
    },
  },
  {
    rules: {
      // Tests build invalid events on purpose from loosely typed copies.
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
);
