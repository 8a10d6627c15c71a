import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "es2022",
  // One entry for Node and browsers: nothing Node-only may be imported from src/.
  platform: "neutral",
});
