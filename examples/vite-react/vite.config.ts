import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [react()],
  // Relative asset URLs: the built app works from any folder or static server.
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    rolldownOptions: {
      // This app does not validate events, so it does not install @acs-toolkit/validator, the
      // client's optional peer (an application that does not install it gets a stub from Vite). In
      // this repository the client's own devDependencies make it resolvable: keep it out as well.
      external: ["@acs-toolkit/validator"],
    },
  },
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
});
