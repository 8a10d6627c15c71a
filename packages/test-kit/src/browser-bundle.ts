/** Bundles an entry for the browser with esbuild, recording (and leaving out) every Node-only import. */
import { builtinModules } from "node:module";
import { build, type BuildOptions } from "esbuild";

/** Node built-ins and the server's Node-only dependencies. */
const NODE_ONLY = new Set([...builtinModules, "better-sqlite3", "pg", "express", "pino", "ws", "busboy", "ajv"]);

export interface BrowserBundle {
  /** Node-only imports the graph reached, `specifier (from importer)`. */
  nodeImports: string[];
  /** The bundle's input files (relative to the working directory). */
  inputs: string[];
  /** The bundle: an IIFE that sets `globalName`. */
  code: string;
}

/** Bundles `input` (esbuild `entryPoints` or `stdin`) as an IIFE for the browser platform. */
export async function bundleForBrowser(input: Pick<BuildOptions, "entryPoints" | "stdin">, globalName: string): Promise<BrowserBundle> {
  const nodeImports: string[] = [];
  const result = await build({
    ...input,
    bundle: true,
    platform: "browser",
    format: "iife",
    globalName,
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: [
      {
        name: "no-node",
        setup(b) {
          // Anything Node-only is recorded (and left out) rather than failing the build at the first one.
          b.onResolve({ filter: /.*/ }, (args) => {
            const name = args.path.startsWith("@") ? args.path.split("/").slice(0, 2).join("/") : args.path.split("/")[0]!;
            if (!args.path.startsWith("node:") && !NODE_ONLY.has(name)) return undefined;
            nodeImports.push(`${args.path} (from ${args.importer})`);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return { nodeImports, inputs: Object.keys(result.metafile.inputs), code: new TextDecoder().decode(result.outputFiles[0]!.contents) };
}
