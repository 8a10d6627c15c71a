import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import react from "@vitejs/plugin-react";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

/** MSW's Service Worker script next to index.html (for `?msw`, src/msw.ts), from the installed msw: never a stale copy. */
function mockServiceWorker(): Plugin {
  return {
    name: "msw-service-worker",
    generateBundle() {
      const file = createRequire(import.meta.url).resolve("msw/mockServiceWorker.js");
      this.emitFile({ type: "asset", fileName: "mockServiceWorker.js", source: readFileSync(file, "utf8") });
    },
  };
}

// `vite build --mode msw` (into dist-msw/): the app with the mock in the page (`?msw`, src/msw.ts), for
// frontend work without an acs-mock process. The mock brings @acs-toolkit/validator (a 1 MB chunk,
// 81 kB gzipped, loaded only in that mode): that build is for development, never shipped.
export default defineConfig(({ mode }) => ({
  plugins: mode === "msw" ? [react(), mockServiceWorker()] : [react()],
  // Relative asset URLs: the built app works from any folder or static server.
  base: "./",
  build: {
    outDir: mode === "msw" ? "dist-msw" : "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: mode === "msw" ? 1100 : 500,
    rolldownOptions: {
      // This app does not validate events, so it does not install @acs-toolkit/validator, the
      // client's optional peer (an application that does not install it gets a stub from Vite). In
      // this repository the client's own devDependencies make it resolvable: keep it out as well.
      external: mode === "msw" ? [] : ["@acs-toolkit/validator"],
    },
  },
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
}));
