/** The errors a conversation's controls throw, the ones that end a run loop, and the code a failed run records. */
import { LlmError } from "../llm/types.js";

/** `run` while the agent runs (the reference answers 409 with this text). */
export class ConversationAlreadyRunningError extends Error {
  override readonly name = "ConversationAlreadyRunningError";
  constructor(readonly conversationId: string) {
    super("Conversation already running. Wait for completion or pause first.");
  }
}

/** A control called on a closed conversation. */
export class ConversationClosedError extends Error {
  override readonly name = "ConversationClosedError";
  constructor(readonly conversationId: string) {
    super(`Conversation ${conversationId} is closed.`);
  }
}

/** The run stopped at `max_budget_per_task`. */
class BudgetReached extends Error {}

/** The run stopped on an interrupt. */
export class Interrupted extends Error {}

/**
 * Stops a run whose spending reached its budget.
 * @throws BudgetReached when `spent` is at or above `budget`
 */
export function checkBudget(budget: number | null | undefined, spent: number): void {
  if (budget != null && spent >= budget) {
    throw new BudgetReached(`Agent reached maximum budget for conversation: spent $${spent.toFixed(4)}, max_budget_per_task is $${budget.toFixed(4)}.`);
  }
}

/** The code of the ConversationErrorEvent a run that failed with `error` records. */
export function failureCodeOf(error: unknown): string {
  return error instanceof LlmError ? error.code : error instanceof BudgetReached ? "MaxBudgetReached" : error instanceof Error ? error.name || "Error" : "Error";
}
