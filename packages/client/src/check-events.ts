/** The check of received events with `@acs-toolkit/validator`, which the `validate` option turns on. */
import { InvalidEventError, InvalidResponseError } from "./errors.js";
import type { OperationId } from "./types.js";
import type { ValidateOptions } from "./validator-types.js";

type ValidatorModule = typeof import("@acs-toolkit/validator");
let validatorModule: Promise<ValidatorModule> | undefined;
/**
 * The validator, an optional peer dependency, is loaded on first use only, so a client without
 * `validate` never pulls it in (nor needs it installed). The `.catch` also lets bundlers (esbuild,
 * Vite) build an application that does not install it.
 */
const loadValidator = (): Promise<ValidatorModule> =>
  (validatorModule ??= import("@acs-toolkit/validator").catch((cause: unknown) => {
    validatorModule = undefined; // an install later in the same process is picked up
    throw new Error(
      `validate: cannot load @acs-toolkit/validator, the optional peer dependency that checks events: install it beside @acs-toolkit/client (npm install @acs-toolkit/validator), or leave validate off (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
  }));

/** Rejects a page without an items array and, with `validateOptions`, its first invalid event. */
export async function checkEvents(operation: OperationId, items: unknown, validateOptions: ValidateOptions | undefined): Promise<void> {
  if (!Array.isArray(items)) throw new InvalidResponseError(operation, "the page has no items array");
  if (!validateOptions) return;
  const { validateEvent } = await loadValidator();
  items.forEach((event, index) => {
    const result = validateEvent(event, validateOptions);
    if (!result.ok) throw new InvalidEventError(operation, index, event, result.errors);
  });
}
