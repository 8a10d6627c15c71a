/**
 * The validate-events action runs acs-validate from its own checkout, with no registry: this writes
 * the built command (dist/cli.js, its chunk and the compiled validators) as one file beside the
 * action. `--check` compares a fresh bundle with the committed one instead (CI's drift check).
 *
 * Run after the validator's build: `pnpm --filter @acs-toolkit/validator run bundle:action`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const entry = path.join(packageDir, "dist/cli.js");
const target = path.resolve(packageDir, "../../.github/actions/validate-events/dist/acs-validate.mjs");
const relativeTarget = path.relative(path.resolve(packageDir, "../.."), target);
const command = "pnpm --filter @acs-toolkit/validator run bundle:action";

if (!existsSync(entry)) {
  console.error(`${path.relative(process.cwd(), entry)} is missing: build the validator first (pnpm build)`);
  process.exit(1);
}

const result = await build({
  entryPoints: [entry],
  bundle: true,
  write: false,
  platform: "node",
  format: "esm",
  target: "node20",
  // Names kept (not mangled), so that the committed file can still be read in a review of the action.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "eof",
  banner: { js: `// Generated from packages/validator by \`${command}\`: do not edit.` },
  logLevel: "error",
});
const bundle = result.outputFiles[0]!.contents;

if (process.argv.includes("--check")) {
  const committed = existsSync(target) ? readFileSync(target) : undefined;
  if (!committed || !Buffer.from(bundle).equals(committed)) {
    console.error(`${relativeTarget} does not match the validator's build: run \`${command}\` and commit the result`);
    process.exit(1);
  }
  console.log(`${relativeTarget} matches the validator's build`);
} else {
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, bundle);
  console.log(`${relativeTarget}: ${(bundle.byteLength / 1024).toFixed(0)} KiB`);
}
