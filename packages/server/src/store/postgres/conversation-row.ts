/** A row of the conversations table, and the ConversationRecord it stands for. */
import type { ConversationLifecycleStatus } from "@acs-toolkit/schema";
import type { ConversationRecord } from "../types.js";

export interface ConversationRow {
  pk: number;
  id: string;
  status: ConversationLifecycleStatus;
  created_at: string;
  updated_at: string;
  event_count: number;
  next_seq: number;
  repository: string | null;
  selected_branch: string | null;
  git_provider: ConversationRecord["gitProvider"];
  title: string | null;
  /** A JSON object's text. */
  tags: string | null;
}

export const toRecord = (row: ConversationRow): ConversationRecord => ({
  id: row.id,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  eventCount: row.event_count,
  repository: row.repository,
  selectedBranch: row.selected_branch,
  gitProvider: row.git_provider,
  title: row.title,
  tags: row.tags === null ? null : (JSON.parse(row.tags) as Record<string, string>),
});
