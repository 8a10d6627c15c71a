/**
 * The nesting bound of JSON values. JSON.parse reads any depth, but serialising a value again
 * (JSON.stringify, structuredClone, error messages that quote it) recurses and throws a RangeError
 * at about 5,000 levels; free-form fields (unknown properties, a state update's `value`) would carry
 * that to a 500. Values deeper than MAX_JSON_DEPTH levels of arrays and objects are refused first.
 */
import type { ValidationError } from "@acs-toolkit/schema";

/** Levels of arrays and objects a JSON value may have (the outermost counts as 1). */
const MAX_JSON_DEPTH = 512;
/** Path segments a `loc` keeps of the way down to the level past the bound. */
const LOC_SEGMENTS = 8;

type Path = Array<string | number>;

interface Frame {
  value: object;
  depth: number;
  key: string | number;
  parent: Frame | undefined;
}

/** The path to the first array or object nested deeper than `maxDepth`, or undefined; iterative. */
export function findTooDeep(value: unknown, maxDepth = MAX_JSON_DEPTH): Path | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: "", parent: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > maxDepth) {
      const path: Path = [];
      for (let at: Frame | undefined = frame; at?.parent; at = at.parent) path.push(at.key);
      return path.reverse();
    }
    const entries: Iterable<[string | number, unknown]> = Array.isArray(frame.value) ? frame.value.entries() : Object.entries(frame.value);
    for (const [key, child] of entries) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return undefined;
}

/** The 422 entry of a value nested too deep: `loc` is `prefix` and the first segments of the path. */
export function tooDeepError(prefix: Path, path: Path): ValidationError {
  return {
    loc: [...prefix, ...path.slice(0, LOC_SEGMENTS)],
    msg: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep (loc shows the first ${LOC_SEGMENTS} steps of the way down)`,
    type: "value_error",
  };
}
