import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "tsup";

/**
 * The two files of Swagger UI that /docs serves, with its licence and notice (Apache-2.0), copied
 * from the swagger-ui-dist devDependency into dist/docs/: the published server does not depend on
 * swagger-ui-dist, whose install brings 12 MB of files and a telemetry postinstall (@scarf/scarf).
 */
const SWAGGER_UI_FILES = { "swagger-ui-bundle.js": "swagger-ui-bundle.js", "swagger-ui.css": "swagger-ui.css", LICENSE: "swagger-ui.LICENSE", NOTICE: "swagger-ui.NOTICE" };

function copySwaggerUi() {
  const from = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  mkdirSync("dist/docs", { recursive: true });
  for (const [file, as] of Object.entries(SWAGGER_UI_FILES)) copyFileSync(path.join(from, file), path.join("dist/docs", as));
}

export default defineConfig({
  // One ES build of the library, its `store`, `core` and `api` subpaths (browser-safe:
  // test/store/browser.test.ts, test/core/browser.test.ts), the `acs-server` bin and the worker
  // threads' entries (files of their own, next to the bundle: workers/pool.ts), sharing chunks.
  // dist/index.cjs, dist/store.cjs and dist/core.cjs (the CommonJS entries) are written after the
  // build by tools/src/build/cjs-entries.ts.
  entry: { index: "src/index.ts", store: "src/store/index.ts", core: "src/core/index.ts", api: "src/api/index.ts", cli: "src/cli.ts", "read-worker": "src/store/sqlite/read-worker.ts", "import-worker": "src/workers/import-worker.ts", "import-writer": "src/store/sqlite/import-writer.ts" },
  format: ["esm"],
  // Declarations are skipped by `pnpm start` / `pnpm mock` (ACS_BUILD_DECLARATIONS=0): a run never reads them.
  dts: process.env.ACS_BUILD_DECLARATIONS === "0" ? false : { entry: { index: "src/index.ts", store: "src/store/index.ts", core: "src/core/index.ts", api: "src/api/index.ts" } },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
  onSuccess: async () => copySwaggerUi(),
});
