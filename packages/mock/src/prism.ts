/**
 * The parts of Prism the front uses, loaded for a fast start: the router, the security and request
 * validators (prism-http's own modules, composed by prism-core's factory, without its logger), the operations of the
 * bundled spec (Prism's transformation, cached at build time in `dist/prism-operations.json.gz` and
 * recomputed when the spec changed), and the mocker, loaded on first use (it brings the data
 * generators, about a second of loading that a start should not pay for).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import type { factory, IPrism, IPrismDiagnostic } from "@stoplight/prism-core";
import type { IHttpConfig, IHttpRequest, IHttpResponse } from "@stoplight/prism-http";
import type { IHttpOperation } from "@stoplight/types";
import { openapiDocument } from "@acs-toolkit/schema/documents";

const require = createRequire(import.meta.url);

export type { IHttpConfig, IHttpRequest, IHttpOperation, IPrismDiagnostic };
type PrismInstance = IPrism<IHttpOperation, IHttpRequest, IHttpResponse, IHttpConfig>;

/** What the validating instance hands back instead of a mocked response. */
export interface Checked {
  resource: IHttpOperation;
  validations: IPrismDiagnostic[];
}

/** Prism wants a pino-like logger with its own `success` level; the mock logs its own lines. */
const quietLogger: any = { child: () => quietLogger, success() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, level: "silent" };

export const BASE_CONFIG = { checkSecurity: true, validateRequest: true, validateResponse: false, errors: false, upstreamProxy: undefined, isProxy: false as const, mock: { dynamic: false } };

/** sha256 of the bundled OpenAPI document, the key of the operations cache. */
export function specHash(): string {
  return createHash("sha256").update(JSON.stringify(openapiDocument)).digest("hex");
}

/** Prism's operations of the bundled spec: from the build-time cache when it matches the spec. */
export async function loadOperations(cacheFile: URL | undefined = new URL("./prism-operations.json.gz", import.meta.url)): Promise<IHttpOperation[]> {
  if (cacheFile) {
    try {
      const cached = JSON.parse(gunzipSync(readFileSync(cacheFile)).toString("utf8")) as { specHash: string; operations: IHttpOperation[] };
      if (cached.specHash === specHash()) return cached.operations;
    } catch {
      // No cache (running from sources) or an unreadable one: compute.
    }
  }
  return computeOperations();
}

/** Prism's own transformation of the bundled document into operations (dereferenced). */
export async function computeOperations(): Promise<IHttpOperation[]> {
  const { getHttpOperationsFromSpec } = require("@stoplight/prism-http/dist/utils/operations") as typeof import("@stoplight/prism-http");
  return (await getHttpOperationsFromSpec(structuredClone(openapiDocument) as never)) as IHttpOperation[];
}

/**
 * Prism's router, security check and request validation, with a "mocker" that only hands back the
 * operation and the violations found (the world answers, not Prism).
 */
export function createValidatingPrism(): PrismInstance {
  // prism-core's factory alone: its index also loads Prism's pino logger, which the mock does not use.
  const { factory: createPrism } = require("@stoplight/prism-core/dist/factory") as { factory: typeof factory };
  const route = (require("@stoplight/prism-http/dist/router") as { default: PrismComponents["route"] }).default;
  const validator = require("@stoplight/prism-http/dist/validator") as Pick<PrismComponents, "validateInput" | "validateOutput" | "validateSecurity">;
  return createPrism<IHttpOperation, IHttpRequest, IHttpResponse, IHttpConfig>(BASE_CONFIG as IHttpConfig, {
    logger: quietLogger,
    route,
    validateInput: validator.validateInput,
    validateSecurity: validator.validateSecurity,
    validateOutput: validator.validateOutput,
    mock: ({ resource, input }) => () => ({ _tag: "Right", right: { statusCode: 0, body: { resource, validations: input.validations } satisfies Checked } }) as never,
    forward: () => () => async () => ({ _tag: "Left", left: new Error("the mock does not forward") }) as never,
  });
}

type PrismComponents = Parameters<typeof factory<IHttpOperation, IHttpRequest, IHttpResponse, IHttpConfig>>[1];

/** Prism's check of a response against the operation's documented responses: the errors it finds. */
export function responseViolations(resource: IHttpOperation, output: IHttpResponse): IPrismDiagnostic[] {
  const validator = require("@stoplight/prism-http/dist/validator") as Pick<PrismComponents, "validateOutput">;
  const result = validator.validateOutput({ resource, element: output }) as { _tag: string; left?: IPrismDiagnostic[] };
  return result._tag === "Left" ? (result.left ?? []).filter((d) => d.severity === 0) : [];
}

let mocking: PrismInstance | undefined;

/** Prism's complete instance (its mocker: examples and generated data), loaded on first use. */
export function mockingPrism(): PrismInstance {
  if (!mocking) {
    const { createInstance } = require("@stoplight/prism-http") as typeof import("@stoplight/prism-http");
    mocking = createInstance({ ...BASE_CONFIG, checkSecurity: false, validateRequest: false } as IHttpConfig, { logger: quietLogger });
  }
  return mocking;
}
