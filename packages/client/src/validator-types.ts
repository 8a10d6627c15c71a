/**
 * The types of `@acs-toolkit/validator` that the client's public types use. The validator is an
 * optional peer dependency, so the client's declarations must not import it: these come from its
 * declarations through the `#validator-types` alias (tsconfig.json `paths`), which tsup's
 * declaration build follows and copies into the client's own (it treats the package name as
 * external). A consumer without the validator installed still type-checks.
 */
export type { ValidateOptions, ValidationIssue } from "#validator-types";
