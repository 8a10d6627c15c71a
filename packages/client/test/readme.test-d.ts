/**
 * The README's examples compile (vitest's typecheck reports errors in the files a type test imports).
 * readme.test.ts runs them.
 */
import { expectTypeOf, test } from "vitest";
import type * as quickStart from "./examples/quick-start.js";
import type * as errors from "./examples/errors.js";
import type * as uploads from "./examples/uploads.js";
import type * as live from "./examples/live.js";
import type * as bulkIngest from "./examples/bulk-ingest.js";

test("the examples compile", () => {
  expectTypeOf<typeof quickStart.conversation_id>().toEqualTypeOf<string>();
  expectTypeOf<typeof errors>().toBeObject();
  expectTypeOf<typeof uploads>().toBeObject();
  expectTypeOf<typeof live>().toBeObject();
  expectTypeOf<typeof bulkIngest>().toBeObject();
});
