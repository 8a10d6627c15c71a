import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/msw.ts", "src/cli.ts"],
  format: ["esm"],
  dts: { entry: ["src/index.ts", "src/msw.ts"] },
  clean: true,
  sourcemap: true,
  target: "node20",
  platform: "node",
});
