/** The workspace's public packages and their packed tarballs. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

interface PublicPackage {
  /** `@acs-toolkit/server` */
  name: string;
  /** `server` */
  short: string;
  dir: string;
  version: string;
  bin: Record<string, string>;
}

/** Every package of packages/ that is not private, in a stable order. */
export function publicPackages(): PublicPackage[] {
  const root = path.join(repoDir, "packages");
  return readdirSync(root)
    .sort()
    .flatMap((short) => {
      let manifest: { name: string; version: string; private?: boolean; bin?: Record<string, string> };
      try {
        manifest = JSON.parse(readFileSync(path.join(root, short, "package.json"), "utf8"));
      } catch {
        return [];
      }
      return manifest.private ? [] : [{ name: manifest.name, short, dir: path.join(root, short), version: manifest.version, bin: manifest.bin ?? {} }];
    });
}

/** Packs a package with pnpm (which turns `workspace:` ranges into versions) into `into`; returns the tarball's path. */
export function pack(pkg: PublicPackage, into: string): string {
  const output = execFileSync("pnpm", ["pack", "--pack-destination", into], { cwd: pkg.dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const tarball = output.trim().split("\n").pop()!.trim();
  return path.isAbsolute(tarball) ? tarball : path.join(into, tarball);
}

/** The files of a tarball with their sizes, read by `tar` (paths without the leading `package/`). */
export function tarballFiles(tarball: string): Array<{ file: string; size: number }> {
  const listing = execFileSync("tar", ["-tvzf", tarball], { encoding: "utf8" });
  return listing
    .trim()
    .split("\n")
    .map((line) => {
      const parts = line.trim().split(/\s+/);
      return { size: Number(parts[2]), file: parts.slice(5).join(" ").replace(/^package\//, "") };
    })
    .filter((entry) => !entry.file.endsWith("/"));
}
