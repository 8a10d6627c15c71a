import { defineConfig } from "tsup";

export default defineConfig([
  {
    entry: ["src/index.ts"],
    format: ["esm", "cjs"],
    dts: true,
    // Both builds run at once: the library's clean must not remove the command's output.
    clean: ["!cli.js", "!cli.js.map"],
    sourcemap: true,
    target: "es2022",
    // One entry for Node and browsers: nothing Node-only may be imported from src/ outside src/cli/.
    platform: "neutral",
  },
  {
    // `acs-validate` (bin): Node only, one self-contained ESM file; its shebang comes from src/cli/main.ts.
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    dts: false,
    clean: false, // dist/ is cleaned by the library's build, which keeps cli.js*
    sourcemap: true,
    target: "node20",
    platform: "node",
  },
]);
