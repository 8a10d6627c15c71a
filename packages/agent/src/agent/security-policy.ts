/**
 * The confirmation policy and the security analyzer, as OpenHands records and applies them: which
 * state fields the settings give, the risk an action is rated, whether a step's actions wait for
 * the user's confirmation, and the conversation's current policy and analyzer.
 */
import {
  SECURITY_RISKS,
  type ActionEvent,
  type ConfirmationPolicy,
  type ConfirmRisky,
  type SecurityAnalyzer,
  type SecurityRisk,
} from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import type { AgentSettings } from "../host.js";
import { ToolArgumentError, type AgentTool } from "../tools/tool.js";

/** ConfirmRisky's defaults, from the spec. */
const CONFIRM_RISKY = (openapiDocument.components as { schemas: { ConfirmRisky: { properties: { threshold: { default: NonNullable<ConfirmRisky["threshold"]> }; confirm_unknown: { default: boolean } } } } })
  .schemas.ConfirmRisky.properties;

/** A policy with only its own fields, defaults filled in: the state field as OpenHands records it. */
function normalizedPolicy(policy: ConfirmationPolicy): ConfirmationPolicy {
  if (policy.kind !== "ConfirmRisky") return { kind: policy.kind };
  return { kind: "ConfirmRisky", threshold: policy.threshold ?? CONFIRM_RISKY.threshold.default, confirm_unknown: policy.confirm_unknown ?? CONFIRM_RISKY.confirm_unknown.default };
}

/** OpenHands' confirmation policy for the settings: the state field `confirmation_policy`. */
export function confirmationPolicyOf(settings: AgentSettings): ConfirmationPolicy {
  if (!settings.confirmation_mode) return { kind: "NeverConfirm" };
  return normalizedPolicy(settings.security_analyzer === "llm" ? { kind: "ConfirmRisky" } : { kind: "AlwaysConfirm" });
}

/** The state field `security_analyzer` for the settings: the LLM rates its own actions (`llm`), or none. */
export function securityAnalyzerOf(settings: AgentSettings): SecurityAnalyzer | null {
  return settings.security_analyzer === "llm" ? { kind: "LLMSecurityAnalyzer" } : null;
}

/** ConfirmRisky's rule: UNKNOWN per `confirm_unknown`, else at or above `threshold`. */
function riskConfirmed(risk: SecurityRisk, policy: ConfirmRisky): boolean {
  if (risk === "UNKNOWN") return policy.confirm_unknown ?? CONFIRM_RISKY.confirm_unknown.default;
  return SECURITY_RISKS.indexOf(risk) >= SECURITY_RISKS.indexOf(policy.threshold ?? CONFIRM_RISKY.threshold.default);
}

/**
 * OpenHands' `_extract_security_risk` (openhands-sdk/openhands/sdk/agent/agent.py): the risk of a
 * call to `tool` from its `security_risk` argument (`raw`). It counts only when a security analyzer
 * is set (`riskRated`); a read-only tool, a call without one, or no analyzer: UNKNOWN.
 * @throws ToolArgumentError when an analyzer is set and `raw` is not a risk
 */
export function securityRiskOf(tool: Pick<AgentTool, "readOnly">, raw: unknown, riskRated: boolean): SecurityRisk {
  if (tool.readOnly || !riskRated || raw == null) return "UNKNOWN";
  if (!(SECURITY_RISKS as readonly unknown[]).includes(raw)) throw new ToolArgumentError(`'${String(raw)}' is not a valid SecurityRisk`);
  return raw as SecurityRisk;
}

/** Whether a step's actions wait for confirmation under `policy`; a lone finish or think is never held. */
export function needsConfirmation(actions: readonly ActionEvent[], policy: ConfirmationPolicy): boolean {
  if (actions.length === 0) return false;
  const only = actions.length === 1 ? actions[0]!.action?.kind : undefined;
  if (only === "FinishAction" || only === "ThinkAction") return false;
  if (policy.kind === "AlwaysConfirm") return true;
  if (policy.kind === "ConfirmRisky") return actions.some((action) => riskConfirmed(action.security_risk ?? "UNKNOWN", policy));
  return false;
}

