/**
 * Runs checks against an implementation, one after another (several write account-scoped state),
 * each with its own deadline, and collects pass / fail (with evidence) / skip (with the reason).
 */
import { CheckFailure, SkipCheck, type Check } from "./check.js";
import { CHECKS } from "./checks/index.js";
import { CheckContext, SuiteState } from "./context.js";
import { NetworkError } from "./http.js";

export type CheckStatus = "pass" | "fail" | "skip";

export interface CheckResult {
  id: string;
  title: string;
  spec: string;
  status: CheckStatus;
  /** What was seen, when the check failed. */
  evidence?: string;
  /** Why the check did not run, when it was skipped. */
  reason?: string;
  /** What a passing check counted (`110 events`), when it says. */
  note?: string;
  durationMs: number;
}

export interface ConformanceReport {
  baseUrl: string;
  startedAt: string;
  durationMs: number;
  results: CheckResult[];
  passed: number;
  failed: number;
  skipped: number;
}

export interface ConformanceOptions {
  /** Where the implementation answers, `http://127.0.0.1:3000` (a base path is kept). */
  baseUrl: string | URL;
  /** Sent as `X-Session-API-Key`. Without it the checks of authentication are skipped. */
  apiKey?: string;
  /** Run only the checks matching one of these patterns (see `matchesPattern`). */
  only?: readonly string[];
  /** Leave out the checks matching one of these patterns. */
  skip?: readonly string[];
  /** Milliseconds one check may take (and one request of it). Default 20,000. */
  timeoutMs?: number;
  /**
   * @deprecated Ignored. The suite no longer waits for a conversation to be quiet: checks judge
   * what they see between two listings of it, so an implementation whose agent records events of
   * its own at any pace needs nothing.
   */
  settleMs?: number;
  /** The checks to choose from. Default: the whole suite. */
  checks?: readonly Check[];
  /** Called as each check finishes, for streaming output. */
  onResult?: (result: CheckResult) => void;
}

/** Nothing answers at the base URL. */
export class UnreachableError extends Error {}

/** An `--only` / `--skip` pattern that names no check. */
export class UnknownPatternError extends Error {}

export const DEFAULT_TIMEOUT_MS = 20_000;
/** @deprecated The `settleMs` option is ignored. */
export const DEFAULT_SETTLE_MS = 0;

/**
 * A pattern matches a check by its id (`search.filter.kind`), a group prefix of it (`search`,
 * `search.filter`), a glob (`*.timestamp-*`) or a capability it needs (`websocket`, `append`).
 */
export function matchesPattern(check: Check, pattern: string): boolean {
  if (check.id === pattern || check.id.startsWith(`${pattern}.`)) return true;
  if (check.needs?.includes(pattern as never)) return true;
  if (!pattern.includes("*")) return false;
  const glob = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return glob.test(check.id);
}

/**
 * The checks that `only` and `skip` select, in suite order.
 * @throws UnknownPatternError when a pattern matches no check (a typo would otherwise pass silently)
 */
export function selectChecks(checks: readonly Check[], only: readonly string[] = [], skip: readonly string[] = []): Check[] {
  for (const pattern of [...only, ...skip]) {
    if (!checks.some((check) => matchesPattern(check, pattern))) throw new UnknownPatternError(`no check matches "${pattern}"`);
  }
  return checks.filter((check) => (only.length === 0 || only.some((p) => matchesPattern(check, p))) && !skip.some((p) => matchesPattern(check, p)));
}

async function runOne(suite: SuiteState, check: Check, timeoutMs: number): Promise<Omit<CheckResult, "id" | "title" | "spec" | "durationMs">> {
  const controller = new AbortController();
  const ctx = new CheckContext(suite, controller.signal);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new CheckFailure(`did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const outcome = await Promise.race([
      (async () => {
        for (const need of check.needs ?? []) {
          const missing = await ctx.capability(need);
          if (missing) throw new SkipCheck(missing);
        }
        return check.run(ctx);
      })(),
      deadline,
    ]);
    return { status: "pass", ...(typeof outcome === "string" && { note: outcome }) };
  } catch (error) {
    if (error instanceof SkipCheck) return { status: "skip", reason: error.reason };
    if (error instanceof CheckFailure) return { status: "fail", evidence: error.evidence };
    if (error instanceof NetworkError) return { status: "fail", evidence: error.message };
    // Anything else: the answers did not have the shape the check relies on (or the suite has a bug); say what broke.
    return { status: "fail", evidence: `${(error as Error).name}: ${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
    ctx.dispose();
  }
}

/**
 * Runs the conformance suite against a running implementation.
 *
 * @example
 * const report = await runConformance({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
 * console.log(`${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`);
 *
 * @throws UnreachableError when nothing answers at `baseUrl`
 * @throws UnknownPatternError when an `only` or `skip` pattern matches no check
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const checks = selectChecks(options.checks ?? CHECKS, options.only, options.skip);
  const baseUrl = new URL(options.baseUrl);
  const suite = new SuiteState(baseUrl, options.apiKey, timeoutMs);
  const startedAt = new Date();
  try {
    await suite.http.request("GET", "/health", { key: null });
  } catch (error) {
    throw new UnreachableError(`nothing answers at ${baseUrl.href}: ${(error as Error).message}`);
  }
  const results: CheckResult[] = [];
  for (const check of checks) {
    const start = performance.now();
    const outcome = await runOne(suite, check, timeoutMs);
    const result: CheckResult = { id: check.id, title: check.title, spec: check.spec, ...outcome, durationMs: Math.round(performance.now() - start) };
    results.push(result);
    options.onResult?.(result);
  }
  const count = (status: CheckStatus) => results.filter((r) => r.status === status).length;
  return {
    baseUrl: baseUrl.href,
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    results,
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip"),
  };
}
