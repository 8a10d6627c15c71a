/** The shape of an AJV standalone validate function (what scripts/compile-validators.ts emits). */
export interface AjvErrorObject {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  /** Set on errors found inside `propertyNames`: the offending key. */
  propertyName?: string;
  /** Present in the `full` variant (AJV `verbose`): the failing schema object and value. */
  parentSchema?: Record<string, unknown>;
  schema?: unknown;
  data?: unknown;
}

/** The validation context (`this` of the compiled functions). */
export interface ValidationContext {
  /** Collected while validating: instance paths of legacy fields met on the way. */
  legacy: string[];
  /** The profile's release number (see profile.ts); undefined accepts every release. */
  release: number | undefined;
}

export interface StandaloneValidator {
  (this: ValidationContext | void, data: unknown): boolean;
  errors?: AjvErrorObject[] | null;
}