/** The policy and analyzer a conversation resumes with (see `restoredState`). */
export interface SecurityPolicyFields {
  /** The last `confirmation_policy` recorded (OpenHands' default: NeverConfirm). */
  confirmationPolicy: ConfirmationPolicy;
  /** The settings' policy counted as applied (JSON): set once a policy was recorded, so that it stays. */
  settingsPolicy: string | undefined;
  /** The last `security_analyzer` recorded (default none). */
  securityAnalyzer: SecurityAnalyzer | null;
  /** The settings' analyzer counted as applied (JSON), as `settingsPolicy`. */
  settingsAnalyzer: string | undefined;
}

/** Records a state field that changed (a ConversationStateUpdateEvent). */
type RecordStateUpdate = (key: "confirmation_policy" | "security_analyzer", value: ConfirmationPolicy | SecurityAnalyzer | null) => Promise<unknown>;

/** A conversation's `confirmation_policy` and `security_analyzer`, each recorded when it changes. */
export class SecurityPolicyState {
  private confirmationPolicy: ConfirmationPolicy;
  /**
   * The policy the settings gave when last applied (JSON), undefined until then: a run applies the
   * settings' policy only when it differs, so one set on the conversation stays until the settings change.
   */
  private settingsPolicy: string | undefined;
  private securityAnalyzer: SecurityAnalyzer | null;
  /** The analyzer the settings gave when last applied (JSON), as {@link settingsPolicy}. */
  private settingsAnalyzer: string | undefined;

  constructor(
    restored: SecurityPolicyFields,
    private readonly recordUpdate: RecordStateUpdate,
  ) {
    this.confirmationPolicy = restored.confirmationPolicy;
    this.settingsPolicy = restored.settingsPolicy;
    this.securityAnalyzer = restored.securityAnalyzer;
    this.settingsAnalyzer = restored.settingsAnalyzer;
  }

  /** The confirmation policy in force. */
  get policy(): ConfirmationPolicy {
    return this.confirmationPolicy;
  }

  /** The LLM security analyzer: the model's `security_risk` of each action counts. */
  get llmRatesRisk(): boolean {
    return this.securityAnalyzer?.kind === "LLMSecurityAnalyzer";
  }

  /** Applies the settings' policy and analyzer where they changed since last applied. */
  async followSettings(settings: AgentSettings): Promise<void> {
    const policy = confirmationPolicyOf(settings);
    if (JSON.stringify(policy) !== this.settingsPolicy) {
      this.settingsPolicy = JSON.stringify(policy);
      await this.applyPolicy(policy);
    }
    const analyzer = securityAnalyzerOf(settings);
    if (JSON.stringify(analyzer) !== this.settingsAnalyzer) {
      this.settingsAnalyzer = JSON.stringify(analyzer);
      await this.applyAnalyzer(analyzer);
    }
  }

  /** Sets the policy; the current `settings`' one counts as applied, so that this one stays. */
  async setPolicy(policy: ConfirmationPolicy, settings: AgentSettings): Promise<void> {
    this.settingsPolicy = JSON.stringify(confirmationPolicyOf(settings));
    await this.applyPolicy(normalizedPolicy(policy));
  }

  /** Sets the analyzer (null: none), as {@link setPolicy}. */
  async setAnalyzer(analyzer: SecurityAnalyzer | null, settings: AgentSettings): Promise<void> {
    this.settingsAnalyzer = JSON.stringify(securityAnalyzerOf(settings));
    await this.applyAnalyzer(analyzer === null ? null : { kind: analyzer.kind });
  }

  private async applyPolicy(policy: ConfirmationPolicy): Promise<void> {
    if (JSON.stringify(policy) === JSON.stringify(this.confirmationPolicy)) return;
    this.confirmationPolicy = policy;
    await this.recordUpdate("confirmation_policy", policy);
  }

  private async applyAnalyzer(analyzer: SecurityAnalyzer | null): Promise<void> {
    if (JSON.stringify(analyzer) === JSON.stringify(this.securityAnalyzer)) return;
    this.securityAnalyzer = analyzer;
    await this.recordUpdate("security_analyzer", analyzer);
  }
}
