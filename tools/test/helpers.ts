import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const specDir = path.join(root, "spec");
export const generatedDir = path.join(root, "packages/schema/src/generated");

// Bundled documents are plain JSON trees; `any` keeps the walking code in the tests readable.
export type Json = any;

export const loadGenerated = (name: string): Json => JSON.parse(readFileSync(path.join(generatedDir, name), "utf8"));

/** Calls `visit` with every object node of `tree` and its JSON pointer. */
export function walk(tree: Json, visit: (node: Record<string, Json>, pointer: string) => void, pointer = ""): void {
  if (Array.isArray(tree)) tree.forEach((item, i) => walk(item, visit, `${pointer}/${i}`));
  else if (tree !== null && typeof tree === "object") {
    visit(tree, pointer);
    for (const [key, value] of Object.entries(tree)) {
      walk(value, visit, `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    }
  }
}

/** Every `$ref` string of `tree` with the pointer of the object holding it. */
export function refsOf(tree: Json): Array<{ ref: string; at: string }> {
  const refs: Array<{ ref: string; at: string }> = [];
  walk(tree, (node, at) => {
    if (typeof node.$ref === "string") refs.push({ ref: node.$ref, at });
  });
  return refs;
}

/** Resolves a local reference (`#/a/b`) inside `doc`; undefined when it points nowhere. */
export function resolvePointer(doc: Json, ref: string): Json {
  if (!ref.startsWith("#")) return undefined;
  const tokens = ref.slice(1).split("/").slice(1).map((t) => decodeURIComponent(t).replaceAll("~1", "/").replaceAll("~0", "~"));
  let node = doc;
  for (const token of tokens) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, token)) return undefined;
    node = node[token];
  }
  return node;
}
