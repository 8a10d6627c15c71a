/**
 * The size budget of the browser entry: dist/index.js bundled the way an application's bundler
 * would (esbuild, platform browser, minified) with its dependency openapi-fetch, then gzipped.
 * `@acs-toolkit/validator` is left out: the client loads it with a dynamic import only when
 * `validate` is on, so a bundler puts it in a chunk of its own.
 *
 * `pnpm size` prints the figures and fails over budget; test/packaging.test.ts runs the same check.
 */
import { gzipSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

/** One method per operation of the spec: 9 kB holds the interface's, the agent server's and room for more. */
export const BUDGET_BYTES = 9 * 1024;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface SizeReport {
  minified: number;
  gzipped: number;
  /** Every file the bundle is made of. */
  inputs: string[];
  code: string;
}

export async function measureBrowserEntry(): Promise<SizeReport> {
  const result = await build({
    // The package by its name, resolved through its exports map (as a bundler for browsers does).
    stdin: { contents: 'export * from "@acs-toolkit/client";', resolveDir: root, loader: "js" },
    // Not the tsconfig's paths, which point the name at src/: measure what is published.
    tsconfigRaw: "{}",
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    metafile: true,
    logLevel: "silent",
    external: ["@acs-toolkit/validator"],
  });
  const code = result.outputFiles[0]!.text;
  return {
    minified: Buffer.byteLength(code),
    gzipped: gzipSync(code, { level: 9 }).length,
    inputs: Object.keys(result.metafile.inputs),
    code,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = await measureBrowserEntry();
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} kB`;
  console.log(`browser entry: ${kb(report.minified)} minified, ${kb(report.gzipped)} min+gzip (budget ${kb(BUDGET_BYTES)})`);
  for (const input of report.inputs) console.log(`  ${input}`);
  if (report.gzipped > BUDGET_BYTES) {
    console.error("over budget");
    process.exitCode = 1;
  }
}
